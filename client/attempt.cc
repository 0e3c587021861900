#include "attempt.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "deadline_queue.h"
#include "session_cache.h"
#include "timer_token.h"

namespace tlsnb {

namespace {

// A transport that failed (Io::error) or ended (Io::eof) around an SSL call of `stage`.
SslFailure transport_failure(Stage stage, const Io& io) {
  SslFailure f;
  f.stage = stage;
  f.transport = io.kind == Io::eof ? TransportEvent::eof : TransportEvent::io_error;
  f.transport_errno = io.err;
  return f;
}

// The socket could not be made (or made non-blocking): setup/3 with the errno's text.
Outcome socket_setup_failure(int err) {
  Outcome o = setup_outcome(SetupFailure::socket);
  o.text += std::string(": ") + std::strerror(err);
  return o;
}

}  // namespace

Attempt::Attempt(uint64_t conn, RunState& shared)
    : conn_(conn), shared_(shared), started_ms_(monotonic_ms_precise()) {}

Attempt::~Attempt() {
  if (fd_.get() >= 0) shared_.fd_closed();
}

AttemptRecord Attempt::take_record() {
  AttemptRecord r;
  r.conn = conn_;
  r.slot = slot_;
  r.outcome = std::move(outcome_);
  r.addr = std::move(addr_text_);
  r.ms = elapsed_ms();
  r.resumed = resumed_;
  r.tls_version = std::move(tls_version_);
  r.cipher = std::move(cipher_);
  r.http_status = http_status_;
  r.requests_done = requests_done_;
  return r;
}

double Attempt::elapsed_ms() const { return (done() ? ended_ms_ : monotonic_ms_precise()) - started_ms_; }

Stage Attempt::running_stage() const {
  switch (state_) {
    case State::waiting:
    case State::resolving: return Stage::lookup;
    case State::connecting: return Stage::connect;
    case State::handshake: return Stage::handshake;
    case State::sending: return Stage::write;
    case State::holding:
    case State::reading: return Stage::read;
    case State::shutdown:
    case State::done: return Stage::ok;
  }
  return Stage::ok;
}

void Attempt::finish(Outcome outcome) {
  if (done()) return;
  outcome_ = std::move(outcome);
  state_ = State::done;
  ended_ms_ = monotonic_ms_precise();
  close_fallback();
  // SSL (and its BIOs) first, then the descriptor; closing it also leaves the epoll set.
  ssl_.reset();
  transport_.reset();
  if (fd_.get() >= 0) {
    fd_.reset();
    shared_.fd_closed();
  }
}

Attempt::Step Attempt::fail(Outcome outcome) {
  finish(std::move(outcome));
  return Step::over;
}

bool Attempt::open_ssl() {
  const RunConfig& o = *shared_.config;
  ssl_.reset(SSL_new(shared_.ctx));
  if (!ssl_) return fail(setup_outcome(SetupFailure::ssl_new)), false;
  transport_ = make_transport(o.transport);
  if (!transport_->attach(ssl_.get(), fd_.get())) return fail(setup_outcome(SetupFailure::bio_new)), false;
  SSL_set_connect_state(ssl_.get());
  SSL_set_ex_data(ssl_.get(), verify_record_index(), &verify_);
  dns::Address literal;
  bool is_ip = dns::address_from_text(o.name, literal);
  // --no-verify-name: the chain alone (matrix rows no-verify-name-*); the SNI below is kept.
  if (o.verify && o.verify_name) {
    // gaps/no_set1_host: without this, any name the chain verifies for is accepted.
    int set = is_ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_.get()), o.name.c_str())
                    : SSL_set1_host(ssl_.get(), o.name.c_str());
    if (set != 1) return fail(setup_outcome(SetupFailure::set_host)), false;
  }
  // gaps/no_sni: no SNI unless asked; never for an IP literal (RFC 6066).
  if (!is_ip && SSL_set_tlsext_host_name(ssl_.get(), o.name.c_str()) != 1)
    return fail(setup_outcome(SetupFailure::sni)), false;
  if (o.resume) {
    SSL_set_ex_data(ssl_.get(), session_key_index(), &shared_.session_key);
    if (SSL_SESSION* session = shared_.sessions->take(shared_.session_key)) {
      int set = SSL_set_session(ssl_.get(), session);
      SSL_SESSION_free(session);  // the SSL holds its own reference now
      if (set != 1) return fail(setup_outcome(SetupFailure::session)), false;
    }
  }
  return true;
}

