// The command line of tlsnb-gnutls: the contract's (clients/contract/contract_options.h), with
// the flags GnuTLS or this client cannot honour named (exit 89), parsed without I/O.
#pragma once

#include <string>
#include <vector>

#include "clients/contract/contract_options.h"

namespace tlsgnu {

using contract::Options;
using contract::Transport;

contract::ParseResult parse_options(const std::vector<std::string>& args);
const char* usage();

}  // namespace tlsgnu
