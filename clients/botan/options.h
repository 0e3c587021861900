// The command line of tlsnb-botan: the contract's (clients/contract/contract_options.h), with the
// flags Botan 2 or this client cannot honour named (exit 89), parsed without I/O.
#pragma once

#include <string>
#include <vector>

#include "clients/contract/contract_options.h"

namespace tlsbotan {

using contract::Options;

contract::ParseResult parse_options(const std::vector<std::string>& args);
const char* usage();

}  // namespace tlsbotan
