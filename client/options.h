// The tlsnb command line (DESIGN.md, "The tlsnb CLI contract"), parsed into Options or one error line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tlsnb {

enum class TransportKind { bio, fd };

struct Options {
  std::string target;        // TARGET of TARGET:PORT: an IP literal or a name
  uint16_t port = 0;
  std::string name;          // what the certificate must carry; SNI (default: target)
  std::string connect_ip;    // --connect: dial this, target is then only the name
  std::string ns_ip;         // --ns: resolve the name over DNS with this server
  uint16_t ns_port = 0;
  bool ns_udp = false;       // --dns-udp: UDP first, TCP when truncated
  long dns_timeout_ms = 1000;  // a lookup's own deadline (lookup/-203 timeout)
  bool allow_private = false;
  std::string cafile;
  bool system_trust = false;
  bool verify = true;
  bool partial_chain = false;
  int verify_depth = -1;     // -1: OpenSSL's default
  int tls_max = 0;           // 0: highest; else TLS1_2_VERSION / TLS1_3_VERSION
  TransportKind transport = TransportKind::bio;
  bool sigpipe_ignore = false;
  long count = 1;
  long parallel = 64;
  long requests = 1;
  long body = 0;
  long deadline_ms = 2000;
  bool resume = false;
  long hold_ms = 0;
  bool json = false;
  uint32_t seed = 1;

  bool target_is_ip() const;
  // The address to dial when no lookup is needed ("" when the name must be resolved).
  std::string dial_literal() const;
};

struct ParseResult {
  std::optional<Options> options;
  std::string error;   // one line, when options is empty
  bool help = false;   // --help: print usage() and exit 0
};

ParseResult parse_options(const std::vector<std::string>& args);
const char* usage();

}  // namespace tlsnb
