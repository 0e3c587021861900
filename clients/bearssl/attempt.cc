#include "attempt.h"

#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

#include "clients/contract/openssl_codes.h"
#include "error_map.h"
#include "suites.h"

namespace tlsbear {

namespace {

namespace details = tlsnb::details;
using tlsnb::make_outcome;

bool would_block(int err) { return err == EAGAIN || err == EWOULDBLOCK || err == EINTR; }

}  // namespace

Outcome setup_outcome(SetupFailure what, const std::string& why) {
  const char* name = what == SetupFailure::engine_reset ? "br_ssl_client_reset failed"
                     : what == SetupFailure::context    ? "the run's configuration could not be made"
                                                        : "the saved session could not be offered";
  return contract::setup_outcome(static_cast<long>(what), name, why);
}

void Attempt::release_session() { e_.reset(); }  // the socket is the base's to close

bool Attempt::open_session() {
  const Options& o = options();
  e_.reset(new (std::nothrow) Engine);
  if (!e_) return fail(contract::base_setup_outcome(contract::BaseSetup::out_of_memory)), false;
  br_ssl_client_init_full(&e_->cc, &e_->xc, run_.tls->anchors(), run_.tls->anchor_count());
  // init_full enables TLS 1.0 to 1.2 and 3DES: narrowed to the contract's TLS 1.2 and no 3DES.
  br_ssl_engine_set_versions(eng(), BR_TLS12, BR_TLS12);
  std::vector<uint16_t> suites = offered_suites(eng());
  br_ssl_engine_set_suites(eng(), suites.data(), suites.size());
  br_ssl_engine_set_buffer(eng(), e_->buf, sizeof e_->buf, 1);
  run_.tls->identity().apply(&e_->cc);  // --cert/--key, sent when the server asks
  init_chain_check(&e_->check, &e_->xc, run_.tls->anchors(), run_.tls->anchor_count(), o.verify, o.verify_name);
  e_->check.anchor_pins = &run_.tls->anchor_pins();
  e_->check.pins = &o.pins;  // --pin-sha256: checked once the chain verified
  br_ssl_engine_set_x509(eng(), &e_->check.vtable);
  if (o.resume) offer_session();
  // The SNI and the name the minimal engine matches, one argument (NULL would drop both, silently).
  if (!br_ssl_client_reset(&e_->cc, o.name.c_str(), offered_ ? 1 : 0))
    return fail(setup_outcome(SetupFailure::engine_reset, error_text(br_ssl_engine_last_error(eng())))), false;
  return true;
}

// --resume: the newest saved session's parameters (id, version, suite, master secret), offered;
// the master secret kept: a resumed handshake ends with the same one, which is how this client tells.
void Attempt::offer_session() {
  std::string saved;
  br_ssl_session_parameters params;
  if (!run_.sessions->take(&saved) || saved.size() != sizeof params) return;
  std::memcpy(&params, saved.data(), sizeof params);
  br_ssl_engine_set_session_parameters(eng(), &params);
  std::memcpy(offered_master_, params.master_secret, sizeof offered_master_);
  offered_ = true;
}

bool Attempt::session_to_keep(std::string* data) {
  br_ssl_session_parameters params;
  br_ssl_engine_get_session_parameters(eng(), &params);
  if (params.session_id_len == 0) return false;  // the server gave no session ID: nothing to resume
  data->assign(reinterpret_cast<const char*>(&params), sizeof params);
  return true;
}

// One send of the records the engine holds: 1 some went out, 0 the send would block, -1 it failed (errno).
int Attempt::send_records() {
  size_t len = 0;
  unsigned char* buf = br_ssl_engine_sendrec_buf(eng(), &len);
  ssize_t n = send(fd(), buf, len, MSG_NOSIGNAL);
  if (n > 0) {
    br_ssl_engine_sendrec_ack(eng(), static_cast<size_t>(n));
    return 1;
  }
  return n < 0 && !would_block(errno) ? -1 : 0;
}

// Moves records until the engine offers `want` (BR_SSL_SENDAPP or BR_SSL_RECVAPP). Sends first: a record the engine made goes out before any is read. When a send
// would block and the engine also reads, both readinesses are waited for (a peer that writes while
// this client writes is read, never deadlocked). nullopt: ready; else the step to return.
std::optional<Attempt::Step> Attempt::move_records(unsigned want, Stage stage) {
  for (;;) {
    unsigned st = br_ssl_engine_current_state(eng());
    if (st & BR_SSL_CLOSED) return closed(stage);
    bool send_blocked = false;
    if (st & BR_SSL_SENDREC) {
      int sent_some = send_records();
      if (sent_some > 0) continue;
      if (sent_some < 0) return send_failed(stage, errno);
      send_blocked = true;
    }
    if (st & want) return std::nullopt;
    if (st & BR_SSL_RECVREC) {
      size_t len = 0;
      unsigned char* buf = br_ssl_engine_recvrec_buf(eng(), &len);
      ssize_t n = recv(fd(), buf, len, 0);
      if (n > 0) {
        br_ssl_engine_recvrec_ack(eng(), static_cast<size_t>(n));
        continue;
      }
      if (n == 0) {
        const char* text = stage == Stage::handshake ? "the peer closed the connection during the handshake (no alert)"
                                                     : "the peer closed the connection without close_notify";
        return fail(make_outcome(stage, details::peer_closed, text));
      }
      if (!would_block(errno)) return io_failed(stage, errno, "recv");
      set_want(send_blocked ? EPOLLIN | EPOLLOUT : EPOLLIN);
      return Step::wait;
    }
    if (send_blocked) {
      set_want(EPOLLOUT);
      return Step::wait;
    }
    // Neither records to move nor what the step wants: not a state BearSSL documents.
    return fail(make_outcome(stage, contract::packed(contract::err_lib_user, BR_ERR_BAD_STATE),
                             "BearSSL engine state " + std::to_string(st) + " offers nothing to do"));
  }
}

// A send failed (EPIPE, ECONNRESET): the peer refused something and closed. What it sent before
// (an alert, typically) is read into the engine first, so that its reason is the outcome, not the
// broken pipe: BearSSL hands out its flight a record at a time, and the peer's alert after the
// first record would otherwise be lost to the send of the next (matrix client-cert-none).
Attempt::Step Attempt::send_failed(Stage stage, int err) {
  for (int i = 0; i < 16; ++i) {
    unsigned st = br_ssl_engine_current_state(eng());
    if (st & BR_SSL_CLOSED) return closed(stage);
    if (!(st & BR_SSL_RECVREC)) break;
    size_t len = 0;
    unsigned char* buf = br_ssl_engine_recvrec_buf(eng(), &len);
    ssize_t n = recv(fd(), buf, len, MSG_DONTWAIT);
    if (n <= 0) break;
    br_ssl_engine_recvrec_ack(eng(), static_cast<size_t>(n));
  }
  return io_failed(stage, err, "send");
}

// A socket error: in the handshake the peer is gone without an alert (-1); after it, the errno.
Attempt::Step Attempt::io_failed(Stage stage, int err, const char* what) {
  std::string text = std::string(what) + ": " + std::strerror(err);
  if (stage == Stage::handshake) return fail(make_outcome(stage, details::peer_closed, text));
  return fail(make_outcome(stage, err, text));
}

// The engine is closed: br_ssl_engine_last_error 0 is the peer's close_notify (answered by BearSSL's own).
Attempt::Step Attempt::closed(Stage stage) {
  int err = br_ssl_engine_last_error(eng());
  if (err == BR_ERR_OK)
    return fail(make_outcome(stage, details::early_close_notify,
                             stage == Stage::handshake ? "close_notify during the handshake" : "close_notify before the response ended"));
  return fail(engine_outcome(stage, err, e_->check, options().name_is_ip()));
}

Attempt::Step Attempt::step_handshake() {
  if (auto step = move_records(BR_SSL_SENDAPP, Stage::handshake)) return *step;
  handshake_done();
  return next_after_handshake();
}

void Attempt::handshake_done() {
  br_ssl_session_parameters params;
  br_ssl_engine_get_session_parameters(eng(), &params);
  resumed_ = offered_ && std::memcmp(params.master_secret, offered_master_, sizeof offered_master_) == 0;
  if (br_ssl_engine_get_version(eng()) == BR_TLS12) tls_version_ = "TLSv1.2";
  cipher_ = suite_name(params.cipher_suite);
}

// Holding: read (and drop) what arrives until the hold is over.
Attempt::Step Attempt::step_hold() {
  if (auto step = move_records(BR_SSL_RECVAPP, Stage::read)) return *step;
  size_t len = 0;
  br_ssl_engine_recvapp_buf(eng(), &len);
  br_ssl_engine_recvapp_ack(eng(), len);
  return Step::again;
}

// The request into the engine's plaintext buffer, a record flushed each time.
Attempt::Step Attempt::step_send() {
  if (auto step = move_records(BR_SSL_SENDAPP, Stage::write)) return *step;
  size_t len = 0;
  unsigned char* buf = br_ssl_engine_sendapp_buf(eng(), &len);
  size_t n = std::min(len, request_left_size());
  std::memcpy(buf, request_left(), n);
  br_ssl_engine_sendapp_ack(eng(), n);
  br_ssl_engine_flush(eng(), 0);
  sent(n);
  return Step::again;
}

Attempt::Step Attempt::step_read() {
  if (auto step = move_records(BR_SSL_RECVAPP, Stage::read)) return *step;
  size_t len = 0;
  unsigned char* buf = br_ssl_engine_recvapp_buf(eng(), &len);
  uint8_t data[16384];
  size_t n = std::min(len, sizeof data);
  std::memcpy(data, buf, n);
  br_ssl_engine_recvapp_ack(eng(), n);  // acknowledged first: the response reader may end the attempt
  return take_response_bytes(data, n);
}

// close_notify, best effort: sent, the peer's is not awaited.
Attempt::Step Attempt::step_bye() {
  save_session();
  if (!closing_) {
    br_ssl_engine_close(eng());
    closing_ = true;
  }
  for (;;) {
    unsigned st = br_ssl_engine_current_state(eng());
    if ((st & BR_SSL_CLOSED) || !(st & BR_SSL_SENDREC)) break;
    int sent_some = send_records();
    if (sent_some < 0) break;  // the peer is gone: every response was complete
    if (sent_some == 0) {
      set_want(EPOLLOUT);
      return Step::wait;
    }
  }
  return fail(make_outcome(Stage::ok, 0, "ok"));
}

}  // namespace tlsbear
