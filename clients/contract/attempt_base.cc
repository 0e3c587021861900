#include "clients/contract/attempt_base.h"

#include <arpa/inet.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace contract {

namespace details = tlsnb::details;
using tlsnb::errno_outcome;
using tlsnb::make_outcome;

Outcome setup_outcome(long detail, const char* what, const std::string& why) {
  std::string text = what;
  if (!why.empty()) text += ": " + why;
  return make_outcome(Stage::setup, detail, std::move(text));
}

Outcome base_setup_outcome(BaseSetup what, const std::string& why) {
  const char* name = what == BaseSetup::socket ? "socket() failed"
                     : what == BaseSetup::epoll ? "epoll_ctl failed"
                                                : "out of memory";
  return setup_outcome(static_cast<long>(what), name, why);
}

AttemptBase::AttemptBase(uint64_t conn, LoopShared& shared)
    : conn_(conn), shared_(shared), started_ms_(tlsnb::monotonic_ms_precise()) {}

AttemptBase::~AttemptBase() { close_socket(); }

tlsnb::AttemptRecord AttemptBase::record() const {
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

// Closing with unread input sends an RST, and the peer's kernel then discards what it had not yet
// read: the alert just sent (a library that reads record by record leaves the rest of the server's
// flight unread after a failed handshake). What has arrived is read and dropped first.
void AttemptBase::close_socket() {
  if (fd_ < 0) return;  // closing it also leaves the epoll set
  char sink[4096];
  for (int i = 0; i < 16 && recv(fd_, sink, sizeof sink, MSG_DONTWAIT) > 0; ++i) {
  }
  ::close(fd_);
  fd_ = -1;
  shared_.fd_closed();
}

void AttemptBase::finish(Outcome outcome) {
  if (done()) return;
  outcome_ = std::move(outcome);
  state_ = State::done;
  ended_ms_ = tlsnb::monotonic_ms_precise();
  release_session();
  close_socket();
}

AttemptBase::Step AttemptBase::fail(Outcome outcome) {
  finish(std::move(outcome));
  return Step::over;
}

Stage AttemptBase::running_stage() const {
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

void AttemptBase::start(uint32_t addr_host_order, int slot) {
  try {
    slot_ = slot;
    connect_to(addr_host_order);
  } catch (const std::bad_alloc&) {
    finish(base_setup_outcome(BaseSetup::out_of_memory));
  }
}

void AttemptBase::connect_to(uint32_t addr_host_order) {
  state_ = State::connecting;
  in_addr in{htonl(addr_host_order)};
  char text[INET_ADDRSTRLEN] = "";
  inet_ntop(AF_INET, &in, text, sizeof text);
  addr_text_ = std::string(text) + ":" + std::to_string(shared_.options->port);

  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
  if (fd < 0) {
    finish(base_setup_outcome(BaseSetup::socket, std::strerror(errno)));
    return;
  }
  fd_ = fd;
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

void AttemptBase::watch(uint32_t events) {
  if (done() || (registered_ && events == watching_)) return;
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = this;
  if (epoll_ctl(shared_.epoll_fd, registered_ ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd_, &ev) != 0) {
    finish(base_setup_outcome(BaseSetup::epoll, std::strerror(errno)));
    return;
  }
  registered_ = true;
  watching_ = events;
}

void AttemptBase::on_event(uint32_t events) {
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
    finish(base_setup_outcome(BaseSetup::out_of_memory));
  }
}

void AttemptBase::on_deadline() {
  if (done()) return;
  Stage stage = running_stage();
  if (stage == Stage::ok) {  // every response is in; only the close_notify was still on its way
    finish(make_outcome(Stage::ok, 0, "ok (close_notify not flushed before the deadline)"));
    return;
  }
  finish(make_outcome(Stage::deadline, static_cast<long>(stage), std::string("deadline during ") + tlsnb::stage_name(stage)));
}

void AttemptBase::on_hold_over() {
  if (done()) return;
  hold_over_ = true;
  if (state_ == State::holding) on_event(0);
}

AttemptBase::Step AttemptBase::advance() {
  switch (state_) {
    case State::connecting: return step_connect();
    case State::handshake: return step_handshake();
    case State::holding:
      if (hold_over_) {
        state_ = shared_.options->requests > 0 ? State::sending : State::bye;
        return Step::again;
      }
      return step_hold();
    case State::sending: return step_send();
    case State::reading: {
      Step step = Step::again;
      return take_carried(&step) ? step : step_read();
    }
    case State::bye: return step_bye();
    default: return Step::over;
  }
}

AttemptBase::Step AttemptBase::step_connect() {
  if (!(events_ & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
    want_ = EPOLLOUT;
    return Step::wait;
  }
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  // A reset needs an established connection: the peer closed it before the handshake.
  if (err == ECONNRESET || err == EPIPE)
    return fail(make_outcome(Stage::handshake, details::peer_closed,
                             std::string("peer closed the connection before the handshake (") + std::strerror(err) + ")"));
  if (err != 0) return fail(errno_outcome(Stage::connect, err));
  state_ = State::handshake;
  return Step::again;
}

AttemptBase::Step AttemptBase::next_after_handshake() {
  const Options& o = *shared_.options;
  if (o.hold_ms > 0 && !hold_over_) {
    state_ = State::holding;
    shared_.timers->arm(tlsnb::monotonic_ms() + o.hold_ms, LoopShared::token(conn_, LoopShared::hold_timer));
    return Step::again;
  }
  state_ = o.requests > 0 ? State::sending : State::bye;
  return Step::again;
}

void AttemptBase::sent(size_t n) {
  sent_ += n;
  if (sent_ < shared_.request.size()) return;
  sent_ = 0;
  response_.reset();
  state_ = State::reading;
}

bool AttemptBase::take_carried(Step* step) {
  if (carry_.empty()) return false;
  std::string carried;
  carried.swap(carry_);
  *step = take_response_bytes(reinterpret_cast<const uint8_t*>(carried.data()), carried.size());
  return true;
}

std::optional<Outcome> refused_response(const tlsnb::HttpResponse& response) {
  if (response.state() == tlsnb::HttpResponse::State::chunked) return make_outcome(Stage::read, details::http_chunked, response.error());
  if (response.state() == tlsnb::HttpResponse::State::malformed)
    return make_outcome(Stage::read, details::http_malformed, response.error());
  return std::nullopt;
}

AttemptBase::Step AttemptBase::take_response_bytes(const uint8_t* data, size_t len) {
  size_t used = response_.feed(data, len);
  if (auto refused = refused_response(response_)) return fail(*refused);
  if (response_.state() != tlsnb::HttpResponse::State::complete) return Step::again;
  http_status_ = response_.status();
  ++requests_done_;
  carry_.assign(reinterpret_cast<const char*>(data) + used, len - used);
  state_ = requests_done_ < shared_.options->requests ? State::sending : State::bye;
  return Step::again;
}

}  // namespace contract
