// Every attempt's timers in one min-heap: the earliest is epoll_wait's timeout, and only
// expired entries are touched. Cancelling is lazy: the loop ignores a timer whose attempt is over.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

namespace tlsgnu {

struct Timer {
  int64_t when_ms;
  uint64_t token;  // (conn << 1) | kind
  bool operator>(const Timer& other) const { return when_ms > other.when_ms; }
};

class DeadlineQueue {
 public:
  void arm(int64_t when_ms, uint64_t token) { heap_.push(Timer{when_ms, token}); }
  // Milliseconds until the earliest timer (0 when due), -1 when there is none.
  int timeout_ms(int64_t now_ms) const;
  // Removes and returns the timers due at now_ms, earliest first.
  std::vector<Timer> take_expired(int64_t now_ms);
  size_t size() const { return heap_.size(); }

 private:
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> heap_;
};

int64_t monotonic_ms();
double monotonic_ms_precise();

}  // namespace tlsgnu