namespace {

// "1.2.3.4:443" or "[::1]:443", as the report shows the address dialled.
std::string endpoint_text(const dns::Address& addr, uint16_t port) {
  std::string text = dns::address_text(addr);
  if (addr.family == AF_INET6) text = "[" + text + "]";
  return text + ":" + std::to_string(port);
}

}  // namespace

void Attempt::dial(const dns::Address& addr, int slot) {
  try {
    dial_to(addr, slot);
  } catch (const std::bad_alloc&) {
    finish(setup_outcome(SetupFailure::out_of_memory));
  }
}

void Attempt::dial_to(const dns::Address& addr, int slot) {
  slot_ = slot;
  state_ = State::connecting;
  addr_text_ = endpoint_text(addr, shared_.config->port);

  ERR_clear_error();
  int fd = socket(addr.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
  if (fd < 0) {
    finish(socket_setup_failure(errno));
    return;
  }
  own_descriptor(fd);
  if (!open_ssl()) return;

  sockaddr_storage sa{};
  socklen_t sa_len = dns::socket_address(addr, shared_.config->port, sa);
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sa_len) != 0 && errno != EINPROGRESS) {
    primary_failed(errno);
    return;
  }
  watch(EPOLLOUT);
}

// The second dial of RFC 8305: the other family's address, on a socket of its own until it wins.
class Attempt::Fallback final : public Watcher {
 public:
  Fallback(Attempt& owner, const dns::Address& addr) : owner_(owner), addr_(addr) {}
  void on_event(uint32_t events) override {
    if (!closed_) owner_.on_fallback(events);
  }

  Attempt& owner_;
  dns::Address addr_;
  Descriptor fd_;
  bool started_ = false;
  bool closed_ = false;
};

void Attempt::set_fallback(const dns::Address& addr) { fallback_ = std::make_unique<Fallback>(*this, addr); }

void Attempt::on_fallback_timer() {
  if (state_ == State::connecting && fallback_ && !fallback_->started_) start_fallback();
}

// The first connect failed: the fallback's turn at once (RFC 8305 5), or the attempt's end.
Attempt::Step Attempt::primary_failed(int err) {
  if (!fallback_ || fallback_->closed_) {
    return fail(connect_failure_outcome(err));
  }
  primary_failed_ = true;
  if (fd_.get() >= 0) {  // closing it also leaves the epoll set
    fd_.reset();
    shared_.fd_closed();
  }
  registered_ = false;
  if (!fallback_->started_) start_fallback();
  return done() ? Step::over : Step::wait;
}

void Attempt::start_fallback() {
  Fallback& f = *fallback_;
  f.started_ = true;
  int fd = socket(f.addr_.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
  if (fd < 0) return fallback_failed(errno);
  f.fd_.reset(fd);
  shared_.fd_opened();
  sockaddr_storage sa{};
  socklen_t sa_len = dns::socket_address(f.addr_, shared_.config->port, sa);
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sa_len) != 0 && errno != EINPROGRESS) return fallback_failed(errno);
  if (epoll_watch(shared_.epoll_fd, EPOLL_CTL_ADD, fd, EPOLLOUT, &f) != 0) {
    close_fallback();
    finish(setup_outcome(SetupFailure::epoll));
  }
}

// The fallback connected (it wins: the first socket is closed, the SSL moves over) or failed.
void Attempt::on_fallback(uint32_t events) {
  if (done() || !(events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) return;
  Fallback& f = *fallback_;
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(f.fd_.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err != 0) return fallback_failed(err);
  if (fd_.get() >= 0) {  // the loser
    fd_.reset();
    shared_.fd_closed();
  }
  fd_ = std::move(f.fd_);
  f.closed_ = true;
  addr_text_ = endpoint_text(f.addr_, shared_.config->port);
  registered_ = true;  // in the epoll set under the fallback's pointer: watch() moves it to the attempt
  watching_ = 0;
  if (!transport_->attach(ssl_.get(), fd_.get())) return finish(setup_outcome(SetupFailure::bio_new));
  watch(EPOLLOUT);  // step_connect finds SO_ERROR 0
}

void Attempt::fallback_failed(int err) {
  close_fallback();
  if (!primary_failed_) return;  // the first dial may still connect
  addr_text_ = endpoint_text(fallback_->addr_, shared_.config->port);
  finish(connect_failure_outcome(err));
}

void Attempt::close_fallback() {
  if (!fallback_ || fallback_->closed_) return;
  fallback_->closed_ = true;
  if (fallback_->fd_.get() >= 0) {  // closing it also leaves the epoll set
    fallback_->fd_.reset();
    shared_.fd_closed();
  }
}

void Attempt::adopt(int fd, const std::string& peer, int slot) {
  slot_ = slot;
  if (fd >= 0) own_descriptor(fd);
  state_ = State::connecting;  // a connected socket is writable at once: step_connect finds SO_ERROR 0
  try {
    addr_text_ = peer;
    int flags = fcntl(fd, F_GETFL);  // EBADF for a negative fd: setup/3
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
      finish(socket_setup_failure(errno));
      return;
    }
    if (open_ssl()) watch(EPOLLOUT);
  } catch (const std::bad_alloc&) {
    finish(setup_outcome(SetupFailure::out_of_memory));
  }
}

