// The tlslab-proxy command line, parsed into Options or one error line (exit 2).
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fault_spec.h"

namespace tlsproxy {

struct Options {
  sockaddr_in listen{};      // --listen (default 127.0.0.1:0)
  sockaddr_in upstream{};    // --upstream, required
  std::vector<FaultSpec> faults;
  long only_conn = -1;       // --only-conn: the connection faults without conn= apply to
  uint64_t seed = 0;
  bool seed_given = false;
  long max_conns = 1024;     // connections relayed at once; past it a new one is closed at accept
};

struct ParseResult {
  std::optional<Options> options;
  std::string error;   // one line, when options is empty
  bool help = false;
};

ParseResult parse_options(const std::vector<std::string>& args);
std::string usage();

// "A.B.C.D:PORT" (an IPv4 literal, PORT in lo..65535).
std::optional<sockaddr_in> parse_address(const std::string& text, long lowest_port);

}  // namespace tlsproxy
