#include "relay_loop.h"

#include <sys/epoll.h>
#include <sys/signalfd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <vector>

#include "socket_ops.h"

namespace tlsproxy {

namespace {

// Tokens beside socket_token(): no connection index reaches them.
constexpr uint64_t listener_token = ~0ULL;
constexpr uint64_t signals_token = ~0ULL - 1;
// At most this many accepts a wake-up, so a burst of clients does not stall the relaying.
constexpr int accepts_per_turn = 64;
// Out of descriptors, the pending connection stays readable: stop watching the listener this long.
constexpr int64_t accept_pause_ms = 50;

int watch_fd(int epfd, int op, int fd, uint64_t token) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = token;
  return epoll_ctl(epfd, op, fd, &ev);
}

}  // namespace

RelayLoop::RelayLoop(const Options& options, Descriptor listener, Tally& tally)
    : options_(options), tally_(tally), listener_(std::move(listener)) {}

std::string RelayLoop::open() {
  epoll_ = Descriptor(epoll_create1(EPOLL_CLOEXEC));
  if (!epoll_.open()) return std::string("epoll_create1: ") + std::strerror(errno);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  signals_ = Descriptor(signalfd(-1, &stop_signals, SFD_NONBLOCK | SFD_CLOEXEC));
  if (!signals_.open()) return std::string("signalfd: ") + std::strerror(errno);
  if (watch_fd(epoll_.get(), EPOLL_CTL_ADD, listener_.get(), listener_token) != 0 ||
      watch_fd(epoll_.get(), EPOLL_CTL_ADD, signals_.get(), signals_token) != 0)
    return std::string("epoll_ctl: ") + std::strerror(errno);
  shared_ = Shared{epoll_.get(), &timers_, &tally_, &options_};
  return "";
}

std::string RelayLoop::run() {
  std::vector<epoll_event> events(256);
  while (!stopping_) {
    int n = epoll_wait(epoll_.get(), events.data(), static_cast<int>(events.size()),
                       timers_.timeout_ms(tlsnb::monotonic_ms()));
    if (n < 0 && errno != EINTR) {
      stop_all();
      return std::string("epoll_wait: ") + std::strerror(errno);
    }
    int64_t now = tlsnb::monotonic_ms();
    for (size_t i = 0; i < static_cast<size_t>(n > 0 ? n : 0); ++i) {
      uint64_t token = events[i].data.u64;
      if (token == listener_token) accept_pending(now);
      else if (token == signals_token) stopping_ = true;  // the signal stays pending: nobody reads it, we stop
      else on_socket(token, events[i].events, now);
    }
    fire_timers(tlsnb::monotonic_ms());
    reap();
  }
  stop_all();
  return "";
}

void RelayLoop::accept_pending(int64_t now) {
  for (int accepted = 0; accepted < accepts_per_turn; ++accepted) {
    Opened client = accept_one(listener_.get());
    if (client.err == EMFILE || client.err == ENFILE || client.err == ENOBUFS || client.err == ENOMEM) {
      epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, listener_.get(), nullptr);
      timers_.arm(now + accept_pause_ms, listener_token);
      return;
    }
    if (client.err != 0) return;  // EAGAIN: none left; ECONNABORTED: that one is gone
    if (live_.size() >= static_cast<size_t>(options_.max_conns)) {
      tally_.refused();
      continue;  // its Descriptor closes it: the refusal is a close
    }
    long index = next_index_++;
    tally_.accepted();
    auto conn = std::make_unique<Connection>(index, std::move(client.fd), dial(options_.upstream), shared_);
    conn->start();
    live_[index] = std::move(conn);
  }
}

void RelayLoop::on_socket(uint64_t token, uint32_t events, int64_t now) {
  auto it = live_.find(static_cast<long>(token >> 1));
  if (it == live_.end()) return;  // closed earlier in this batch
  it->second->on_ready(static_cast<Side>(token & 1), events, now);
}

void RelayLoop::fire_timers(int64_t now) {
  for (const tlsnb::Timer& timer : timers_.take_expired(now)) {
    if (timer.token == listener_token) {
      watch_fd(epoll_.get(), EPOLL_CTL_ADD, listener_.get(), listener_token);
      continue;
    }
    auto it = live_.find(static_cast<long>(timer.token));
    if (it != live_.end()) it->second->on_timer(timer.when_ms, now);  // else: lazily cancelled
  }
}

void RelayLoop::reap() {
  for (auto it = live_.begin(); it != live_.end();) {
    if (it->second->closed()) it = live_.erase(it);
    else ++it;
  }
}

void RelayLoop::stop_all() {
  listener_.reset();  // no new connection from here on
  for (auto& [index, conn] : live_) conn->stop();
  live_.clear();
  signals_.reset();
  epoll_.reset();
}

}  // namespace tlsproxy
