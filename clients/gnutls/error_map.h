// GnuTLS's errors and verification status onto the lab's details (OpenSSL's numbering), the
// mapping profile.toml's [error_map] records. A GnuTLS code is never put in a detail as it is
// (negative details are the lab's own): one with an OpenSSL counterpart becomes that packed
// SSL_R_* code, any other ERR_PACK(ERR_LIB_USER, -code) (the lab names it ERR_128_<-code>).
#pragma once

#include <gnutls/gnutls.h>

#include "clients/contract/openssl_codes.h"
#include "outcome.h"

namespace tlsgnu {

namespace x509 = contract::x509;  // OpenSSL's numbers: clients/contract/openssl_codes.h
using contract::err_lib_ssl;
using contract::err_lib_user;
using contract::packed;
using contract::ssl_ad_reason_offset;

// A failed verification: GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR and the session's status.
Outcome verify_outcome(gnutls_session_t session, gnutls_certificate_credentials_t credentials, int err,
                       unsigned int status, bool name_is_ip);
// Any other error of a GnuTLS call made in `stage`; `saved_errno` is the socket's errno (0: none).
Outcome gnutls_outcome(Stage stage, gnutls_session_t session, int err, int saved_errno);
// What a GnuTLS error code becomes when it has no stage-specific meaning.
long packed_detail(int err);

}  // namespace tlsgnu
