// Every attempt ends in exactly one Outcome: the lab's stages, details and helpers are the
// reference's (client/outcome.h, one copy); what this client's setup can fail at is its own.
#pragma once

#include <string>

#include "client/outcome.h"

namespace tlsgnu {

using tlsnb::errno_outcome;
using tlsnb::make_outcome;
using tlsnb::Outcome;
using tlsnb::Stage;
using tlsnb::stage_name;
namespace details = tlsnb::details;

// What could not be made (stage setup).
enum class SetupFailure : long {
  session_init = 1,   // gnutls_init
  priority = 2,       // gnutls_priority_set
  socket = 3,         // 3, 7, 8: clients/contract's BaseSetup, the same in every adapter
  credentials = 4,    // gnutls_credentials_set
  verify_name = 5,    // unused: gnutls_session_set_verify_cert2 returns nothing to fail on
  sni = 6,            // gnutls_server_name_set
  epoll = 7,
  out_of_memory = 8,
  context = 9,        // the run's credentials or priority cache
  session_data = 10,  // gnutls_session_set_data
};

Outcome setup_outcome(SetupFailure what, const std::string& why = "");

}  // namespace tlsgnu
