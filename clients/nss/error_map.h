// NSS's errors (PR_GetError: SEC_ERROR_*, SSL_ERROR_*, PR_*) onto the lab's details (OpenSSL's
// numbering), the mapping profile.toml's [error_map] records: a verification failure onto the
// X509_V_ERR_* of the same meaning, an alert received onto the packed SSL_R_ alert code, an NSPR
// socket error onto its errno, a few protocol refusals onto OpenSSL's SSL_R_; any other code
// ERR_PACK(ERR_LIB_USER, -code & 0xffff) with NSS's name in the text.
#pragma once

#include "client/outcome.h"

namespace tlsnss {

using tlsnb::Outcome;
using tlsnb::Stage;

// What the peer's leaf says where NSS's code does not: read by the attempt after a failed handshake.
struct Leaf {
  bool self_issued = false;    // subject == issuer: NSS's CA_CERT_INVALID / UNKNOWN_ISSUER is OpenSSL's 18
  bool not_yet_valid = false;  // notBefore in the future: NSS's EXPIRED_CERTIFICATE is OpenSSL's 9
};

// After an NSS call failed with PR_GetError() == `code` (PR_GetOSError() `os_error`) in `stage`.
Outcome nss_outcome(Stage stage, long code, int os_error, bool name_is_ip, const Leaf& leaf = {});

}  // namespace tlsnss
