#include "attempt.h"

#include <arpa/inet.h>
#include <gnutls/ocsp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "error_map.h"

namespace tlsgnu {

namespace {

constexpr int max_nonfatal = 16;  // warning alerts or renegotiation requests retried per attempt

bool peer_error(int err) {  // the peer's doing: no alert of ours would be read
  return err == GNUTLS_E_FATAL_ALERT_RECEIVED || err == GNUTLS_E_PREMATURE_TERMINATION ||
         err == GNUTLS_E_PULL_ERROR || err == GNUTLS_E_PUSH_ERROR || err == GNUTLS_E_SESSION_EOF;
}

}  // namespace

Attempt::Attempt(uint64_t conn, Shared& shared) : conn_(conn), shared_(shared), started_ms_(tlsnb::monotonic_ms_precise()) {}

Attempt::~Attempt() { release(); }

tlsnb::AttemptRecord Attempt::record() const {
  tlsnb::AttemptRecord r;
  r.conn = conn_;
  r.slot = slot_;
  r.outcome = outcome_;
  r.addr = addr_text_;
  r.ms = (done() ? ended_ms_ : tlsnb::monotonic_ms_precise()) - started_ms_;
  r.resumed = resumed_;
  r.tls_version = tls_version_;
  r.cipher = cipher_;
  r.http_status = http_status_;
  r.requests_done = requests_done_;
  return r;
}

void Attempt::release() {
  if (io_.session != nullptr) {
    gnutls_deinit(io_.session);
    io_.session = nullptr;
  }
  if (io_.fd >= 0) {  // closing it also leaves the epoll set
    // Closing with unread input sends an RST, and the peer's kernel then discards what it had
    // not yet read: the alert just sent (GnuTLS reads record by record, so a failed handshake
    // leaves the rest of the server's flight unread). What has arrived is read and dropped first.
    char sink[4096];
    for (int i = 0; i < 16 && recv(io_.fd, sink, sizeof sink, MSG_DONTWAIT) > 0; ++i) {
    }
    ::close(io_.fd);
    io_.fd = -1;
    shared_.fd_closed();
  }
}

void Attempt::finish(Outcome outcome) {
  if (done()) return;
  outcome_ = std::move(outcome);
  state_ = State::done;
  ended_ms_ = tlsnb::monotonic_ms_precise();
  release();
}

Attempt::Step Attempt::fail(Outcome outcome) {
  finish(std::move(outcome));
  return Step::over;
}

Stage Attempt::running_stage() const {
  switch (state_) {
    case State::waiting:
    case State::connecting: return Stage::connect;
    case State::handshake: return Stage::handshake;
    case State::sending: return Stage::write;
    case State::holding:
    case State::reading: return Stage::read;
    case State::bye:
    case State::done: return Stage::ok;
  }
  return Stage::ok;
}

void Attempt::start(uint32_t addr_host_order, int slot) {
  try {
    slot_ = slot;
    connect_to(addr_host_order);
  } catch (const std::bad_alloc&) {
    finish(setup_outcome(SetupFailure::out_of_memory));
  }
}

bool Attempt::open_session() {
  const Options& o = *shared_.options;
  TlsConfig& tls = *shared_.tls;
  int r = gnutls_init(&io_.session, GNUTLS_CLIENT | GNUTLS_NONBLOCK);
  if (r < 0) {
    io_.session = nullptr;
    return fail(setup_outcome(SetupFailure::session_init, gnutls_strerror(r))), false;
  }
  if ((r = gnutls_priority_set(io_.session, tls.priority())) < 0)
    return fail(setup_outcome(SetupFailure::priority, gnutls_strerror(r))), false;
  if ((r = gnutls_credentials_set(io_.session, GNUTLS_CRD_CERTIFICATE, tls.credentials())) < 0)
    return fail(setup_outcome(SetupFailure::credentials, gnutls_strerror(r))), false;
  // No SNI for an IP literal (RFC 6066); the name is checked by the library during the handshake.
  if (!o.name_is_ip() &&
      (r = gnutls_server_name_set(io_.session, GNUTLS_NAME_DNS, o.name.data(), o.name.size())) < 0)
    return fail(setup_outcome(SetupFailure::sni, gnutls_strerror(r))), false;
  if (o.verify) gnutls_session_set_verify_cert2(io_.session, tls.verify_data(), tls.verify_elements(), 0);
  gnutls_handshake_set_timeout(io_.session, 0);  // the attempt's deadline is the only clock
  attach_socket_io(&io_, o.transport);
  std::string saved;
  if (o.resume && shared_.sessions->take(&saved) &&
      (r = gnutls_session_set_data(io_.session, saved.data(), saved.size())) < 0)
    return fail(setup_outcome(SetupFailure::session_data, gnutls_strerror(r))), false;
  return true;
}

void Attempt::connect_to(uint32_t addr_host_order) {
  state_ = State::connecting;
  in_addr in{htonl(addr_host_order)};
  char text[INET_ADDRSTRLEN] = "";
  inet_ntop(AF_INET, &in, text, sizeof text);
  addr_text_ = std::string(text) + ":" + std::to_string(shared_.options->port);

  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
  if (fd < 0) {
    finish(setup_outcome(SetupFailure::socket, std::strerror(errno)));
    return;
  }
  io_.fd = fd;
  shared_.fd_opened();
  if (!open_session()) return;
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(shared_.options->port);
  sa.sin_addr = in;
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 && errno != EINPROGRESS) {
    finish(errno_outcome(Stage::connect, errno));
    return;
  }
  watch(EPOLLOUT);
}

