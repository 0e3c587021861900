// Timers for every attempt in one min-heap: the earliest drives epoll's timeout, and
// only expired entries are touched (no per-tick scan of all slots). Nothing is ever
// cancelled: an entry stays until it expires, and then its owner decides whether it still
// matters (Loop::fire looks the token's conn up and ignores a timer whose attempt was
// reported or is done).
#pragma once

#include <cstddef>
#include <cstdint>
#include <queue>
#include <vector>

namespace tlsnb {

struct Timer {
  int64_t when_ms;
  uint64_t token;  // who to wake: an attempt and which of its timers (timer_token.h)
  bool operator>(const Timer& other) const { return when_ms > other.when_ms; }
};

class DeadlineQueue {
 public:
  void arm(int64_t when_ms, uint64_t token);
  // Milliseconds until the earliest timer (0 if due), or -1 when there is none.
  int timeout_ms(int64_t now_ms) const;
  // Removes and returns every timer due at now_ms, earliest first.
  std::vector<Timer> take_expired(int64_t now_ms);
  size_t size() const { return heap_.size(); }

 private:
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> heap_;
};

int64_t monotonic_ms();
double monotonic_ms_precise();

}  // namespace tlsnb
