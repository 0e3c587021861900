#include "attempt.h"

#include <sys/epoll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "error_map.h"

namespace tlsmbed {

namespace {

namespace details = tlsnb::details;
using tlsnb::make_outcome;

int send_cb(void* ctx, const unsigned char* buf, size_t len) {
  auto* io = static_cast<SocketIo*>(ctx);
  ssize_t n = send(io->net.fd, buf, len, MSG_NOSIGNAL);
  if (n >= 0) return static_cast<int>(n);
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return MBEDTLS_ERR_SSL_WANT_WRITE;
  io->last_errno = errno;
  return errno == ECONNRESET ? MBEDTLS_ERR_NET_CONN_RESET : MBEDTLS_ERR_NET_SEND_FAILED;
}

int recv_cb(void* ctx, unsigned char* buf, size_t len) {
  auto* io = static_cast<SocketIo*>(ctx);
  ssize_t n = recv(io->net.fd, buf, len, 0);
  if (n >= 0) return static_cast<int>(n);  // 0: the peer's FIN (MBEDTLS_ERR_SSL_CONN_EOF)
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return MBEDTLS_ERR_SSL_WANT_READ;
  io->last_errno = errno;
  return errno == ECONNRESET ? MBEDTLS_ERR_NET_CONN_RESET : MBEDTLS_ERR_NET_RECV_FAILED;
}

// mbedtls_net_send/recv on the fd transport, keeping the errno of a failure for the outcome.
int net_send_cb(void* ctx, const unsigned char* buf, size_t len) {
  auto* io = static_cast<SocketIo*>(ctx);
  int r = mbedtls_net_send(&io->net, buf, len);
  if (r < 0 && r != MBEDTLS_ERR_SSL_WANT_WRITE) io->last_errno = errno;
  return r;
}

int net_recv_cb(void* ctx, unsigned char* buf, size_t len) {
  auto* io = static_cast<SocketIo*>(ctx);
  int r = mbedtls_net_recv(&io->net, buf, len);
  if (r < 0 && r != MBEDTLS_ERR_SSL_WANT_READ) io->last_errno = errno;
  return r;
}

constexpr int max_nonfatal = 64;

}  // namespace

Outcome setup_outcome(SetupFailure what, const std::string& why) {
  const char* name = what == SetupFailure::session_init ? "mbedtls_ssl_setup failed"
                     : what == SetupFailure::hostname   ? "mbedtls_ssl_set_hostname failed"
                     : what == SetupFailure::context    ? "the run's configuration could not be made"
                                                        : "the saved session could not be offered";
  return contract::setup_outcome(static_cast<long>(what), name, why);
}

Attempt::Attempt(uint64_t conn, Shared& shared) : AdapterAttempt(conn, shared) { mbedtls_ssl_init(&ssl_); }

void Attempt::release_session() {
  if (!ssl_live_) return;
  mbedtls_ssl_free(&ssl_);  // the socket is the base's to close
  mbedtls_ssl_init(&ssl_);
  ssl_live_ = false;
}

bool Attempt::open_session() {
  const Options& o = options();
  io_.net.fd = fd();
  ssl_live_ = true;
  int r = mbedtls_ssl_setup(&ssl_, run_.tls->conf());
  if (r != 0) return fail(setup_outcome(SetupFailure::session_init, mbed_text(r))), false;
  // The SNI and the name the certificate is checked against, an IP literal included (2.28 sends
  // it as SNI and compares it with DNS names and the CN: it has no IP SAN matching).
  if ((r = mbedtls_ssl_set_hostname(&ssl_, o.name.c_str())) != 0)
    return fail(setup_outcome(SetupFailure::hostname, mbed_text(r))), false;
  seen_.match_name = o.verify_name;  // --no-verify-name: the SNI above is kept, the name unmatched
  if (o.verify) mbedtls_ssl_set_verify(&ssl_, see_certificate, &seen_);
  if (o.transport == contract::Transport::fd) mbedtls_ssl_set_bio(&ssl_, &io_, net_send_cb, net_recv_cb, nullptr);
  else mbedtls_ssl_set_bio(&ssl_, &io_, send_cb, recv_cb, nullptr);
  return !o.resume || offer_session();
}

// --resume: the newest saved session, loaded and offered (its master secret kept: a resumed
// handshake ends with the same one, which is how this client tells, 2.28 having no call for it).
bool Attempt::offer_session() {
  std::string saved;
  if (!run_.sessions->take(&saved)) return true;
  mbedtls_ssl_session session;
  mbedtls_ssl_session_init(&session);
  int r = mbedtls_ssl_session_load(&session, reinterpret_cast<const unsigned char*>(saved.data()), saved.size());
  if (r == 0) r = mbedtls_ssl_set_session(&ssl_, &session);
  if (r == 0) {
    std::memcpy(offered_master_, session.master, sizeof offered_master_);
    offered_ = true;
  }
  mbedtls_ssl_session_free(&session);
  if (r != 0) return fail(setup_outcome(SetupFailure::session_data, mbed_text(r))), false;
  return true;
}

Attempt::Step Attempt::step_handshake() {
  int r = mbedtls_ssl_handshake(&ssl_);
  if (r != 0) return after_error(r, Stage::handshake);
  handshake_done();
  return next_after_handshake();
}

void Attempt::handshake_done() {
  resumed_ = offered_ && ssl_.session != nullptr &&
             std::memcmp(ssl_.session->master, offered_master_, sizeof offered_master_) == 0;
  if (const char* v = mbedtls_ssl_get_version(&ssl_)) tls_version_ = v;
  if (const char* suite = mbedtls_ssl_get_ciphersuite(&ssl_)) {
    cipher_ = suite;  // TLS-ECDHE-ECDSA-WITH-AES-256-GCM-SHA384: the IANA name with dashes
    for (char& ch : cipher_)
      if (ch == '-') ch = '_';
  }
}

// Holding: read (and drop) what arrives until the hold is over.
Attempt::Step Attempt::step_hold() {
  unsigned char buf[4096];
  int n = mbedtls_ssl_read(&ssl_, buf, sizeof buf);
  if (n > 0) return Step::again;
  if (n == 0) return fail(make_outcome(Stage::read, details::peer_closed, "the peer closed the connection without close_notify"));
  return after_error(n, Stage::read);
}

Attempt::Step Attempt::step_send() {
  // After WANT_WRITE the same buffer and length are offered again, as Mbed TLS requires.
  int n = mbedtls_ssl_write(&ssl_, reinterpret_cast<const unsigned char*>(request_left()), request_left_size());
  if (n < 0) return after_error(n, Stage::write);
  sent(static_cast<size_t>(n));  // one record's worth at most per call
  return Step::again;
}

Attempt::Step Attempt::step_read() {
  unsigned char buf[16384];
  int n = mbedtls_ssl_read(&ssl_, buf, sizeof buf);
  if (n == 0) return fail(make_outcome(Stage::read, details::peer_closed, "the peer closed the connection without close_notify"));
  if (n < 0) return after_error(n, Stage::read);
  return take_response_bytes(buf, static_cast<size_t>(n));
}

// For --resume: the session's ticket or id, serialized.
bool Attempt::session_to_keep(std::string* data) {
  mbedtls_ssl_session session;
  mbedtls_ssl_session_init(&session);
  bool kept = false;
  if (mbedtls_ssl_get_session(&ssl_, &session) == 0) {
    size_t len = 0;
    mbedtls_ssl_session_save(&session, nullptr, 0, &len);
    data->assign(len, '\0');
    kept = len > 0 && mbedtls_ssl_session_save(&session, reinterpret_cast<unsigned char*>(data->data()), len, &len) == 0;
  }
  mbedtls_ssl_session_free(&session);
  return kept;
}

// close_notify, best effort: sent, the peer's is not awaited.
Attempt::Step Attempt::step_bye() {
  save_session();
  int r = mbedtls_ssl_close_notify(&ssl_);
  if (r == MBEDTLS_ERR_SSL_WANT_WRITE || r == MBEDTLS_ERR_SSL_WANT_READ) {
    set_want(r == MBEDTLS_ERR_SSL_WANT_WRITE ? EPOLLOUT : EPOLLIN);
    return Step::wait;
  }
  return fail(make_outcome(Stage::ok, 0, "ok"));  // sent, or the peer is gone: every response was complete
}

// After an Mbed TLS call returned `err` < 0 in `stage`. Mbed TLS sends its own alert for a
// handshake it failed (a bad certificate, a protocol error); nothing to add here.
Attempt::Step Attempt::after_error(int err, Stage stage) {
  if (err == MBEDTLS_ERR_SSL_WANT_READ || err == MBEDTLS_ERR_SSL_WANT_WRITE) {
    set_want(err == MBEDTLS_ERR_SSL_WANT_WRITE ? EPOLLOUT : EPOLLIN);
    return Step::wait;
  }
  if (err == MBEDTLS_ERR_SSL_NON_FATAL && ++nonfatal_ <= max_nonfatal) return Step::again;
  // A failed verification; also a leaf whose key usage or EKU forbids a TLS server, which Mbed TLS
  // reports as a bad Certificate message with the reason in the verify flags.
  uint32_t flags = mbedtls_ssl_get_verify_result(&ssl_);
  bool flagged = flags != 0 && flags != static_cast<uint32_t>(-1);
  if (err == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED || (err == MBEDTLS_ERR_SSL_BAD_HS_CERTIFICATE && flagged))
    return fail(verify_outcome(seen_, err, flags, options().name_is_ip()));
  return fail(mbed_outcome(stage, &ssl_, err, io_.last_errno));
}

}  // namespace tlsmbed
