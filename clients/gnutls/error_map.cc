#include "error_map.h"

#include <cstring>

#include "peer_chain.h"

namespace tlsgnu {

namespace {

// GnuTLS codes with an OpenSSL reason of the same meaning (packed with ERR_LIB_SSL), any stage.
struct Same {
  int gnutls;
  long ssl_reason;
};
constexpr Same same_meaning[] = {
    {GNUTLS_E_UNSUPPORTED_VERSION_PACKET, 258},   // SSL_R_UNSUPPORTED_PROTOCOL: the server chose TLS 1.0/1.1
    {GNUTLS_E_UNEXPECTED_PACKET_LENGTH, 159},     // SSL_R_LENGTH_MISMATCH: a message shorter than its lengths
    {GNUTLS_E_UNEXPECTED_PACKET, 245},            // SSL_R_UNEXPECTED_RECORD (the handshake: see below)
    {GNUTLS_E_UNKNOWN_CIPHER_SUITE, 261},         // SSL_R_WRONG_CIPHER_RETURNED
    {GNUTLS_E_NO_CIPHER_SUITES, 181},             // SSL_R_NO_CIPHERS_AVAILABLE
    {GNUTLS_E_DECRYPTION_FAILED, 281},            // SSL_R_DECRYPTION_FAILED_OR_BAD_RECORD_MAC
    {GNUTLS_E_UNEXPECTED_HANDSHAKE_PACKET, 244},  // SSL_R_UNEXPECTED_MESSAGE
    {GNUTLS_E_PK_SIG_VERIFY_FAILED, 123},         // SSL_R_BAD_SIGNATURE
    {GNUTLS_E_INAPPROPRIATE_FALLBACK, 373},       // SSL_R_INAPPROPRIATE_FALLBACK
    {GNUTLS_E_RECORD_OVERFLOW, 198},              // SSL_R_PACKET_LENGTH_TOO_LONG
};

using contract::ssl_r_wrong_version_number;

std::string status_text(unsigned int status) {
  gnutls_datum_t out{nullptr, 0};
  if (gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &out, 0) < 0) return "";
  std::string text(reinterpret_cast<const char*>(out.data), out.size);
  gnutls_free(out.data);
  return text;
}

std::string with_errno(int err, int saved_errno) {
  std::string text = gnutls_strerror(err);
  if (saved_errno != 0) text += std::string(" (") + std::strerror(saved_errno) + ")";
  return text;
}

struct Verdict {
  long detail;
  int depth;
};

// The status bits in the order OpenSSL's verify_chain meets their problems: building the chain,
// check_extensions (critical extensions, CA, purpose, path length), check_auth_level (keys and
// digests), check_id (the name), revocation, internal_verify (signatures, then validity
// periods), check_name_constraints. The first one found wins.
Verdict judge(unsigned int status, const PeerChain& chain, bool name_is_ip) {
  auto has = [status](unsigned int bit) { return (status & bit) != 0; };
  int constraint_depth = -1;
  long constraint = has(GNUTLS_CERT_SIGNER_CONSTRAINTS_FAILURE) ? chain.constraint_problem(&constraint_depth) : 0;
  if (has(GNUTLS_CERT_SIGNER_NOT_FOUND)) {
    int top = chain.length() > 0 ? chain.length() - 1 : -1;
    if (!chain.ends_self_issued()) return {x509::unable_to_get_issuer_locally, top};
    return {chain.length() == 1 ? x509::depth_zero_self_signed : x509::self_signed_in_chain, top};
  }
  if (has(GNUTLS_CERT_UNKNOWN_CRIT_EXTENSIONS)) return {x509::unhandled_critical_extension, -1};
  if (has(GNUTLS_CERT_SIGNER_NOT_CA)) return {x509::invalid_ca, chain.not_ca_depth()};
  if (constraint == x509::invalid_ca) return {constraint, constraint_depth};
  if (has(GNUTLS_CERT_PURPOSE_MISMATCH)) return {x509::invalid_purpose, chain.purpose_depth()};
  if (constraint == x509::path_length_exceeded) return {constraint, constraint_depth};
  if (has(GNUTLS_CERT_INSECURE_ALGORITHM)) {
    bool key = false;
    int depth = chain.first_weak(&key);
    if (depth >= 0 && key) return {depth == 0 ? x509::ee_key_too_small : x509::ca_key_too_small, depth};
    return {x509::ca_md_too_weak, depth};
  }
  if (has(GNUTLS_CERT_UNEXPECTED_OWNER)) return {name_is_ip ? x509::ip_address_mismatch : x509::hostname_mismatch, 0};
  if (has(GNUTLS_CERT_REVOKED)) return {x509::revoked, -1};
  // Revocation data GnuTLS holds but cannot use: a CRL past its nextUpdate (or an OCSP response past
  // its own), one issued in the future; a stapled response it could not verify; none where the leaf
  // requires one (must-staple) or the adapter does (--ocsp-staple require: attempt.cc).
  if (has(GNUTLS_CERT_REVOCATION_DATA_SUPERSEDED)) return {x509::crl_has_expired, -1};
  if (has(GNUTLS_CERT_REVOCATION_DATA_ISSUED_IN_FUTURE)) return {x509::crl_not_yet_valid, -1};
  if (has(GNUTLS_CERT_INVALID_OCSP_STATUS)) return {x509::ocsp_verify_failed, 0};
  if (has(GNUTLS_CERT_MISSING_OCSP_STATUS)) return {x509::ocsp_verify_needed, 0};
  if (has(GNUTLS_CERT_SIGNATURE_FAILURE)) return {x509::signature_failure, -1};
  if (has(GNUTLS_CERT_NOT_ACTIVATED)) return {x509::not_yet_valid, chain.time_error_depth(false)};
  if (has(GNUTLS_CERT_EXPIRED)) return {x509::expired, chain.time_error_depth(true)};
  if (has(GNUTLS_CERT_SIGNER_CONSTRAINTS_FAILURE))  // name constraints, or a cause not found above
    return {constraint != 0 ? constraint : x509::permitted_violation, constraint_depth};
  return {x509::unspecified, -1};  // GNUTLS_CERT_INVALID alone, or a bit OpenSSL has no reason for
}

}  // namespace

