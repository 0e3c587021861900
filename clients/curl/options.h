// tlsnb-curl's command line: the contract's (clients/contract/contract_options.h), with what
// libcurl cannot do named (exit 89) and the CA file checked (exit 2), before any connection.
#pragma once

#include <string>
#include <vector>

#include "clients/contract/contract_options.h"

namespace tlsnb_curl {

using contract::ParseResult;

// The contract's options, and what main learns of the name before the first connection.
struct Options : contract::Options {
  std::string name_alabel;  // NAME as libcurl sends it (IDNA A-label via libidn2), filled in by main
};

ParseResult parse_options(const std::vector<std::string>& args);
const char* usage();

}  // namespace tlsnb_curl
