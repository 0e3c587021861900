#include "error_map.h"

#include <cerrno>
#include <cstring>

#include "clients/contract/openssl_codes.h"

namespace tlsbotan {

namespace {

namespace details = tlsnb::details;
using tlsnb::make_outcome;
namespace x509 = contract::x509;  // OpenSSL's numbers: clients/contract/openssl_codes.h
using contract::err_lib_ssl;
using contract::err_lib_user;
using contract::packed;
using contract::ssl_ad_reason_offset;
using Code = Botan::Certificate_Status_Code;
using AlertType = Botan::TLS::Alert::Type;

constexpr long unable_to_get_crl = 3;              // X509_V_ERR_UNABLE_TO_GET_CRL
constexpr long unable_to_decode_issuer_key = 6;    // X509_V_ERR_UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY
constexpr long keyusage_no_crl_sign = 35;          // X509_V_ERR_KEYUSAGE_NO_CRL_SIGN
constexpr long different_crl_scope = 44;           // X509_V_ERR_DIFFERENT_CRL_SCOPE
constexpr long local_alert_offset = 256;           // ERR_LIB_USER reasons: 256 + the alert Botan sent

// The statuses in the order OpenSSL's verify_chain meets their problems: building the chain, the
// CA and purpose checks, the name, the key and digest levels, revocation, then each certificate's
// signature and validity period. Each with its X509_V_ERR_* (0: decided by the chain's shape).
struct Rank {
  Code code;
  long detail;
};
constexpr Rank ranked[] = {
    {Code::CERT_ISSUER_NOT_FOUND, x509::unable_to_get_issuer_locally},
    {Code::CHAIN_LACKS_TRUST_ROOT, x509::unable_to_get_issuer_locally},
    {Code::CANNOT_ESTABLISH_TRUST, 0},  // 18 for a lone self-signed leaf, else 19
    {Code::CERT_CHAIN_LOOP, x509::unable_to_get_issuer_locally},
    {Code::CA_CERT_NOT_FOR_CERT_ISSUER, x509::invalid_ca},
    {Code::CERT_CHAIN_TOO_LONG, x509::path_length_exceeded},
    {Code::INVALID_USAGE, x509::invalid_purpose},
    {Code::UNKNOWN_CRITICAL_EXTENSION, x509::unhandled_critical_extension},
    {Code::NAME_CONSTRAINT_ERROR, x509::permitted_violation},
    {Code::CERT_NAME_NOMATCH, x509::hostname_mismatch},  // 64 for an IP --name
    {Code::SIGNATURE_METHOD_TOO_WEAK, x509::ca_key_too_small},
    {Code::UNTRUSTED_HASH, x509::ca_md_too_weak},
    {Code::NO_REVOCATION_DATA, unable_to_get_crl},
    {Code::CERT_IS_REVOKED, x509::revoked},
    {Code::NO_MATCHING_CRLDP, different_crl_scope},  // the CRL held is not the certificate's distribution point's
    {Code::CRL_BAD_SIGNATURE, x509::crl_signature_failure},
    {Code::CA_CERT_NOT_FOR_CRL_ISSUER, keyusage_no_crl_sign},
    {Code::CRL_NOT_YET_VALID, x509::crl_not_yet_valid},
    {Code::CRL_HAS_EXPIRED, x509::crl_has_expired},
    {Code::CERT_PUBKEY_INVALID, unable_to_decode_issuer_key},
    {Code::SIGNATURE_ERROR, x509::signature_failure},
    {Code::CERT_NOT_YET_VALID, x509::not_yet_valid},
    {Code::CERT_HAS_EXPIRED, x509::expired},
};

// OpenSSL's own reasons for an error Botan found itself, by the alert it sent.
struct Same {
  AlertType alert;
  long ssl_reason;
};
constexpr Same same_meaning[] = {
    {AlertType::PROTOCOL_VERSION, 258},    // SSL_R_UNSUPPORTED_PROTOCOL
    {AlertType::BAD_RECORD_MAC, 281},      // SSL_R_DECRYPTION_FAILED_OR_BAD_RECORD_MAC
    {AlertType::UNEXPECTED_MESSAGE, 244},  // SSL_R_UNEXPECTED_MESSAGE
};

}  // namespace

Outcome verify_outcome(const Botan::Path_Validation_Result& result, size_t sent, bool name_is_ip) {
  const Botan::CertificatePathStatusCodes& all = result.all_statuses();
  std::string text = "Certificate validation failure: " + result.result_string();
  auto detail_of = [&](const Rank& rank, size_t chain_size) {
    if (rank.code == Code::CANNOT_ESTABLISH_TRUST)
      return chain_size == 1 ? x509::depth_zero_self_signed : x509::self_signed_in_chain;
    if (rank.code == Code::CERT_NAME_NOMATCH && name_is_ip) return x509::ip_address_mismatch;
    return rank.detail;
  };
  for (const Rank& rank : ranked) {
    for (size_t depth = 0; depth < all.size(); ++depth) {
      if (all[depth].count(rank.code) == 0) continue;
      Outcome o = make_outcome(Stage::handshake, detail_of(rank, all.size()), text);
      o.verify_depth = static_cast<int>(depth);
      return o;
    }
  }
  // No path was built (issuer not found, no trusted root): the overall status alone, no depth.
  for (const Rank& rank : ranked)
    if (rank.code == result.result()) return make_outcome(Stage::handshake, detail_of(rank, sent), text);
  return make_outcome(Stage::handshake, x509::unspecified, text);  // a status OpenSSL has no reason for
}

Outcome peer_alert_outcome(Stage stage, AlertType type) {
  Botan::TLS::Alert alert(type, true);
  if (type == AlertType::CLOSE_NOTIFY)
    return make_outcome(stage, details::early_close_notify, "the peer sent close_notify");
  return make_outcome(stage, packed(err_lib_ssl, ssl_ad_reason_offset + static_cast<long>(type)),
                      "the peer sent a fatal alert: " + alert.type_string());
}

Outcome local_alert_outcome(Stage stage, AlertType type, const std::string& what) {
  for (const Same& s : same_meaning)
    if (s.alert == type) return make_outcome(stage, packed(err_lib_ssl, s.ssl_reason), what);
  return make_outcome(stage, packed(err_lib_user, local_alert_offset + static_cast<long>(type)), what);
}

Outcome socket_outcome(Stage stage, int err, bool sending) {
  const char* op = sending ? "send" : "recv";
  if (err == 0) return make_outcome(stage, details::peer_closed, "the peer closed the connection without close_notify");
  std::string text = std::string(op) + ": " + std::strerror(err);
  // The peer went away mid-handshake (RST, EPIPE) without an alert: the lab's -1.
  if (stage == Stage::handshake && (err == ECONNRESET || err == EPIPE))
    return make_outcome(stage, details::peer_closed, text);
  return make_outcome(stage, err, text);
}

}  // namespace tlsbotan
