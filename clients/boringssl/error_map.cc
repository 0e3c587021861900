#include "error_map.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cstring>
#include <string>

#include "clients/contract/openssl_codes.h"
#include "tls_config.h"

namespace tlsboring {

namespace {

namespace details = tlsnb::details;
namespace x509 = contract::x509;
using contract::err_lib_ssl;
using contract::err_lib_user;
using contract::packed;
using contract::ssl_ad_reason_offset;
using tlsnb::make_outcome;

struct Same {
  long boring;
  long openssl;
};

// BoringSSL's X509_V_ERR_* numbers that are not OpenSSL 3.0's (the rest are the same).
constexpr Same verify_codes[] = {
    {X509_V_ERR_INVALID_CA, x509::invalid_ca},
    {X509_V_ERR_STORE_LOOKUP, 70},
    // BoringSSL refuses a leaf without SANs under a CA with name constraints; OpenSSL 3.0 has no
    // such code and checks the CN against the constraints: the nearest is a permitted violation.
    {X509_V_ERR_NAME_CONSTRAINTS_WITHOUT_SANS, x509::permitted_violation},
};

constexpr Same ssl_reasons[] = {
#include "ssl_reasons.inc"
    // By meaning, where BoringSSL's name for the same refusal is its own (the loss: profile.toml).
    {SSL_R_TLS13_DOWNGRADE, 373},        // SSL_R_INAPPROPRIATE_FALLBACK: the downgrade sentinel
    {SSL_R_UNEXPECTED_EXTENSION, 217},   // SSL_R_UNSOLICITED_EXTENSION
};

long verify_detail(long boring) {
  for (const Same& s : verify_codes)
    if (s.boring == boring) return s.openssl;
  return boring;
}

// A queued error as the lab's detail: SSL reasons by name, alerts as they are, the rest the user's.
long queued_detail(unsigned long code) {
  long lib = ERR_GET_LIB(code), reason = ERR_GET_REASON(code);
  if (lib == ERR_LIB_SSL) {
    if (reason >= ssl_ad_reason_offset) return packed(err_lib_ssl, reason);
    for (const Same& s : ssl_reasons)
      if (s.boring == reason) return packed(err_lib_ssl, s.openssl);
  }
  return packed(err_lib_user, lib * 1000 + reason);
}

std::string with_errno(const char* what, int saved_errno) {
  std::string text = what;
  if (saved_errno != 0) text += std::string(" (") + std::strerror(saved_errno) + ")";
  return text;
}

}  // namespace

Outcome boring_outcome(const Failure& f) {
  bool handshake = f.stage == Stage::handshake;
  if (f.ssl_error == SSL_ERROR_ZERO_RETURN)  // close_notify before we were done
    return make_outcome(f.stage, details::early_close_notify, "peer sent close_notify before the end");
  // X509_V_ERR_INVALID_CALL is BoringSSL's verify result before any verification ran: no verdict.
  if (handshake && f.verify_result != X509_V_OK && f.verify_result != X509_V_ERR_INVALID_CALL) {
    long detail = verify_detail(f.verify_result);
    if (detail == x509::hostname_mismatch && f.name_is_ip) detail = x509::ip_address_mismatch;
    return make_outcome(f.stage, detail, X509_verify_cert_error_string(f.verify_result));
  }
  // The stream ended or broke with nothing queued: in the handshake the peer closing (-1), after
  // it a truncation (-1) or the socket's errno.
  if (f.ssl_error == SSL_ERROR_SYSCALL && f.queued == 0) {
    if (handshake) return make_outcome(f.stage, details::peer_closed, with_errno("peer closed the connection", f.saved_errno));
    if (f.saved_errno == 0) return make_outcome(f.stage, details::peer_closed, "peer closed the connection without close_notify");
    return make_outcome(f.stage, f.saved_errno, with_errno("the socket failed", f.saved_errno));
  }
  if (f.queued == 0)
    return make_outcome(f.stage, -100, "SSL_get_error " + std::to_string(f.ssl_error) + " with no error queued");
  return make_outcome(f.stage, queued_detail(f.queued), boring_text(f.queued));
}

}  // namespace tlsboring
