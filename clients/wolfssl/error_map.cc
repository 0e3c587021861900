#include "error_map.h"

#include <wolfssl/error-ssl.h>
#include <wolfssl/wolfcrypt/error-crypt.h>

#include <cstring>
#include <string>

#include "clients/contract/openssl_codes.h"
#include "tls_config.h"

namespace tlswolf {

namespace {

namespace details = tlsnb::details;
namespace x509 = contract::x509;
using contract::err_lib_ssl;
using contract::err_lib_user;
using contract::packed;
using contract::ssl_ad_reason_offset;
using tlsnb::make_outcome;

// Native verification codes with an X509_V_ERR_* of the same meaning, for when wolfSSL's OpenSSL
// layer set no verify result.
struct Same {
  int wolf;
  long detail;
};
constexpr Same verify_codes[] = {
    {ASN_CRIT_EXT_E, x509::unhandled_critical_extension}, {ASN_NAME_INVALID_E, x509::permitted_violation},
    {EXTKEYUSE_AUTH_E, x509::invalid_purpose},
    {ASN_NO_SIGNER_E, x509::unable_to_get_issuer_locally}, {ASN_AFTER_DATE_E, x509::expired},
    {ASN_BEFORE_DATE_E, x509::not_yet_valid},              {ASN_SIG_CONFIRM_E, x509::signature_failure},
    {ASN_SELF_SIGNED_E, x509::depth_zero_self_signed},     {CRL_CERT_REVOKED, x509::revoked},
    {CRL_MISSING, 3 /* UNABLE_TO_GET_CRL */},              {OCSP_CERT_REVOKED, x509::revoked},
    {OCSP_CERT_UNKNOWN, 75 /* OCSP_CERT_UNKNOWN */},       {OCSP_INVALID_STATUS, x509::ocsp_verify_failed},
    {ASN_PATHLEN_INV_E, x509::path_length_exceeded},       {EXTKEYUSAGE_E, x509::invalid_purpose},
    {KEYUSE_SIGNATURE_E, x509::invalid_purpose},
};

constexpr Same ssl_codes[] = {
    {VERSION_ERROR, contract::ssl_r_wrong_version_number},
    {MATCH_SUITE_ERROR, 181},  // SSL_R_NO_CIPHERS_AVAILABLE
};

std::string with_errno(int err, int saved_errno) {
  std::string text = wolf_text(err);
  if (saved_errno != 0) text += std::string(" (") + std::strerror(saved_errno) + ")";
  return text;
}

}  // namespace

Outcome wolf_outcome(Stage stage, WOLFSSL* ssl, int err, int saved_errno, bool name_is_ip) {
  if (stage == Stage::handshake) {
    // The native code first: it names the cause; wolfSSL's OpenSSL layer maps most of them onto
    // UNABLE_TO_VERIFY_LEAF_SIGNATURE (21), kept for codes this table does not know.
    if (err == DOMAIN_NAME_MISMATCH || err == IPADDR_MISMATCH)
      return make_outcome(stage, name_is_ip ? x509::ip_address_mismatch : x509::hostname_mismatch, wolf_text(err));
    for (const Same& s : verify_codes)
      if (s.wolf == err) return make_outcome(stage, s.detail, wolf_text(err));
    long verify = wolfSSL_get_verify_result(ssl);
    if (verify != 0 && verify != -1)
      return make_outcome(stage, verify, wolf_text(err) + ": verify result " + std::to_string(verify));
  }
  if (err == FATAL_ERROR) {  // an alert the peer sent
    WOLFSSL_ALERT_HISTORY h{};
    wolfSSL_get_alert_history(ssl, &h);
    long alert = h.last_rx.code;
    return make_outcome(stage, packed(err_lib_ssl, ssl_ad_reason_offset + alert),
                        wolf_text(err) + ": alert " + std::to_string(alert));
  }
  bool closed = err == SOCKET_PEER_CLOSED_E || err == SOCKET_ERROR_E;
  if (stage == Stage::handshake) {
    if (closed) return make_outcome(stage, details::peer_closed, with_errno(err, saved_errno));
    if (err == ZERO_RETURN) return make_outcome(stage, details::early_close_notify, wolf_text(err));
  } else {
    if (err == ZERO_RETURN) return make_outcome(stage, details::early_close_notify, wolf_text(err));
    if (closed && saved_errno != 0) return make_outcome(stage, saved_errno, with_errno(err, saved_errno));
    if (closed) return make_outcome(stage, details::peer_closed, wolf_text(err));
  }
  for (const Same& s : ssl_codes)
    if (s.wolf == err) return make_outcome(stage, packed(err_lib_ssl, s.detail), wolf_text(err));
  return make_outcome(stage, packed(err_lib_user, err < 0 ? -static_cast<long>(err) : err), wolf_text(err));
}

}  // namespace tlswolf
