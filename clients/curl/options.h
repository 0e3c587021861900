// tlsnb-curl's command line: the lab's contract (clients/README.md), parsed into Options.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tlsnb_curl {

enum class SigpipeMode { leave, default_action, ignore };

struct Options {
  std::string target;      // TARGET of TARGET:PORT (an IPv4 literal or a name)
  uint16_t port = 0;
  std::string name;        // --name: certificate name and SNI (default TARGET)
  std::string connect_ip;  // --connect
  std::string cafile;
  bool verify = true;
  bool system_trust = false;
  bool partial_chain = false;
  long count = 1;
  long parallel = 64;
  long requests = 1;
  long body = 0;
  uint32_t seed = 1;
  long deadline_ms = 2000;
  int tls_max = 13;  // 12 or 13
  bool json = false;
  bool resume = false;
  long hold_ms = 0;
  SigpipeMode sigpipe = SigpipeMode::leave;
  bool transport_fd = false;  // --transport fd: asked for, cannot be had (exit 89)
  std::string name_alabel;  // NAME as libcurl sends it (IDNA A-label via libidn2), filled in by main

  // The IPv4 literal dialled: --connect, else TARGET when it is a literal.
  std::string dial_ip() const;
};

// exit 0 with --help, 2 for bad usage, 89 for what this client cannot do.
struct ParseResult {
  int exit_code = 0;  // meaningful when !ok
  bool ok = false;
  bool help = false;
  std::string error;  // the one stderr line
  Options options;
};

ParseResult parse_options(const std::vector<std::string>& args);
bool is_ipv4(const std::string& text);
const char* usage();

}  // namespace tlsnb_curl
