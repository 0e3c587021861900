#include "attempt.h"

#include <arpa/inet.h>
#include <sys/epoll.h>

#include <cerrno>
#include <cstring>

#include "error_map.h"

namespace tlswolf {

namespace {

namespace details = tlsnb::details;
using tlsnb::make_outcome;

}  // namespace

Outcome setup_outcome(SetupFailure what, const std::string& why) {
  const char* name = what == SetupFailure::session_init ? "wolfSSL_new failed"
                     : what == SetupFailure::hostname   ? "the name to check could not be set"
                     : what == SetupFailure::context    ? "the run's configuration could not be made"
                                                        : "the saved session could not be offered";
  return contract::setup_outcome(static_cast<long>(what), name, why);
}

void Attempt::release_session() {
  if (ssl_ == nullptr) return;
  wolfSSL_free(ssl_);  // the socket is the base's to close
  ssl_ = nullptr;
}

bool Attempt::open_session() {
  const Options& o = options();
  ssl_ = wolfSSL_new(run_.tls->ctx());
  if (ssl_ == nullptr) return fail(setup_outcome(SetupFailure::session_init)), false;
  io_.fd = fd();
  if (o.transport == Transport::fd) {
    if (wolfSSL_set_fd(ssl_, io_.fd) != WOLFSSL_SUCCESS) return fail(setup_outcome(SetupFailure::session_init, "wolfSSL_set_fd")), false;
  } else {
    wolfSSL_SetIOReadCtx(ssl_, &io_);
    wolfSSL_SetIOWriteCtx(ssl_, &io_);
  }
  wolfSSL_set_using_nonblock(ssl_, 1);
  if (!name_the_peer()) return false;
  if (o.verify && o.ocsp_staple != "off" &&
      wolfSSL_UseOCSPStapling(ssl_, WOLFSSL_CSR_OCSP, 0) != WOLFSSL_SUCCESS)
    return fail(setup_outcome(SetupFailure::session_init, "wolfSSL_UseOCSPStapling")), false;
  return !o.resume || offer_session();
}

// The SNI (names only: none for an IP literal, RFC 6066) and the name the certificate must carry:
// wolfSSL checks nothing unless told (wolfSSL_check_domain_name / the verify param's IP), so
// --no-verify-name tells it nothing and keeps the SNI.
bool Attempt::name_the_peer() {
  const Options& o = options();
  if (!o.name_is_ip() &&
      wolfSSL_UseSNI(ssl_, WOLFSSL_SNI_HOST_NAME, o.name.data(), static_cast<unsigned short>(o.name.size())) != WOLFSSL_SUCCESS)
    return fail(setup_outcome(SetupFailure::hostname, "wolfSSL_UseSNI")), false;
  if (!o.verify || !o.verify_name) return true;
  int r = o.name_is_ip() ? wolfSSL_X509_VERIFY_PARAM_set1_ip_asc(wolfSSL_get0_param(ssl_), o.name.c_str())
                         : wolfSSL_check_domain_name(ssl_, o.name.c_str());
  if (r != WOLFSSL_SUCCESS) return fail(setup_outcome(SetupFailure::hostname, o.name)), false;
  return true;
}

bool Attempt::offer_session() {
  std::string saved;
  if (!run_.sessions->take(&saved)) return true;
  const auto* p = reinterpret_cast<const unsigned char*>(saved.data());
  WOLFSSL_SESSION* session = wolfSSL_d2i_SSL_SESSION(nullptr, &p, static_cast<long>(saved.size()));
  int r = session != nullptr ? wolfSSL_set_session(ssl_, session) : WOLFSSL_FAILURE;
  if (session != nullptr) wolfSSL_SESSION_free(session);
  if (r != WOLFSSL_SUCCESS) return fail(setup_outcome(SetupFailure::session_data)), false;
  return true;
}

Attempt::Step Attempt::step_handshake() {
  int r = wolfSSL_connect(ssl_);
  if (r != WOLFSSL_SUCCESS) return after_error(r, Stage::handshake);
  handshake_done();
  return next_after_handshake();
}

void Attempt::handshake_done() {
  resumed_ = wolfSSL_session_reused(ssl_) != 0;
  if (const char* v = wolfSSL_get_version(ssl_)) tls_version_ = v;
  int suite = wolfSSL_get_current_cipher_suite(ssl_);  // (first byte << 8) | second: IANA's name from it
  if (const char* name = wolfSSL_get_cipher_name_iana_from_suite(static_cast<unsigned char>((suite >> 8) & 0xff),
                                                                  static_cast<unsigned char>(suite & 0xff)))
    cipher_ = name;
}

Attempt::Step Attempt::step_hold() {
  char buf[4096];
  int n = wolfSSL_read(ssl_, buf, sizeof buf);
  if (n > 0) return Step::again;
  return after_error(n, Stage::read);
}

Attempt::Step Attempt::step_send() {
  // After WANT_WRITE the same buffer and length are offered again, as wolfSSL requires.
  int n = wolfSSL_write(ssl_, request_left(), static_cast<int>(request_left_size()));
  if (n <= 0) return after_error(n, Stage::write);
  sent(static_cast<size_t>(n));
  return Step::again;
}

Attempt::Step Attempt::step_read() {
  unsigned char buf[16384];
  int n = wolfSSL_read(ssl_, buf, sizeof buf);
  if (n <= 0) return after_error(n, Stage::read);
  return take_response_bytes(buf, static_cast<size_t>(n));
}

// For --resume: the session serialized (a TLS 1.3 ticket once it came).
bool Attempt::session_to_keep(std::string* data) {
  WOLFSSL_SESSION* session = wolfSSL_get1_session(ssl_);
  if (session == nullptr) return false;
  int len = wolfSSL_i2d_SSL_SESSION(session, nullptr);
  bool kept = false;
  if (len > 0) {
    data->assign(static_cast<size_t>(len), '\0');
    auto* p = reinterpret_cast<unsigned char*>(data->data());
    kept = wolfSSL_i2d_SSL_SESSION(session, &p) == len;
  }
  wolfSSL_SESSION_free(session);
  return kept;
}

// close_notify, best effort: sent, the peer's is not awaited.
Attempt::Step Attempt::step_bye() {
  save_session();
  int r = wolfSSL_shutdown(ssl_);
  if (r == WOLFSSL_SUCCESS || r == WOLFSSL_SHUTDOWN_NOT_DONE) return fail(make_outcome(Stage::ok, 0, "ok"));
  int err = wolfSSL_get_error(ssl_, r);
  if (err == WOLFSSL_ERROR_WANT_WRITE || err == WOLFSSL_ERROR_WANT_READ) {
    set_want(err == WOLFSSL_ERROR_WANT_WRITE ? EPOLLOUT : EPOLLIN);
    return Step::wait;
  }
  return fail(make_outcome(Stage::ok, 0, "ok"));  // the peer is gone: every response was complete
}

// After a wolfSSL call returned `result` (<= 0) in `stage`. wolfSSL sends its own alert for a
// handshake it failed; nothing to add here.
Attempt::Step Attempt::after_error(int result, Stage stage) {
  int saved_errno = options().transport == Transport::bio ? io_.last_errno : errno;
  int err = wolfSSL_get_error(ssl_, result);
  if (err == WOLFSSL_ERROR_WANT_READ || err == WOLFSSL_ERROR_WANT_WRITE) {
    set_want(err == WOLFSSL_ERROR_WANT_WRITE ? EPOLLOUT : EPOLLIN);
    return Step::wait;
  }
  // wolfSSL 5.5's TLS 1.3 client, under partial reads and writes, returns WOLFSSL_FATAL_ERROR from
  // wolfSSL_connect with wolfSSL_get_error() 0 (no error); the documented contract makes that a
  // failure, and so does this client (the lab's -100: an error the library does not name). Called
  // again, the handshake would go on (faults OneByte: README.md W1).
  if (err == 0)
    return fail(make_outcome(stage, -100, "wolfSSL returned " + std::to_string(result) +
                                              " and wolfSSL_get_error() says 0 (no error)"));
  if (err == WOLFSSL_ERROR_ZERO_RETURN) err = -343;  // ZERO_RETURN: the peer's close_notify
  bool io = err == WOLFSSL_ERROR_SYSCALL || err == -308 /* SOCKET_ERROR_E */ || err == -397 /* SOCKET_PEER_CLOSED_E */;
  return fail(wolf_outcome(stage, ssl_, err, io ? saved_errno : 0, options().name_is_ip()));
}

}  // namespace tlswolf