long packed_detail(int err) {
  for (const Same& s : same_meaning)
    if (s.gnutls == err) return packed(err_lib_ssl, s.ssl_reason);
  return packed(err_lib_user, -static_cast<long>(err));
}

Outcome verify_outcome(gnutls_session_t session, gnutls_certificate_credentials_t credentials, int err,
                       unsigned int status, bool name_is_ip) {
  PeerChain chain(session, credentials);
  Verdict v = judge(status, chain, name_is_ip);
  Outcome o = make_outcome(Stage::handshake, v.detail, std::string(gnutls_strerror(err)) + ": " + status_text(status));
  o.verify_depth = v.depth;
  return o;
}

Outcome gnutls_outcome(Stage stage, gnutls_session_t session, int err, int saved_errno) {
  if (err == GNUTLS_E_FATAL_ALERT_RECEIVED) {
    auto alert = static_cast<long>(gnutls_alert_get(session));
    const char* name = gnutls_alert_get_name(static_cast<gnutls_alert_description_t>(alert));
    return make_outcome(stage, packed(err_lib_ssl, ssl_ad_reason_offset + alert),
                        std::string(gnutls_strerror(err)) + ": " + (name != nullptr ? name : "unknown alert"));
  }
  bool io = err == GNUTLS_E_PULL_ERROR || err == GNUTLS_E_PUSH_ERROR;
  if (stage == Stage::handshake) {
    // The peer went away mid-handshake (FIN, RST, EPIPE) without an alert: the lab's -1.
    if (err == GNUTLS_E_PREMATURE_TERMINATION || io)
      return make_outcome(stage, details::peer_closed, with_errno(err, saved_errno));
    if (err == GNUTLS_E_SESSION_EOF)  // close_notify before the handshake ended (OpenSSL: ZERO_RETURN, 0)
      return make_outcome(stage, details::early_close_notify, gnutls_strerror(err));
    // A record that is not TLS at all (a plaintext peer: GnuTLS rejects its content type first,
    // OpenSSL its version bytes first): OpenSSL's WRONG_VERSION_NUMBER.
    if (err == GNUTLS_E_UNEXPECTED_PACKET)
      return make_outcome(stage, packed(err_lib_ssl, ssl_r_wrong_version_number), gnutls_strerror(err));
    // The leaf's key usage forbids what the handshake needs (TLS 1.3 signing with a certSign-only
    // key): OpenSSL's purpose check says X509_V_ERR_INVALID_PURPOSE.
    if (err == GNUTLS_E_KEY_USAGE_VIOLATION) {
      Outcome o = make_outcome(stage, x509::invalid_purpose, gnutls_strerror(err));
      o.verify_depth = 0;
      return o;
    }
  } else {
    if (err == GNUTLS_E_PREMATURE_TERMINATION) return make_outcome(stage, details::peer_closed, gnutls_strerror(err));
    if (io && saved_errno != 0) return make_outcome(stage, saved_errno, with_errno(err, saved_errno));
    if (io) return make_outcome(stage, details::peer_closed, gnutls_strerror(err));
    if (err == GNUTLS_E_SESSION_EOF) return make_outcome(stage, details::early_close_notify, gnutls_strerror(err));
  }
  return make_outcome(stage, packed_detail(err), gnutls_strerror(err));
}

}  // namespace tlsgnu
