#include "loop.h"

#include <arpa/inet.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace tlsgnu {

Loop::Loop(const Options& options, Shared& shared, Reporter report)
    : options_(options), shared_(shared), report_(std::move(report)) {
  in_addr addr{};
  if (inet_pton(AF_INET, options.dial_ip().c_str(), &addr) == 1) dial_addr_ = ntohl(addr.s_addr);
}

// Starts attempts while a slot is free, at most admit_per_turn a turn (so starting 1,000 does
// not stall the loop in one stretch); true when more could start at once.
bool Loop::admit(int64_t now) {
  for (int admitted = 0; started_ < options_.count && !free_slots_.empty(); ++admitted) {
    if (admitted == admit_per_turn) return true;
    auto conn = static_cast<uint64_t>(started_);
    std::unique_ptr<Attempt> attempt;
    try {
      attempt = std::make_unique<Attempt>(conn, shared_);
      live_[conn] = attempt.get();
    } catch (const std::bad_alloc&) {
      live_.erase(conn);
      return true;  // nothing started: try again on the next turn
    }
    ++started_;
    int slot = free_slots_.back();
    free_slots_.pop_back();
    Attempt* raw = attempt.get();
    slots_[static_cast<size_t>(slot)] = std::move(attempt);
    timers_.arm(now + options_.deadline_ms, Shared::token(conn, Shared::deadline_timer));
    raw->start(dial_addr_, slot);
  }
  return false;
}

void Loop::fire(const tlsnb::Timer& timer) {
  auto it = live_.find(timer.token >> 1);
  if (it == live_.end() || it->second->done()) return;  // already over: a lazily cancelled timer
  if ((timer.token & 1) == Shared::hold_timer) it->second->on_hold_over();
  else it->second->on_deadline();
}

void Loop::reap() {
  for (size_t slot = 0; slot < slots_.size(); ++slot) {
    if (!slots_[slot] || !slots_[slot]->done()) continue;
    std::unique_ptr<Attempt> attempt = std::move(slots_[slot]);
    free_slots_.push_back(static_cast<int>(slot));
    ++stats_.count;
    if (attempt->outcome().ok()) ++stats_.ok;
    else ++stats_.failed;
    if (attempt->resumed()) ++stats_.resumed;
    report_(*attempt);
    live_.erase(attempt->conn());
  }
}

bool Loop::run(RunStats* stats, std::string* error) {
  double begin = tlsnb::monotonic_ms_precise();
  int epfd = epoll_create1(EPOLL_CLOEXEC);
  if (epfd < 0) {
    *error = std::string("epoll_create1: ") + std::strerror(errno);
    return false;
  }
  shared_.epoll_fd = epfd;
  shared_.timers = &timers_;
  shared_.fd_opened();
  slots_.resize(static_cast<size_t>(options_.parallel));
  for (long i = options_.parallel - 1; i >= 0; --i) free_slots_.push_back(static_cast<int>(i));

  std::vector<epoll_event> events(256);
  double woke = tlsnb::monotonic_ms_precise();
  bool ok = true;
  while (stats_.count < options_.count) {
    int64_t now = tlsnb::monotonic_ms();
    bool more = admit(now);
    long reported = stats_.count;
    reap();  // attempts that ended while starting (connect refused at once, a setup failure)
    if (stats_.count != reported) continue;
    int timeout = more ? 0 : timers_.timeout_ms(now);
    double gap = tlsnb::monotonic_ms_precise() - woke;
    if (gap > stats_.loop_gap_max_ms) stats_.loop_gap_max_ms = gap;
    int n = epoll_wait(epfd, events.data(), static_cast<int>(events.size()), timeout);
    woke = tlsnb::monotonic_ms_precise();
    if (n < 0 && errno != EINTR) {
      *error = std::string("epoll_wait: ") + std::strerror(errno);
      ok = false;
      break;
    }
    for (int i = 0; i < n; ++i) static_cast<Attempt*>(events[static_cast<size_t>(i)].data.ptr)->on_event(events[static_cast<size_t>(i)].events);
    for (const tlsnb::Timer& timer : timers_.take_expired(tlsnb::monotonic_ms())) fire(timer);
    reap();
  }
  slots_.clear();  // any attempt still held (only when the loop failed) frees its session and socket
  stats_.wall_ms = tlsnb::monotonic_ms_precise() - begin;
  stats_.peak_fds = shared_.peak_fds;
  ::close(epfd);
  shared_.fd_closed();
  *stats = stats_;
  return ok;
}

}  // namespace tlsgnu
