#include "attempt.h"

#include <openssl/err.h>
#include <openssl/x509.h>
#include <sys/epoll.h>

#include <cerrno>

#include "error_map.h"

namespace tlsboring {

namespace {

using tlsnb::make_outcome;

// The queued error that names the failure: BoringSSL queues the cause's library first where one
// is below it (a cipher's BAD_DECRYPT, ECDSA's BAD_SIGNATURE), then its TLS layer's reasons, the
// most specific first (UNEXPECTED_EXTENSION before PARSE_TLSEXT). So the first error of its SSL
// library, else the first of any; 0 when nothing was queued. The queue is emptied.
unsigned long telling_error() {
  unsigned long first = 0, first_ssl = 0;
  while (unsigned long code = ERR_get_error()) {
    if (first == 0) first = code;
    if (first_ssl == 0 && ERR_GET_LIB(code) == ERR_LIB_SSL) first_ssl = code;
  }
  return first_ssl != 0 ? first_ssl : first;
}

}  // namespace

Outcome setup_outcome(SetupFailure what, const std::string& why) {
  const char* name = what == SetupFailure::session_init ? "SSL_new failed"
                     : what == SetupFailure::hostname   ? "the name to check could not be set"
                     : what == SetupFailure::context    ? "the run's configuration could not be made"
                                                        : "the saved session could not be offered";
  return contract::setup_outcome(static_cast<long>(what), name, why);
}

void Attempt::release_session() {
  if (ssl_ == nullptr) return;
  SSL_free(ssl_);  // and its BIO; the socket is the base's to close
  ssl_ = nullptr;
}

bool Attempt::open_session() {
  const Options& o = options();
  ERR_clear_error();
  ssl_ = SSL_new(run_.tls->ctx());
  if (ssl_ == nullptr) return fail(setup_outcome(SetupFailure::session_init)), false;
  if (!attach_transport()) return false;
  if (o.resume && !SSL_set_ex_data(ssl_, session_sink_index(), &kept_))
    return fail(setup_outcome(SetupFailure::session_init, "SSL_set_ex_data")), false;
  SSL_set_connect_state(ssl_);
  if (!name_the_peer()) return false;
  return !o.resume || offer_session();
}

bool Attempt::attach_transport() {
  io_.fd = fd();
  if (options().transport == Transport::fd) {
    if (SSL_set_fd(ssl_, io_.fd) != 1) return fail(setup_outcome(SetupFailure::session_init, "SSL_set_fd")), false;
    return true;
  }
  BIO* bio = run_.tls->socket_bio(&io_);
  if (bio == nullptr) return fail(setup_outcome(SetupFailure::session_init, "BIO_new")), false;
  SSL_set_bio(ssl_, bio, bio);  // one reference, taken by the SSL for both directions
  return true;
}

// The SNI (names only: none for an IP literal, RFC 6066) and the name the certificate must carry:
// BoringSSL checks no name unless told (X509_VERIFY_PARAM_set1_host / _set1_ip_asc), so
// --no-verify-name tells it nothing and keeps the SNI. The host flags are BoringSSL's defaults.
bool Attempt::name_the_peer() {
  const Options& o = options();
  if (!o.name_is_ip() && SSL_set_tlsext_host_name(ssl_, o.name.c_str()) != 1)
    return fail(setup_outcome(SetupFailure::hostname, "SSL_set_tlsext_host_name")), false;
  if (!o.verify || !o.verify_name) return true;
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl_);
  int r = o.name_is_ip() ? X509_VERIFY_PARAM_set1_ip_asc(param, o.name.c_str())
                         : X509_VERIFY_PARAM_set1_host(param, o.name.data(), o.name.size());
  if (r != 1) return fail(setup_outcome(SetupFailure::hostname, o.name)), false;
  return true;
}

bool Attempt::offer_session() {
  std::string saved;
  if (!run_.sessions->take(&saved)) return true;
  SSL_SESSION* session = SSL_SESSION_from_bytes(reinterpret_cast<const uint8_t*>(saved.data()), saved.size(),
                                                run_.tls->ctx());
  int r = session != nullptr ? SSL_set_session(ssl_, session) : 0;
  SSL_SESSION_free(session);
  if (r != 1) return fail(setup_outcome(SetupFailure::session_data)), false;
  return true;
}

Attempt::Step Attempt::step_handshake() {
  ERR_clear_error();
  int r = SSL_do_handshake(ssl_);
  if (r != 1) return after_error(r, Stage::handshake);
  handshake_done();
  return next_after_handshake();
}

void Attempt::handshake_done() {
  resumed_ = SSL_session_reused(ssl_) != 0;
  if (const char* v = SSL_get_version(ssl_)) tls_version_ = v;
  if (const SSL_CIPHER* c = SSL_get_current_cipher(ssl_))
    if (const char* name = SSL_CIPHER_standard_name(c)) cipher_ = name;
}

Attempt::Step Attempt::step_hold() {
  char buf[4096];
  ERR_clear_error();
  int n = SSL_read(ssl_, buf, sizeof buf);
  if (n > 0) return Step::again;
  return after_error(n, Stage::read);
}

Attempt::Step Attempt::step_send() {
  ERR_clear_error();
  int n = SSL_write(ssl_, request_left(), static_cast<int>(request_left_size()));
  if (n <= 0) return after_error(n, Stage::write);
  sent(static_cast<size_t>(n));
  return Step::again;
}

Attempt::Step Attempt::step_read() {
  unsigned char buf[16384];
  ERR_clear_error();
  int n = SSL_read(ssl_, buf, sizeof buf);
  if (n <= 0) return after_error(n, Stage::read);
  return take_response_bytes(buf, static_cast<size_t>(n));
}

// For --resume: the latest resumable session the new-session callback serialized.
bool Attempt::session_to_keep(std::string* data) {
  if (kept_.bytes.empty()) return false;
  *data = kept_.bytes;
  return true;
}

// SSL_ERROR_WANT_READ / _WANT_WRITE: the readiness to wait for is set, and the same call is
// made again once it comes.
bool Attempt::waits(int ssl_error) {
  if (ssl_error != SSL_ERROR_WANT_READ && ssl_error != SSL_ERROR_WANT_WRITE) return false;
  set_want(ssl_error == SSL_ERROR_WANT_WRITE ? EPOLLOUT : EPOLLIN);
  return true;
}

// close_notify, best effort: sent, the peer's is not awaited.
Attempt::Step Attempt::step_bye() {
  save_session();
  ERR_clear_error();
  int r = SSL_shutdown(ssl_);
  if (r >= 0) return fail(make_outcome(Stage::ok, 0, "ok"));
  if (waits(SSL_get_error(ssl_, r))) return Step::wait;
  return fail(make_outcome(Stage::ok, 0, "ok"));  // the peer is gone: every response was complete
}

// After a BoringSSL call returned `result` (<= 0) in `stage`. BoringSSL sends its own alert for a
// handshake it failed; nothing to add here.
Attempt::Step Attempt::after_error(int result, Stage stage) {
  int saved_errno = options().transport == Transport::bio ? io_.last_errno : errno;
  int err = SSL_get_error(ssl_, result);
  if (waits(err)) return Step::wait;
  Failure f{stage, err, telling_error(), saved_errno, SSL_get_verify_result(ssl_), options().name_is_ip()};
  return fail(boring_outcome(f));
}

}  // namespace tlsboring
