// wolfSSL's errors onto the lab's details (OpenSSL's numbering), the mapping profile.toml's
// [error_map] records. A verification failure is the X509_V_ERR_* wolfSSL's OpenSSL layer sets
// (wolfSSL_get_verify_result) when it set one, else the native code's nearest; an alert received
// is the packed SSL_R_ alert code; any other code ERR_PACK(ERR_LIB_USER, -code).
#pragma once

#include <wolfssl/options.h>
#include <wolfssl/ssl.h>

#include "client/outcome.h"

namespace tlswolf {

using tlsnb::Outcome;
using tlsnb::Stage;

// After a wolfSSL call failed with wolfSSL_get_error() == `err` in `stage`; `saved_errno` the
// socket's errno (0: none).
Outcome wolf_outcome(Stage stage, WOLFSSL* ssl, int err, int saved_errno, bool name_is_ip);

}  // namespace tlswolf
