// Botan's errors and path-validation statuses onto the lab's details (OpenSSL's numbering), the
// mapping profile.toml's [error_map] records. A Certificate_Status_Code becomes the X509_V_ERR_*
// number of the same meaning, where there is one; an alert the peer sent, ERR_PACK(ERR_LIB_SSL,
// 1000 + alert) as OpenSSL reports it; an error Botan found itself (a TLS_Exception naming the
// alert it sent), OpenSSL's reason of the same meaning where there is one, else
// ERR_PACK(ERR_LIB_USER, 256 + alert) (ERR_128_<256 + alert>).
#pragma once

#include <botan/tls_alert.h>
#include <botan/x509path.h>

#include <string>

#include "client/outcome.h"

namespace tlsbotan {

using tlsnb::Outcome;
using tlsnb::Stage;

// A failed x509_path_validate as the handshake's outcome: the first status in OpenSSL's order of
// checks, at the depth Botan saw it; a chain Botan could not build has only its overall status
// (`sent`: how many certificates the peer sent).
Outcome verify_outcome(const Botan::Path_Validation_Result& result, size_t sent, bool name_is_ip);
// A fatal alert the peer sent (close_notify included), read in `stage`.
Outcome peer_alert_outcome(Stage stage, Botan::TLS::Alert::Type type);
// A TLS_Exception Botan threw from received_data (it has sent that alert itself).
Outcome local_alert_outcome(Stage stage, Botan::TLS::Alert::Type type, const std::string& what);
// A failed recv or send (errno `err`; 0: the peer's FIN) in `stage`.
Outcome socket_outcome(Stage stage, int err, bool sending);

}  // namespace tlsbotan
