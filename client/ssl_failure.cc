#include "ssl_failure.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace tlsnb {

namespace {

// OpenSSL 3 queues this when the stream ends inside a record (gaps/unexpected_eof).
bool unexpected_eof(unsigned long code) {
  return ERR_GET_LIB(code) == ERR_LIB_SSL && ERR_GET_REASON(code) == SSL_R_UNEXPECTED_EOF_WHILE_READING;
}

// SSL_ERROR_SYSCALL with nothing queued: errno says what the socket did, 0 when the stream just ended.
bool syscall_only(const SslFailure& f) { return f.ssl_error == SSL_ERROR_SYSCALL && f.queue_top == 0; }

Outcome transport_outcome(const SslFailure& f) {
  if (f.transport == TransportEvent::eof)  // the SSL still wanted bytes after the end of the stream
    return make_outcome(f.stage, details::peer_closed, "peer closed the connection");
  // Before the handshake is done, a socket error moving ciphertext is the peer closing.
  if (f.stage == Stage::handshake) return peer_closed_outcome(f.transport_errno);
  return errno_outcome(f.stage, f.transport_errno);
}

Outcome verify_outcome(const SslFailure& f) {
  Outcome o = make_outcome(Stage::handshake, f.verify_error, X509_verify_cert_error_string(f.verify_error));
  o.verify_depth = f.verify_depth;
  return o;
}

// The first queued error as the detail (its packed code), or (stage, -1) when nothing was queued.
Outcome openssl_outcome(Stage stage, unsigned long code) {
  if (code == 0) return make_outcome(stage, details::peer_closed, "peer closed the connection without an alert");
  char reason[256];
  ERR_error_string_n(code, reason, sizeof reason);
  return make_outcome(stage, static_cast<long>(code), reason);
}

}  // namespace

Outcome ssl_failure_outcome(const SslFailure& f) {
  if (f.transport != TransportEvent::none) return transport_outcome(f);
  if (f.ssl_error == SSL_ERROR_ZERO_RETURN)  // close_notify before we were done
    return make_outcome(f.stage, details::early_close_notify, "peer sent close_notify before the end");
  bool handshake = f.stage == Stage::handshake;
  if (handshake && f.verify_error != 0) return verify_outcome(f);
  // In the handshake, a stream that ends or breaks (FIN, RST, EPIPE) is the peer closing without an alert.
  if (handshake && (unexpected_eof(f.queue_top) || syscall_only(f))) return peer_closed_outcome(f.saved_errno);
  // After it, an end without close_notify is a truncation; a socket error is its errno (read/104).
  if (unexpected_eof(f.queue_top) || (syscall_only(f) && f.saved_errno == 0))
    return make_outcome(f.stage, details::peer_closed, "peer closed the connection without close_notify");
  if (syscall_only(f)) return errno_outcome(f.stage, f.saved_errno);
  return openssl_outcome(f.stage, f.queue_top);
}

}  // namespace tlsnb
