#include "error_map.h"

#include "clients/contract/openssl_codes.h"

namespace tlsbear {

namespace {

using tlsnb::make_outcome;
namespace x509 = contract::x509;  // OpenSSL's numbers: clients/contract/openssl_codes.h
using contract::err_lib_ssl;
using contract::err_lib_user;
using contract::packed;
using contract::ssl_ad_reason_offset;

struct Named {
  int code;
  const char* name;
};
#define NAMED(name) {name, #name}
constexpr Named names[] = {
    NAMED(BR_ERR_BAD_PARAM),
    NAMED(BR_ERR_BAD_STATE),
    NAMED(BR_ERR_UNSUPPORTED_VERSION),
    NAMED(BR_ERR_BAD_VERSION),
    NAMED(BR_ERR_BAD_LENGTH),
    NAMED(BR_ERR_TOO_LARGE),
    NAMED(BR_ERR_BAD_MAC),
    NAMED(BR_ERR_NO_RANDOM),
    NAMED(BR_ERR_UNKNOWN_TYPE),
    NAMED(BR_ERR_UNEXPECTED),
    NAMED(BR_ERR_BAD_CCS),
    NAMED(BR_ERR_BAD_ALERT),
    NAMED(BR_ERR_BAD_HANDSHAKE),
    NAMED(BR_ERR_OVERSIZED_ID),
    NAMED(BR_ERR_BAD_CIPHER_SUITE),
    NAMED(BR_ERR_BAD_COMPRESSION),
    NAMED(BR_ERR_BAD_FRAGLEN),
    NAMED(BR_ERR_BAD_SECRENEG),
    NAMED(BR_ERR_EXTRA_EXTENSION),
    NAMED(BR_ERR_BAD_SNI),
    NAMED(BR_ERR_BAD_HELLO_DONE),
    NAMED(BR_ERR_LIMIT_EXCEEDED),
    NAMED(BR_ERR_BAD_FINISHED),
    NAMED(BR_ERR_RESUME_MISMATCH),
    NAMED(BR_ERR_INVALID_ALGORITHM),
    NAMED(BR_ERR_BAD_SIGNATURE),
    NAMED(BR_ERR_WRONG_KEY_USAGE),
    NAMED(BR_ERR_NO_CLIENT_AUTH),
    NAMED(BR_ERR_IO),
    NAMED(BR_ERR_X509_OK),
    NAMED(BR_ERR_X509_INVALID_VALUE),
    NAMED(BR_ERR_X509_TRUNCATED),
    NAMED(BR_ERR_X509_EMPTY_CHAIN),
    NAMED(BR_ERR_X509_INNER_TRUNC),
    NAMED(BR_ERR_X509_BAD_TAG_CLASS),
    NAMED(BR_ERR_X509_BAD_TAG_VALUE),
    NAMED(BR_ERR_X509_INDEFINITE_LENGTH),
    NAMED(BR_ERR_X509_EXTRA_ELEMENT),
    NAMED(BR_ERR_X509_UNEXPECTED),
    NAMED(BR_ERR_X509_NOT_CONSTRUCTED),
    NAMED(BR_ERR_X509_NOT_PRIMITIVE),
    NAMED(BR_ERR_X509_PARTIAL_BYTE),
    NAMED(BR_ERR_X509_BAD_BOOLEAN),
    NAMED(BR_ERR_X509_OVERFLOW),
    NAMED(BR_ERR_X509_BAD_DN),
    NAMED(BR_ERR_X509_BAD_TIME),
    NAMED(BR_ERR_X509_UNSUPPORTED),
    NAMED(BR_ERR_X509_LIMIT_EXCEEDED),
    NAMED(BR_ERR_X509_WRONG_KEY_TYPE),
    NAMED(BR_ERR_X509_BAD_SIGNATURE),
    NAMED(BR_ERR_X509_TIME_UNKNOWN),
    NAMED(BR_ERR_X509_EXPIRED),
    NAMED(BR_ERR_X509_DN_MISMATCH),
    NAMED(BR_ERR_X509_BAD_SERVER_NAME),
    NAMED(BR_ERR_X509_CRITICAL_EXTENSION),
    NAMED(BR_ERR_X509_NOT_CA),
    NAMED(BR_ERR_X509_FORBIDDEN_KEY_USAGE),
    NAMED(BR_ERR_X509_WEAK_PUBLIC_KEY),
    NAMED(BR_ERR_X509_NOT_TRUSTED),
};
#undef NAMED

// BearSSL's SSL codes with an OpenSSL reason of the same meaning (packed with ERR_LIB_SSL).
struct Same {
  int bear;
  long ssl_reason;
};
constexpr Same same_meaning[] = {
    {BR_ERR_UNSUPPORTED_VERSION, 258},  // SSL_R_UNSUPPORTED_PROTOCOL: the server chose a version not offered
    {BR_ERR_BAD_VERSION, 267},          // SSL_R_WRONG_VERSION_NUMBER: a record of another version
    {BR_ERR_BAD_LENGTH, 198},           // SSL_R_PACKET_LENGTH_TOO_LONG (LOSSY: any bad record length)
    {BR_ERR_TOO_LARGE, 150},            // SSL_R_ENCRYPTED_LENGTH_TOO_LONG (LOSSY: also a message over the buffer)
    {BR_ERR_BAD_MAC, 281},              // SSL_R_DECRYPTION_FAILED_OR_BAD_RECORD_MAC
    {BR_ERR_UNEXPECTED, 244},           // SSL_R_UNEXPECTED_MESSAGE
    {BR_ERR_BAD_CCS, 103},              // SSL_R_BAD_CHANGE_CIPHER_SPEC
    {BR_ERR_BAD_ALERT, 246},            // SSL_R_UNKNOWN_ALERT_TYPE (LOSSY: an alert of odd length)
    {BR_ERR_BAD_CIPHER_SUITE, 261},     // SSL_R_WRONG_CIPHER_RETURNED
    {BR_ERR_BAD_COMPRESSION, 257},      // SSL_R_UNSUPPORTED_COMPRESSION_ALGORITHM
    {BR_ERR_BAD_SECRENEG, 337},         // SSL_R_RENEGOTIATION_MISMATCH
    {BR_ERR_EXTRA_EXTENSION, 217},      // SSL_R_UNSOLICITED_EXTENSION
    {BR_ERR_BAD_FINISHED, 149},         // SSL_R_DIGEST_CHECK_FAILED
    {BR_ERR_RESUME_MISMATCH, 210},      // SSL_R_SSL_SESSION_VERSION_MISMATCH (LOSSY: also another suite)
    {BR_ERR_INVALID_ALGORITHM, 378},    // SSL_R_WRONG_CURVE (LOSSY: also a signature or hash algorithm)
    {BR_ERR_BAD_SIGNATURE, 123},        // SSL_R_BAD_SIGNATURE (ServerKeyExchange)
    {BR_ERR_WRONG_KEY_USAGE, 383},      // SSL_R_WRONG_CERTIFICATE_TYPE: the leaf's key unfit for the suite
};

constexpr long application_verification = 50;  // X509_V_ERR_APPLICATION_VERIFICATION: tlsnb's pin refusal

// The X.509 codes, most onto one X509_V_ERR_* number (the chain as sent decides the rest).
long x509_detail(int err, const ChainCheck& check, bool name_is_ip) {
  switch (err) {
    case BR_ERR_X509_NOT_TRUSTED:  // no anchor: as OpenSSL, by the chain as sent
      if (const br_x509_trust_anchor* ta = issuing_anchor(check))
        return ta->flags & BR_X509_TA_CA ? x509::signature_failure : x509::invalid_ca;
      if (!top_is_self_issued(check)) return x509::unable_to_get_issuer_locally;
      return check.certs.size() == 1 ? x509::depth_zero_self_signed : x509::self_signed_in_chain;
    case BR_ERR_X509_DN_MISMATCH: return x509::unable_to_get_issuer_locally;  // LOSSY: out of order, or unrelated
    case BR_ERR_X509_EXPIRED: {  // one code for both ends of the validity: the chain as sent tells
      bool not_yet = false;
      return first_out_of_validity(check, &not_yet) && not_yet ? x509::not_yet_valid : x509::expired;
    }
    case BR_ERR_X509_BAD_SERVER_NAME: return name_is_ip ? x509::ip_address_mismatch : x509::hostname_mismatch;
    case BR_ERR_X509_BAD_SIGNATURE: return x509::signature_failure;
    case BR_ERR_X509_NOT_CA: return x509::invalid_ca;  // LOSSY: also a pathLenConstraint exceeded (25)
    case BR_ERR_X509_FORBIDDEN_KEY_USAGE: return x509::invalid_ca;  // a CA without keyCertSign (a leaf's: WRONG_KEY_USAGE)
    case BR_ERR_X509_CRITICAL_EXTENSION: return x509::unhandled_critical_extension;
    case BR_ERR_X509_WEAK_PUBLIC_KEY: return x509::ee_key_too_small;  // LOSSY: a CA's key too (67)
    case err_pin_mismatch: return application_verification;
    default: return x509::unspecified;  // a certificate BearSSL cannot decode, a limit, no time
  }
}

}  // namespace

std::string error_text(int err) {
  if (err == static_cast<int>(err_pin_mismatch)) return "no certificate of the verified chain carries a pinned key (--pin-sha256; this adapter's check)";
  if (err >= BR_ERR_SEND_FATAL_ALERT) return "BR_ERR_SEND_FATAL_ALERT + " + std::to_string(err - BR_ERR_SEND_FATAL_ALERT) + " (" + std::to_string(err) + ")";
  if (err >= BR_ERR_RECV_FATAL_ALERT) return "BR_ERR_RECV_FATAL_ALERT + " + std::to_string(err - BR_ERR_RECV_FATAL_ALERT) + " (" + std::to_string(err) + ")";
  for (const Named& n : names)
    if (n.code == err) return std::string(n.name) + " (" + std::to_string(err) + ")";
  return "BearSSL error " + std::to_string(err);
}

Outcome engine_outcome(Stage stage, int err, const ChainCheck& check, bool name_is_ip) {
  std::string text = error_text(err);
  if (err >= BR_ERR_X509_OK && err < BR_ERR_RECV_FATAL_ALERT) {
    Outcome o = make_outcome(Stage::handshake, x509_detail(err, check, name_is_ip), text);
    // BearSSL says no depth; the name and the pins are the leaf's (tlsnb's depth 0).
    o.verify_depth = err == BR_ERR_X509_BAD_SERVER_NAME || err == static_cast<int>(err_pin_mismatch) ? 0 : -1;
    return o;
  }
  if (err >= BR_ERR_RECV_FATAL_ALERT && err < BR_ERR_SEND_FATAL_ALERT)
    return make_outcome(stage, packed(err_lib_ssl, ssl_ad_reason_offset + (err - BR_ERR_RECV_FATAL_ALERT)), text);
  // A peer that speaks no TLS (plaintext HTTP): its first byte is no record type.
  if (err == BR_ERR_UNKNOWN_TYPE && stage == Stage::handshake)
    return make_outcome(stage, packed(err_lib_ssl, contract::ssl_r_wrong_version_number), text);
  for (const Same& s : same_meaning)
    if (s.bear == err) return make_outcome(stage, packed(err_lib_ssl, s.ssl_reason), text);
  return make_outcome(stage, packed(err_lib_user, err), text);
}

}  // namespace tlsbear