void Attempt::watch(uint32_t events) {
  if (done() || (registered_ && events == watching_)) return;
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = this;
  if (epoll_ctl(shared_.epoll_fd, registered_ ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, io_.fd, &ev) != 0) {
    finish(setup_outcome(SetupFailure::epoll, std::strerror(errno)));
    return;
  }
  registered_ = true;
  watching_ = events;
}

void Attempt::on_event(uint32_t events) {
  if (done()) return;
  events_ = events;
  try {
    for (;;) {
      Step step = advance();
      if (step == Step::again) continue;
      if (step == Step::wait) watch(want_);
      return;
    }
  } catch (const std::bad_alloc&) {  // no exception crosses the loop
    finish(setup_outcome(SetupFailure::out_of_memory));
  }
}

void Attempt::on_deadline() {
  if (done()) return;
  Stage stage = running_stage();
  if (stage == Stage::ok) {  // every response is in; only the close_notify was still on its way
    finish(make_outcome(Stage::ok, 0, "ok (close_notify not flushed before the deadline)"));
    return;
  }
  finish(make_outcome(Stage::deadline, static_cast<long>(stage), std::string("deadline during ") + stage_name(stage)));
}

void Attempt::on_hold_over() {
  if (done()) return;
  hold_over_ = true;
  if (state_ == State::holding) on_event(0);
}

Attempt::Step Attempt::advance() {
  switch (state_) {
    case State::connecting: return step_connect();
    case State::handshake: return step_handshake();
    case State::holding: return step_hold();
    case State::sending: return step_send();
    case State::reading: return step_read();
    case State::bye: return step_bye();
    default: return Step::over;
  }
}