void Attempt::own_descriptor(int fd) {
  fd_.reset(fd);
  shared_.fd_opened();
}

void Attempt::watch(uint32_t events) {
  // No descriptor: the first dial failed and the fallback's socket, still connecting, watches itself.
  if (done() || fd_.get() < 0 || (registered_ && events == watching_)) return;
  int op = registered_ ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
  if (epoll_watch(shared_.epoll_fd, op, fd_.get(), events, this) != 0) {
    finish(setup_outcome(SetupFailure::epoll));
    return;
  }
  registered_ = true;
  watching_ = events;
}

void Attempt::on_event(uint32_t events) {
  if (done()) return;  // a stale event from the same epoll batch
  events_ = events;
  try {
    for (;;) {
      Step step = advance_once();
      if (step == Step::again) continue;
      if (step == Step::wait) watch(transport_->interest(want_));
      return;
    }
  } catch (const std::bad_alloc&) {  // errors are values: no exception crosses the loop
    finish(setup_outcome(SetupFailure::out_of_memory));
  }
}

void Attempt::on_deadline() {
  if (done()) return;
  Stage stage = running_stage();
  if (stage == Stage::ok) {  // the response is complete; only the close_notify was still in flight
    finish(make_outcome(Stage::ok, 0, "ok (close_notify not flushed before the deadline)"));
    return;
  }
  finish(make_outcome(Stage::deadline, static_cast<long>(stage),
                      std::string("deadline during ") + stage_name(stage)));
}

void Attempt::on_hold_over() {
  if (done()) return;
  hold_over_ = true;
  if (state_ == State::holding) on_event(0);
}

Attempt::Step Attempt::advance_once() {
  switch (state_) {
    case State::connecting: return step_connect();
    case State::handshake: return step_handshake();
    case State::holding: return step_hold();
    case State::sending: return step_send();
    case State::reading: return step_read();
    case State::shutdown: return step_shutdown();
    default: return Step::over;
  }
}

Attempt::Step Attempt::step_connect() {
  if (!(events_ & (EPOLLOUT | EPOLLERR | EPOLLHUP))) return Step::wait;
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(fd_.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err != 0) return primary_failed(err);
  close_fallback();  // the first dial won: the other is closed now (RFC 8305)
  state_ = State::handshake;
  return Step::again;
}

Attempt::Step Attempt::step_handshake() {
  ERR_clear_error();  // gaps/stale_error_queue: one thread serves every connection
  bool complete = false;
  Step step = after_ssl(SSL_do_handshake(ssl_.get()), Stage::handshake, &complete);
  if (!complete) return step;
  handshake_done();
  return next_after_handshake();
}

void Attempt::handshake_done() {
  resumed_ = SSL_session_reused(ssl_.get()) == 1;
  tls_version_ = SSL_get_version(ssl_.get());
  if (const SSL_CIPHER* c = SSL_get_current_cipher(ssl_.get())) cipher_ = SSL_CIPHER_get_name(c);
}

Attempt::Step Attempt::next_after_handshake() {
  const RunConfig& o = *shared_.config;
  if (o.hold_ms > 0 && !hold_over_) {
    state_ = State::holding;
    shared_.timers->arm(monotonic_ms() + o.hold_ms, encode_timer(conn_, TimerKind::hold));
    return Step::again;
  }
  state_ = o.requests > 0 ? State::sending : State::shutdown;
  return Step::again;
}

// Holding: read (and drop) what arrives, such as TLS 1.3 session tickets, until the hold is over.
Attempt::Step Attempt::step_hold() {
  if (hold_over_) {
    state_ = shared_.config->requests > 0 ? State::sending : State::shutdown;
    return Step::again;
  }
  uint8_t buf[4096];
  ERR_clear_error();
  bool got = false;
  return after_ssl(SSL_read(ssl_.get(), buf, sizeof buf), Stage::read, &got);
}

