// BearSSL's error codes onto the lab's details (OpenSSL's numbering), the mapping profile.toml's
// [error_map] records. BearSSL has no error strings: detail_text carries the macro's name and
// number. X.509 codes (32..63) are a failed verification: X509_V_ERR_* numbers, several of them
// many-to-one (lossy, said in the profile); SSL codes become the packed SSL_R_* of the same
// meaning where OpenSSL has one, a received alert ERR_PACK(ERR_LIB_SSL, 1000 + alert), any other
// ERR_PACK(ERR_LIB_USER, code) (the lab names it ERR_128_<code>).
#pragma once

#include <string>

#include "chain_check.h"
#include "client/outcome.h"

namespace tlsbear {

using tlsnb::Outcome;
using tlsnb::Stage;

// "BR_ERR_X509_EXPIRED (54)", "BR_ERR_RECV_FATAL_ALERT + 40 (296)".
std::string error_text(int err);

// The engine closed with br_ssl_engine_last_error `err` != 0 while `stage` ran.
Outcome engine_outcome(Stage stage, int err, const ChainCheck& check, bool name_is_ip);

}  // namespace tlsbear
