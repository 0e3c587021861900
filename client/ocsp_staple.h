// The stapled OCSP response (--ocsp-staple check|require), judged by the client itself:
// OpenSSL asks for it but never verifies it (gaps/staple_not_verified). Called by OpenSSL's
// status callback once the server's chain has verified. A resumed session is accepted as it
// is: TLS 1.2 resumption does not run the callback, TLS 1.3's runs it with no staple
// (gaps/status_cb_not_on_resumption), and a session exists only after a full handshake whose
// staple passed (client/tests/client.toml staple-resumed).
#pragma once

#include <openssl/ssl.h>

#include "run_config.h"

namespace tlsnb {

// The seconds thisUpdate may lie ahead of, and nextUpdate behind, the clock.
constexpr long staple_clock_skew_s = 300;

// 1: accept; 0: refuse (the handshake fails). A refusal records an X509_V_ERR_ in the
// connection's VerifyRecord (revoked 23, unknown 75, none came 73) or leaves an OCSP_R_
// reason on the error queue (a staple that does not verify, a stale one, one for another
// certificate). A must-staple leaf (TLS Feature status_request) turns check into require.
int judge_staple(SSL* ssl, StaplePolicy policy);

// Whether the certificate carries the TLS Feature extension with status_request (RFC 7633).
bool must_staple(X509* cert);

// Leaves one entry on OpenSSL's error queue in place of all of it: the first OCSP reason, else
// the first error (an empty queue stays empty). Returns 0, judge_staple's refusal.
int refuse_with_one_reason();

}  // namespace tlsnb
