#include "error_map.h"

#include <mbedtls/net_sockets.h>
#include <mbedtls/x509.h>

#include <cstring>
#include <string>

#include "clients/contract/openssl_codes.h"
#include "tls_config.h"

namespace tlsmbed {

namespace {

namespace details = tlsnb::details;
using tlsnb::make_outcome;

namespace x509 = contract::x509;  // OpenSSL's numbers: clients/contract/openssl_codes.h
using contract::err_lib_ssl;
using contract::err_lib_user;
using contract::packed;
using contract::ssl_ad_reason_offset;
using contract::ssl_r_wrong_version_number;

// Mbed TLS codes with an OpenSSL reason of the same meaning (packed with ERR_LIB_SSL), any stage.
struct Same {
  int mbed;
  long ssl_reason;
};
constexpr Same same_meaning[] = {
    {MBEDTLS_ERR_SSL_BAD_HS_PROTOCOL_VERSION, 258},  // SSL_R_UNSUPPORTED_PROTOCOL: the server chose another version
    {MBEDTLS_ERR_SSL_INVALID_MAC, 281},              // SSL_R_DECRYPTION_FAILED_OR_BAD_RECORD_MAC
    {MBEDTLS_ERR_SSL_UNEXPECTED_MESSAGE, 244},       // SSL_R_UNEXPECTED_MESSAGE
    {MBEDTLS_ERR_SSL_NO_USABLE_CIPHERSUITE, 181},    // SSL_R_NO_CIPHERS_AVAILABLE
};

std::string text_of(int err) { return tlsmbed::mbed_text(err); }

bool is_self_issued(const mbedtls_x509_crt* c) {
  return c->issuer_raw.len == c->subject_raw.len && std::memcmp(c->issuer_raw.p, c->subject_raw.p, c->issuer_raw.len) == 0;
}

// Chain building failed at the top of what Mbed TLS built: an untrusted self-issued root (the leaf
// itself at depth 0), or no issuer found at all.
long not_trusted(const ChainSeen& seen) {
  if (seen.top < 0 || !seen.top_self_issued) return x509::unable_to_get_issuer_locally;
  return seen.top == 0 ? x509::depth_zero_self_signed : x509::self_signed_in_chain;
}

// The lowest depth whose certificate carries one of `bits` (-1: the callback saw none).
int depth_of(const ChainSeen& seen, uint32_t bits) {
  for (int d = 0; d <= seen.top && d < ChainSeen::max_depth; ++d)
    if (seen.flags_at[d] & bits) return d;
  return -1;
}

struct Verdict {
  long detail;
  int depth;
};

// The flags in the order OpenSSL's verify_chain meets their problems: building the chain, the
// extensions and purpose, the keys and digests, the name, revocation, then the validity periods.
// The first one found wins, at the depth the callback saw it. NOT_TRUSTED is also how Mbed TLS
// marks a bad signature and a CA it will not use as one (lossy).
Verdict judge(const ChainSeen& seen, uint32_t flags, bool name_is_ip) {
  auto has = [flags](uint32_t bit) { return (flags & bit) != 0; };
  auto at = [&seen](long detail, uint32_t bits) { return Verdict{detail, depth_of(seen, bits)}; };
  constexpr uint32_t purpose = MBEDTLS_X509_BADCERT_KEY_USAGE | MBEDTLS_X509_BADCERT_EXT_KEY_USAGE | MBEDTLS_X509_BADCERT_NS_CERT_TYPE;
  constexpr uint32_t bad_crl = MBEDTLS_X509_BADCRL_NOT_TRUSTED | MBEDTLS_X509_BADCRL_BAD_MD | MBEDTLS_X509_BADCRL_BAD_PK |
                               MBEDTLS_X509_BADCRL_BAD_KEY;
  if (has(MBEDTLS_X509_BADCERT_NOT_TRUSTED)) return {not_trusted(seen), seen.top};
  if (has(purpose)) return at(x509::invalid_purpose, purpose);
  if (has(MBEDTLS_X509_BADCERT_BAD_KEY)) return at(x509::ee_key_too_small, MBEDTLS_X509_BADCERT_BAD_KEY);
  if (has(MBEDTLS_X509_BADCERT_BAD_MD) || has(MBEDTLS_X509_BADCERT_BAD_PK))
    return at(x509::ca_md_too_weak, MBEDTLS_X509_BADCERT_BAD_MD | MBEDTLS_X509_BADCERT_BAD_PK);
  if (has(MBEDTLS_X509_BADCERT_CN_MISMATCH)) return {name_is_ip ? x509::ip_address_mismatch : x509::hostname_mismatch, 0};
  if (has(MBEDTLS_X509_BADCERT_REVOKED)) return at(x509::revoked, MBEDTLS_X509_BADCERT_REVOKED);
  if (has(bad_crl)) return at(x509::crl_signature_failure, bad_crl);
  if (has(MBEDTLS_X509_BADCRL_EXPIRED)) return at(x509::crl_has_expired, MBEDTLS_X509_BADCRL_EXPIRED);
  if (has(MBEDTLS_X509_BADCRL_FUTURE)) return at(x509::crl_not_yet_valid, MBEDTLS_X509_BADCRL_FUTURE);
  if (has(MBEDTLS_X509_BADCERT_FUTURE)) return at(x509::not_yet_valid, MBEDTLS_X509_BADCERT_FUTURE);
  if (has(MBEDTLS_X509_BADCERT_EXPIRED)) return at(x509::expired, MBEDTLS_X509_BADCERT_EXPIRED);
  return {x509::unspecified, -1};  // BADCERT_OTHER, BADCERT_MISSING, or a flag OpenSSL has no reason for
}

std::string flags_text(uint32_t flags) {
  char buf[512] = "";
  if (mbedtls_x509_crt_verify_info(buf, sizeof buf, "", flags) < 0) return "";
  std::string text(buf);
  for (char& ch : text)
    if (ch == '\n') ch = ';';
  return text;
}

long packed_detail(int err) {
  for (const Same& s : same_meaning)
    if (s.mbed == err) return packed(err_lib_ssl, s.ssl_reason);
  return packed(err_lib_user, -static_cast<long>(err));
}

std::string with_errno(int err, int saved_errno) {
  std::string text = text_of(err);
  if (saved_errno != 0) text += std::string(" (") + std::strerror(saved_errno) + ")";
  return text;
}

}  // namespace

int see_certificate(void* chain_seen, mbedtls_x509_crt* crt, int depth, uint32_t* flags) {
  auto* seen = static_cast<ChainSeen*>(chain_seen);
  if (depth == 0 && !seen->match_name) *flags &= ~static_cast<uint32_t>(MBEDTLS_X509_BADCERT_CN_MISMATCH);
  if (depth >= 0 && depth < ChainSeen::max_depth) seen->flags_at[depth] = *flags;
  if (depth > seen->top) {
    seen->top = depth;
    seen->top_self_issued = is_self_issued(crt);
  }
  return 0;
}

Outcome verify_outcome(const ChainSeen& seen, int err, uint32_t flags, bool name_is_ip) {
  Verdict v = judge(seen, flags, name_is_ip);
  Outcome o = make_outcome(Stage::handshake, v.detail, text_of(err) + ": " + flags_text(flags));
  o.verify_depth = v.depth;
  return o;
}

Outcome mbed_outcome(Stage stage, const mbedtls_ssl_context* ssl, int err, int saved_errno) {
  if (err == MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE) {
    long alert = ssl->in_msg != nullptr ? ssl->in_msg[1] : 0;  // 2.28's fields are public
    return make_outcome(stage, packed(err_lib_ssl, ssl_ad_reason_offset + alert),
                        text_of(err) + ": alert " + std::to_string(alert));
  }
  bool io = err == MBEDTLS_ERR_NET_SEND_FAILED || err == MBEDTLS_ERR_NET_RECV_FAILED ||
            err == MBEDTLS_ERR_NET_CONN_RESET || err == MBEDTLS_ERR_SSL_CONN_EOF;
  if (stage == Stage::handshake) {
    // The peer went away mid-handshake (FIN, RST, EPIPE) without an alert: the lab's -1.
    if (io) return make_outcome(stage, details::peer_closed, with_errno(err, saved_errno));
    if (err == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY)  // close_notify before the handshake ended
      return make_outcome(stage, details::early_close_notify, text_of(err));
    // A record that is not TLS at all (a plaintext peer): OpenSSL's WRONG_VERSION_NUMBER.
    if (err == MBEDTLS_ERR_SSL_INVALID_RECORD)
      return make_outcome(stage, packed(err_lib_ssl, ssl_r_wrong_version_number), text_of(err));
  } else {
    if (err == MBEDTLS_ERR_SSL_CONN_EOF) return make_outcome(stage, details::peer_closed, text_of(err));
    // mbedtls_net_send says CONN_RESET for EPIPE as for ECONNRESET: the errno the callback kept tells
    if (err == MBEDTLS_ERR_NET_CONN_RESET)
      return make_outcome(stage, saved_errno != 0 ? saved_errno : 104, with_errno(err, saved_errno));
    if (io && saved_errno != 0) return make_outcome(stage, saved_errno, with_errno(err, saved_errno));
    if (io) return make_outcome(stage, details::peer_closed, text_of(err));
    if (err == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY) return make_outcome(stage, details::early_close_notify, text_of(err));
  }
  return make_outcome(stage, packed_detail(err), text_of(err));
}

}  // namespace tlsmbed
