// Mbed TLS's errors and verification flags onto the lab's details (OpenSSL's numbering), the
// mapping profile.toml's [error_map] records. An Mbed TLS code is never put in a detail as it is
// (negative details are the lab's own): one with an OpenSSL counterpart becomes that packed
// SSL_R_* code or X509_V_ERR_* number, any other ERR_PACK(ERR_LIB_USER, -code) (ERR_128_<-code>).
#pragma once

#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>

#include <cstdint>

#include "client/outcome.h"

namespace tlsmbed {

using tlsnb::Outcome;
using tlsnb::Stage;

// What the verify callback saw of the chain Mbed TLS built: each certificate's flags by depth and
// whether the top one (the deepest depth) is self-issued. Filled during the handshake.
struct ChainSeen {
  static constexpr int max_depth = 16;
  uint32_t flags_at[max_depth] = {};
  int top = -1;
  bool top_self_issued = false;
  bool match_name = true;  // false: --no-verify-name, the leaf's name mismatch is not a failure
};
// The per-attempt verify callback (mbedtls_ssl_set_verify) that fills a ChainSeen. The one flag it
// changes: the leaf's BADCERT_CN_MISMATCH when the name is not to be matched. 2.28 ties the SNI and
// the name checked to one mbedtls_ssl_set_hostname; without it no name is matched, and no SNI sent.
int see_certificate(void* chain_seen, mbedtls_x509_crt* crt, int depth, uint32_t* flags);

// A failed verification: the flags of mbedtls_ssl_get_verify_result and what the callback saw.
Outcome verify_outcome(const ChainSeen& seen, int err, uint32_t flags, bool name_is_ip);
// Any other error of an Mbed TLS call made in `stage`; `saved_errno` the socket's errno (0: none).
Outcome mbed_outcome(Stage stage, const mbedtls_ssl_context* ssl, int err, int saved_errno);

}  // namespace tlsmbed
