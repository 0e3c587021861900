// The command line of tlsnb-wolfssl: the contract's (clients/contract/contract_options.h), with
// the flags wolfSSL or this client cannot honour named (exit 89), parsed without I/O.
#pragma once

#include <string>
#include <vector>

#include "clients/contract/contract_options.h"

namespace tlswolf {

using contract::Options;
using contract::Transport;

contract::ParseResult parse_options(const std::vector<std::string>& args);
const char* usage();

}  // namespace tlswolf
