// The event loop of a C++ client under test: one thread, one epoll set, --parallel slots, and one
// DeadlineQueue whose earliest timer is epoll_wait's timeout. AttemptT is the adapter's attempt
// (an AttemptBase), made with (conn, SharedT&); SharedT a LoopShared with the adapter's own parts.
#pragma once

#include <arpa/inet.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "client/deadline_queue.h"
#include "client/run_totals.h"
#include "clients/contract/attempt_base.h"

namespace contract {

template <class AttemptT, class SharedT>
class AttemptLoop {
 public:
  using Reporter = std::function<void(const AttemptT&)>;
  AttemptLoop(const Options& options, SharedT& shared, Reporter report)
      : options_(options), shared_(shared), report_(std::move(report)) {
    in_addr addr{};
    if (inet_pton(AF_INET, options.dial_ip().c_str(), &addr) == 1) dial_addr_ = ntohl(addr.s_addr);
  }

  // Runs every attempt to its outcome; false (with `error`) only when the loop cannot start.
  bool run(tlsnb::RunTotals* stats, std::string* error) {
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
    bool ok = turn_until_done(epfd, error);
    slots_.clear();  // any attempt still held (only when the loop failed) frees its session and socket
    stats_.wall_ms = tlsnb::monotonic_ms_precise() - begin;
    stats_.peak_fds = shared_.peak_fds;
    ::close(epfd);
    shared_.fd_closed();
    *stats = stats_;
    return ok;
  }

 private:
  static constexpr int admit_per_turn = 64;

  bool turn_until_done(int epfd, std::string* error) {
    std::vector<epoll_event> events(256);
    double woke = tlsnb::monotonic_ms_precise();
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
        return false;
      }
      for (int i = 0; i < n; ++i) {
        const epoll_event& ev = events[static_cast<size_t>(i)];
        static_cast<AttemptBase*>(ev.data.ptr)->on_event(ev.events);
      }
      for (const tlsnb::Timer& timer : timers_.take_expired(tlsnb::monotonic_ms())) fire(timer);
      reap();
    }
    return true;
  }

  // Starts attempts while a slot is free, at most admit_per_turn a turn (so starting 1,000 does
  // not stall the loop in one stretch); true when more could start at once.
  bool admit(int64_t now) {
    for (int admitted = 0; started_ < options_.count && !free_slots_.empty(); ++admitted) {
      if (admitted == admit_per_turn) return true;
      auto conn = static_cast<uint64_t>(started_);
      std::unique_ptr<AttemptT> attempt;
      try {
        attempt = std::make_unique<AttemptT>(conn, shared_);
        live_[conn] = attempt.get();
      } catch (const std::bad_alloc&) {
        live_.erase(conn);
        return true;  // nothing started: try again on the next turn
      }
      ++started_;
      int slot = free_slots_.back();
      free_slots_.pop_back();
      AttemptT* raw = attempt.get();
      slots_[static_cast<size_t>(slot)] = std::move(attempt);
      timers_.arm(now + options_.deadline_ms, LoopShared::token(conn, LoopShared::deadline_timer));
      raw->start(dial_addr_, slot);
    }
    return false;
  }

  void fire(const tlsnb::Timer& timer) {
    auto it = live_.find(timer.token >> 1);
    if (it == live_.end() || it->second->done()) return;  // already over: a lazily cancelled timer
    if ((timer.token & 1) == LoopShared::hold_timer) it->second->on_hold_over();
    else it->second->on_deadline();
  }

  void reap() {
    for (size_t slot = 0; slot < slots_.size(); ++slot) {
      if (!slots_[slot] || !slots_[slot]->done()) continue;
      std::unique_ptr<AttemptT> attempt = std::move(slots_[slot]);
      free_slots_.push_back(static_cast<int>(slot));
      ++stats_.count;
      if (attempt->outcome().ok()) ++stats_.ok;
      else ++stats_.failed;
      if (attempt->resumed()) ++stats_.resumed;
      report_(*attempt);
      live_.erase(attempt->conn());
    }
  }

  const Options& options_;
  SharedT& shared_;
  Reporter report_;
  tlsnb::DeadlineQueue timers_;
  std::vector<std::unique_ptr<AttemptT>> slots_;
  std::vector<int> free_slots_;
  std::unordered_map<uint64_t, AttemptT*> live_;  // attempts not yet reported, by conn
  uint32_t dial_addr_ = 0;                         // host order
  long started_ = 0;
  tlsnb::RunTotals stats_;
};

}  // namespace contract
