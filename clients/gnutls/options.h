// The command line of tlsnb-gnutls: the lab's contract (clients/README.md), parsed without I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tlsgnu {

// How ciphertext reaches the socket.
//   callbacks: the program's push/pull functions (sendmsg with MSG_NOSIGNAL, recv), the default;
//   library:   GnuTLS's own socket I/O (gnutls_transport_set_int: its system_writev / system_read).
enum class Transport { callbacks, library };

// What the program does with SIGPIPE: leave it as inherited, restore SIG_DFL, or ignore it.
enum class SigpipeMode { inherit, default_action, ignore };

struct Options {
  std::string target;       // TARGET of TARGET:PORT (a name or an IPv4 literal)
  uint16_t port = 0;
  std::string name;         // what the certificate must carry; the SNI when it is a name
  std::string connect_ip;   // --connect
  std::string cafile;
  bool system_trust = false;
  bool verify = true;
  bool partial_chain = false;  // accepted: GnuTLS always ends a chain at the first trusted certificate
  long count = 1;
  long parallel = 64;
  long requests = 1;
  long body = 0;
  uint32_t seed = 1;
  long deadline_ms = 2000;
  int tls_max = 13;         // 12 or 13
  bool json = false;
  bool resume = false;
  long hold_ms = 0;
  Transport transport = Transport::callbacks;
  SigpipeMode sigpipe = SigpipeMode::inherit;

  bool name_is_ip() const;
  std::string dial_ip() const;  // --connect, else TARGET (an IPv4 literal)
};

struct ParseResult {
  std::optional<Options> options;
  bool help = false;
  std::string error;        // bad usage: exit 2
  std::string unsupported;  // a flag of the contract this client does not have: exit 89
};

ParseResult parse_options(const std::vector<std::string>& args);
bool is_ipv4(const std::string& text);
const char* usage();

}  // namespace tlsgnu
