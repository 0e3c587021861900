#include "deadline_queue.h"

#include <time.h>

namespace tlsnb {

void DeadlineQueue::arm(int64_t when_ms, uint64_t token) {
  heap_.push(Timer{when_ms, token});
}

int DeadlineQueue::timeout_ms(int64_t now_ms) const {
  if (heap_.empty()) return -1;
  int64_t wait = heap_.top().when_ms - now_ms;
  if (wait <= 0) return 0;
  return wait > 1000000 ? 1000000 : static_cast<int>(wait);
}

std::vector<Timer> DeadlineQueue::take_expired(int64_t now_ms) {
  std::vector<Timer> due;
  while (!heap_.empty() && heap_.top().when_ms <= now_ms) {
    due.push_back(heap_.top());
    heap_.pop();
  }
  return due;
}

int64_t monotonic_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

double monotonic_ms_precise() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1000.0 + static_cast<double>(ts.tv_nsec) / 1e6;
}

}  // namespace tlsnb
