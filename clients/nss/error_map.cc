#include "error_map.h"

#include <prerror.h>
#include <secerr.h>
#include <sslerr.h>

#include <string>

#include "clients/contract/openssl_codes.h"
#include "tls_config.h"

namespace tlsnss {

namespace {

namespace details = tlsnb::details;
namespace x509 = contract::x509;
using contract::err_lib_ssl;
using contract::err_lib_user;
using contract::packed;
using contract::ssl_ad_reason_offset;
using tlsnb::make_outcome;

constexpr long application_verification = 50;  // X509_V_ERR_APPLICATION_VERIFICATION (tlsnb's pin detail)

struct Same {
  long nss;
  long detail;
};

// Verification failures with an X509_V_ERR_* of the same meaning (LOSSY where NSS has one code for
// two of OpenSSL's: profile.toml).
constexpr Same verify_codes[] = {
    {SEC_ERROR_EXPIRED_CERTIFICATE, x509::expired},
    {SEC_ERROR_EXPIRED_ISSUER_CERTIFICATE, x509::expired},
    {SEC_ERROR_UNKNOWN_ISSUER, x509::unable_to_get_issuer_locally},
    {SEC_ERROR_UNTRUSTED_ISSUER, x509::self_signed_in_chain},  // a root reached, not an anchor
    {SEC_ERROR_UNTRUSTED_CERT, x509::unable_to_get_issuer_locally},
    {SEC_ERROR_BAD_SIGNATURE, x509::signature_failure},
    {SEC_ERROR_REVOKED_CERTIFICATE, x509::revoked},
    {SEC_ERROR_CA_CERT_INVALID, x509::invalid_ca},
    {SEC_ERROR_PATH_LEN_CONSTRAINT_INVALID, x509::path_length_exceeded},
    {SEC_ERROR_INADEQUATE_KEY_USAGE, x509::invalid_purpose},
    {SEC_ERROR_INADEQUATE_CERT_TYPE, x509::invalid_purpose},
    {SEC_ERROR_UNKNOWN_CRITICAL_EXTENSION, x509::unhandled_critical_extension},
    {SEC_ERROR_CERT_NOT_IN_NAME_SPACE, x509::permitted_violation},
    {SEC_ERROR_CERT_SIGNATURE_ALGORITHM_DISABLED, x509::ca_md_too_weak},
    {SSL_ERROR_WEAK_SERVER_CERT_KEY, x509::ee_key_too_small},
    {SEC_ERROR_CRL_EXPIRED, x509::crl_has_expired},
    {SEC_ERROR_CRL_NOT_YET_VALID, x509::crl_not_yet_valid},
    {SEC_ERROR_CRL_BAD_SIGNATURE, x509::crl_signature_failure},
    {SEC_ERROR_APPLICATION_CALLBACK_ERROR, application_verification},  // the adapter's --pin-sha256 check
};

// The alerts NSS names (SSL_ERROR_*_ALERT) and their numbers (RFC 8446 6).
constexpr Same alerts[] = {
    {SSL_ERROR_CLOSE_NOTIFY_ALERT, 0},           {SSL_ERROR_HANDSHAKE_UNEXPECTED_ALERT, 10},
    {SSL_ERROR_BAD_MAC_ALERT, 20},               {SSL_ERROR_RECORD_OVERFLOW_ALERT, 22},
    {SSL_ERROR_DECOMPRESSION_FAILURE_ALERT, 30}, {SSL_ERROR_HANDSHAKE_FAILURE_ALERT, 40},
    {SSL_ERROR_BAD_CERT_ALERT, 42},              {SSL_ERROR_UNSUPPORTED_CERT_ALERT, 43},
    {SSL_ERROR_REVOKED_CERT_ALERT, 44},          {SSL_ERROR_EXPIRED_CERT_ALERT, 45},
    {SSL_ERROR_CERTIFICATE_UNKNOWN_ALERT, 46},   {SSL_ERROR_ILLEGAL_PARAMETER_ALERT, 47},
    {SSL_ERROR_UNKNOWN_CA_ALERT, 48},            {SSL_ERROR_ACCESS_DENIED_ALERT, 49},
    {SSL_ERROR_DECODE_ERROR_ALERT, 50},          {SSL_ERROR_DECRYPT_ERROR_ALERT, 51},
    {SSL_ERROR_PROTOCOL_VERSION_ALERT, 70},      {SSL_ERROR_INSUFFICIENT_SECURITY_ALERT, 71},
    {SSL_ERROR_INTERNAL_ERROR_ALERT, 80},        {SSL_ERROR_INAPPROPRIATE_FALLBACK_ALERT, 86},
    {SSL_ERROR_USER_CANCELED_ALERT, 90},         {SSL_ERROR_NO_RENEGOTIATION_ALERT, 100},
    {SSL_ERROR_MISSING_EXTENSION_ALERT, 109},    {SSL_ERROR_UNSUPPORTED_EXTENSION_ALERT, 110},
    {SSL_ERROR_UNRECOGNIZED_NAME_ALERT, 112},    {SSL_ERROR_BAD_CERT_STATUS_RESPONSE_ALERT, 113},
    {SSL_ERROR_RX_CERTIFICATE_REQUIRED_ALERT, 116},
};

// Protocol refusals with an SSL_R_ of the same meaning.
constexpr Same ssl_codes[] = {
    {SSL_ERROR_UNSUPPORTED_VERSION, 258},  // SSL_R_UNSUPPORTED_PROTOCOL
    // NSS's own words: "We're assuming that any handshake failure on the client hello is a failure to
    // match ciphers" (ssl3_HandleAlert): a handshake_failure alert received before the ServerHello is
    // this code, and so is NSS's own finding that no suite fits. LOSSY: both read as the alert.
    {SSL_ERROR_NO_CYPHER_OVERLAP, contract::ssl_ad_reason_offset + 40},
};

const Same* find(const Same* begin, const Same* end, long code) {
  for (const Same* s = begin; s != end; ++s)
    if (s->nss == code) return s;
  return nullptr;
}

template <size_t N>
const Same* find(const Same (&table)[N], long code) {
  return find(table, table + N, code);
}

bool peer_gone(long code) {
  return code == PR_END_OF_FILE_ERROR || code == PR_CONNECT_RESET_ERROR || code == PR_CONNECT_ABORTED_ERROR ||
         code == PR_SOCKET_SHUTDOWN_ERROR;
}

}  // namespace

Outcome nss_outcome(Stage stage, long code, int os_error, bool name_is_ip, const Leaf& leaf) {
  std::string text = nss_text(code);
  if (os_error != 0 && code < SEC_ERROR_BASE) text += " (errno " + std::to_string(os_error) + ")";
  if (stage == Stage::handshake) {
    if (code == SSL_ERROR_BAD_CERT_DOMAIN)
      return make_outcome(stage, name_is_ip ? x509::ip_address_mismatch : x509::hostname_mismatch, text);
    if (leaf.self_issued && (code == SEC_ERROR_CA_CERT_INVALID || code == SEC_ERROR_UNKNOWN_ISSUER ||
                             code == SEC_ERROR_UNTRUSTED_ISSUER))
      return make_outcome(stage, x509::depth_zero_self_signed, text + " (the leaf is self-issued)");
    if (leaf.not_yet_valid && code == SEC_ERROR_EXPIRED_CERTIFICATE)
      return make_outcome(stage, x509::not_yet_valid, text + " (the leaf is not yet valid)");
    if (const Same* s = find(verify_codes, code)) return make_outcome(stage, s->detail, text);
    if (peer_gone(code)) return make_outcome(stage, details::peer_closed, text);
  }
  if (const Same* s = find(alerts, code)) {
    if (s->detail == 0) return make_outcome(stage, details::early_close_notify, text);
    return make_outcome(stage, packed(err_lib_ssl, ssl_ad_reason_offset + s->detail), text);
  }
  if (stage != Stage::handshake && peer_gone(code)) {
    if (code == PR_END_OF_FILE_ERROR) return make_outcome(stage, details::peer_closed, text);
    return make_outcome(stage, os_error != 0 ? os_error : 104 /* ECONNRESET */, text);
  }
  if (const Same* s = find(ssl_codes, code)) return make_outcome(stage, packed(err_lib_ssl, s->detail), text);
  if (code >= PR_NSPR_ERROR_BASE && code < PR_MAX_ERROR && os_error != 0) return make_outcome(stage, os_error, text);
  return make_outcome(stage, packed(err_lib_user, (-code) & 0xffff), text);
}

}  // namespace tlsnss