Attempt::Step Attempt::step_send() {
  if (transport_->pending_output()) {  // let the kernel take the last record before making more
    Io io = transport_->flush();
    if (io.kind == Io::error) return fail(ssl_failure_outcome(transport_failure(Stage::write, io)));
    if (io.kind == Io::blocked) {
      want_ = SSL_ERROR_WANT_WRITE;  // writable is all this step waits for (MemoryTransport::interest)
      return Step::wait;
    }
  }
  const std::string& request = shared_.request;
  ERR_clear_error();
  int n = SSL_write(ssl_.get(), request.data() + sent_, static_cast<int>(request.size() - sent_));
  bool wrote = false;
  Step step = after_ssl(n, Stage::write, &wrote);
  if (!wrote) return step;
  sent_ += static_cast<size_t>(n);  // partial write mode: n may be one record of many
  if (sent_ == request.size()) {
    sent_ = 0;
    response_.reset();
    state_ = State::reading;
  }
  return Step::again;
}

Attempt::Step Attempt::step_read() {
  if (transport_->pending_output()) {
    Io io = transport_->flush();
    if (io.kind == Io::error) return fail(ssl_failure_outcome(transport_failure(Stage::read, io)));
  }
  uint8_t buf[16384];
  ERR_clear_error();
  int n = SSL_read(ssl_.get(), buf, sizeof buf);
  bool got = false;
  Step step = after_ssl(n, Stage::read, &got);
  if (!got) return step;
  response_.feed(buf, static_cast<size_t>(n));
  switch (response_.state()) {
    case HttpResponse::State::chunked:
      return fail(make_outcome(Stage::read, details::http_chunked, response_.error()));
    case HttpResponse::State::malformed:
      return fail(make_outcome(Stage::read, details::http_malformed, response_.error()));
    case HttpResponse::State::complete:
      http_status_ = response_.status();
      ++requests_done_;
      state_ = requests_done_ < shared_.config->requests ? State::sending : State::shutdown;
      return Step::again;
    default:
      return Step::again;
  }
}

// close_notify, best effort: sent and flushed, the peer's is not awaited (gaps/trantor_shutdown).
Attempt::Step Attempt::step_shutdown() {
  if (!transport_->pending_output()) {
    ERR_clear_error();
    int r = SSL_shutdown(ssl_.get());
    if (r < 0) {
      int err = SSL_get_error(ssl_.get(), r);
      if (err == SSL_ERROR_WANT_WRITE || err == SSL_ERROR_WANT_READ) {
        want_ = err;
        return Step::wait;
      }
      return fail(make_outcome(Stage::ok, 0, "ok"));  // the peer is gone; the response was complete
    }
  }
  Io io = transport_->flush();
  if (io.kind == Io::blocked) {
    want_ = 0;
    return Step::wait;
  }
  return fail(make_outcome(Stage::ok, 0, "ok"));
}

Attempt::Step Attempt::after_ssl(int result, Stage stage, bool* done_out) {
  *done_out = false;
  int call_errno = errno;  // the socket BIO's errno, before flush() can change it
  Io out = transport_->flush();
  if (out.kind == Io::error) return fail(ssl_failure_outcome(transport_failure(stage, out)));
  if (result > 0) {
    *done_out = true;
    return Step::again;
  }
  int err = SSL_get_error(ssl_.get(), result);
  if (err == SSL_ERROR_WANT_READ) {
    want_ = err;
    Io in = transport_->fill();
    if (in.kind == Io::progress) return Step::again;
    if (in.kind == Io::blocked) return Step::wait;
    return fail(ssl_failure_outcome(transport_failure(stage, in)));  // the end of the stream, or an error
  }
  if (err == SSL_ERROR_WANT_WRITE) {
    want_ = err;
    return Step::wait;
  }
  return fail(ssl_failure_outcome(observed(stage, err, call_errno)));
}

SslFailure Attempt::observed(Stage stage, int ssl_error, int saved_errno) const {
  SslFailure f;
  f.stage = stage;
  f.ssl_error = ssl_error;
  f.queue_top = ERR_peek_error();
  f.saved_errno = saved_errno;
  f.verify_error = verify_.error;
  f.verify_depth = verify_.depth;
  return f;
}

}  // namespace tlsnb
