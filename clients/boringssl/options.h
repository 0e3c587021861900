// The command line of tlsnb-boringssl: the contract's (clients/contract/contract_options.h), with
// the flags BoringSSL or this client cannot honour named (exit 89), parsed without I/O.
#pragma once

#include <string>
#include <vector>

#include "clients/contract/contract_options.h"

namespace tlsboring {

using contract::Options;
using contract::Transport;

contract::ParseResult parse_options(const std::vector<std::string>& args);
const char* usage();

}  // namespace tlsboring
