// Timers for every attempt in one min-heap: the earliest drives epoll's timeout, and
// only expired entries are touched (no per-tick scan of all slots). Cancellation is
// lazy: an entry carries the owner's generation and is ignored if it no longer matches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <queue>
#include <vector>

namespace tlsnb {

struct Timer {
  int64_t when_ms;
  uint64_t token;       // who to wake (a slot, a lookup)
  uint64_t generation;  // the owner's generation when armed
  bool operator>(const Timer& other) const { return when_ms > other.when_ms; }
};

class DeadlineQueue {
 public:
  void arm(int64_t when_ms, uint64_t token, uint64_t generation);
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