Attempt::Step Attempt::step_connect() {
  if (!(events_ & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
    want_ = EPOLLOUT;
    return Step::wait;
  }
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(io_.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  // A reset needs an established connection: the peer closed it before the handshake.
  if (err == ECONNRESET || err == EPIPE)
    return fail(make_outcome(Stage::handshake, details::peer_closed,
                             std::string("peer closed the connection before the handshake (") + std::strerror(err) + ")"));
  if (err != 0) return fail(errno_outcome(Stage::connect, err));
  state_ = State::handshake;
  return Step::again;
}

Attempt::Step Attempt::step_handshake() {
  int r = gnutls_handshake(io_.session);
  int call_errno = errno;
  if (r != GNUTLS_E_SUCCESS) return after_error(r, Stage::handshake, call_errno);
  handshake_done();
  if (staple_missing()) {
    // RFC 6066's bad_certificate_status_response (113), which GnuTLS names no constant for; one try
    gnutls_alert_send(io_.session, GNUTLS_AL_FATAL, static_cast<gnutls_alert_description_t>(113));
    Outcome o = make_outcome(Stage::handshake, x509::ocsp_verify_needed,
                             "--ocsp-staple require: the server stapled no OCSP response GnuTLS verified");
    o.verify_depth = 0;
    return fail(o);
  }
  return next_after_handshake();
}

// --ocsp-staple require: GnuTLS asked for a staple and judged any that came (a bad or revoked one
// fails the handshake itself); what it does not do is fail when none came. A resumed session
// carries no staple and needs none: it was saved by an attempt whose full handshake passed this
// check (save_session runs at the close), as tlsnb's rule (client/README.md).
bool Attempt::staple_missing() const {
  const Options& o = *shared_.options;
  return o.verify && o.ocsp_staple == "require" && !resumed_ &&
         gnutls_ocsp_status_request_is_checked(io_.session, 0) == 0;
}

void Attempt::handshake_done() {
  resumed_ = gnutls_session_is_resumed(io_.session) != 0;
  switch (gnutls_protocol_get_version(io_.session)) {
    case GNUTLS_TLS1_2: tls_version_ = "TLSv1.2"; break;
    case GNUTLS_TLS1_3: tls_version_ = "TLSv1.3"; break;
    default: tls_version_ = gnutls_protocol_get_name(gnutls_protocol_get_version(io_.session)); break;
  }
  if (const char* suite = gnutls_ciphersuite_get(io_.session)) cipher_ = suite;
}

Attempt::Step Attempt::next_after_handshake() {
  const Options& o = *shared_.options;
  if (o.hold_ms > 0 && !hold_over_) {
    state_ = State::holding;
    shared_.timers->arm(tlsnb::monotonic_ms() + o.hold_ms, Shared::token(conn_, Shared::hold_timer));
    return Step::again;
  }
  state_ = o.requests > 0 ? State::sending : State::bye;
  return Step::again;
}

// Holding: read (and drop) what arrives, TLS 1.3 session tickets among it, until the hold is over.
Attempt::Step Attempt::step_hold() {
  if (hold_over_) {
    state_ = shared_.options->requests > 0 ? State::sending : State::bye;
    return Step::again;
  }
  uint8_t buf[4096];
  ssize_t n = gnutls_record_recv(io_.session, buf, sizeof buf);
  int call_errno = errno;
  if (n > 0) return Step::again;
  if (n == 0) return fail(make_outcome(Stage::read, details::early_close_notify, "peer sent close_notify before the end"));
  return after_error(n, Stage::read, call_errno);
}

Attempt::Step Attempt::step_send() {
  const std::string& request = shared_.request;
  // After GNUTLS_E_AGAIN the same buffer and length are offered again, as GnuTLS requires.
  ssize_t n = gnutls_record_send(io_.session, request.data() + sent_, request.size() - sent_);
  int call_errno = errno;
  if (n < 0) return after_error(n, Stage::write, call_errno);
  sent_ += static_cast<size_t>(n);  // one record's worth at most per call
  if (sent_ == request.size()) {
    sent_ = 0;
    response_.reset();
    state_ = State::reading;
  }
  return Step::again;
}

Attempt::Step Attempt::step_read() {
  if (!carry_.empty()) {
    std::string carried;
    carried.swap(carry_);
    return take_response_bytes(reinterpret_cast<const uint8_t*>(carried.data()), carried.size());
  }
  uint8_t buf[16384];
  ssize_t n = gnutls_record_recv(io_.session, buf, sizeof buf);
  int call_errno = errno;
  if (n == 0) return fail(make_outcome(Stage::read, details::early_close_notify, "peer sent close_notify before the end"));
  if (n < 0) return after_error(n, Stage::read, call_errno);
  return take_response_bytes(buf, static_cast<size_t>(n));
}

Attempt::Step Attempt::take_response_bytes(const uint8_t* data, size_t len) {
  size_t used = response_.feed(data, len);
  switch (response_.state()) {
    case tlsnb::HttpResponse::State::chunked:
      return fail(make_outcome(Stage::read, details::http_chunked, response_.error()));
    case tlsnb::HttpResponse::State::malformed:
      return fail(make_outcome(Stage::read, details::http_malformed, response_.error()));
    case tlsnb::HttpResponse::State::complete:
      http_status_ = response_.status();
      ++requests_done_;
      carry_.assign(reinterpret_cast<const char*>(data) + used, len - used);
      state_ = requests_done_ < shared_.options->requests ? State::sending : State::bye;
      return Step::again;
    default:
      return Step::again;
  }
}

// Before the close_notify: keep the session for --resume (TLS 1.2 at once; TLS 1.3 once a ticket came).
void Attempt::save_session() {
  if (session_saved_ || !shared_.options->resume) return;
  session_saved_ = true;
  bool tls13 = gnutls_protocol_get_version(io_.session) == GNUTLS_TLS1_3;
  if (tls13 && !(gnutls_session_get_flags(io_.session) & GNUTLS_SFLAGS_SESSION_TICKET)) return;
  gnutls_datum_t data{nullptr, 0};
  if (gnutls_session_get_data2(io_.session, &data) < 0) return;
  shared_.sessions->store(std::string(reinterpret_cast<const char*>(data.data), data.size));
  gnutls_free(data.data);
}

// close_notify, best effort: sent (GNUTLS_SHUT_WR), the peer's is not awaited.
Attempt::Step Attempt::step_bye() {
  save_session();
  int r = gnutls_bye(io_.session, GNUTLS_SHUT_WR);
  if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED) {
    want_ = gnutls_record_get_direction(io_.session) == 1 ? EPOLLOUT : EPOLLIN;
    return r == GNUTLS_E_INTERRUPTED ? Step::again : Step::wait;
  }
  return fail(make_outcome(Stage::ok, 0, "ok"));  // sent, or the peer is gone: every response was complete
}

// After a GnuTLS call returned `result` < 0 in `stage`.
Attempt::Step Attempt::after_error(long result, Stage stage, int call_errno) {
  int err = static_cast<int>(result);
  if (err == GNUTLS_E_AGAIN || err == GNUTLS_E_INTERRUPTED) {
    want_ = gnutls_record_get_direction(io_.session) == 1 ? EPOLLOUT : EPOLLIN;
    return err == GNUTLS_E_INTERRUPTED ? Step::again : Step::wait;
  }
  // A warning alert, a renegotiation request (ignored: refusing it is allowed): call again.
  if (gnutls_error_is_fatal(err) == 0 && ++nonfatal_ <= max_nonfatal) return Step::again;
  int saved_errno = shared_.options->transport == Transport::bio ? io_.last_errno : call_errno;
  if (err != GNUTLS_E_PULL_ERROR && err != GNUTLS_E_PUSH_ERROR) saved_errno = 0;
  if (stage == Stage::handshake && !peer_error(err)) send_alert_for(err);
  if (err == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR)
    return fail(verify_outcome(io_.session, shared_.tls->credentials(), err,
                               gnutls_session_get_verify_cert_status(io_.session),
                               shared_.options->name_is_ip()));
  return fail(gnutls_outcome(stage, io_.session, err, saved_errno));
}

// GnuTLS does not send the alert for a handshake it failed itself; the caller is to
// (gnutls_alert_send_appropriate). One try: if the socket would block, the alert is dropped.
void Attempt::send_alert_for(int err) {
  gnutls_alert_send_appropriate(io_.session, err);
}

}  // namespace tlsgnu
