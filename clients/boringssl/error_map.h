// BoringSSL's errors onto the lab's details (OpenSSL 3.0's numbering), the mapping profile.toml's
// [error_map] records. A verification failure is the X509_V_ERR_* SSL_get_verify_result says, in
// OpenSSL 3.0's number where BoringSSL's differs; a queued SSL error is ERR_PACK(ERR_LIB_SSL, the
// OpenSSL reason of the same name) (ssl_reasons.inc), an alert received 1000 + the alert as in both;
// a reason OpenSSL does not name is ERR_PACK(ERR_LIB_USER, BoringSSL's packed lib * 1000 + reason).
#pragma once

#include "client/outcome.h"

namespace tlsboring {

using tlsnb::Outcome;
using tlsnb::Stage;

// What a failed call left: SSL_get_error's code, the first queued error, the socket's errno (0:
// none), the verify result.
struct Failure {
  Stage stage;
  int ssl_error;
  unsigned long queued;
  int saved_errno;
  long verify_result;
  bool name_is_ip;
};

Outcome boring_outcome(const Failure& f);

}  // namespace tlsboring
