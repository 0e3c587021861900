#include "pacer.h"

#include <algorithm>
#include <cmath>

namespace tlsproxy {

Pacer::Pacer(const FlowPlan& plan, SeededStream stream)
    : slicer_(plan.get(FaultKind::slicer)),
      latency_(plan.get(FaultKind::latency)),
      bandwidth_(plan.get(FaultKind::bandwidth)),
      stream_(stream) {}

int64_t Pacer::release_time(int64_t now) {
  if (latency_ == nullptr) return now;
  int64_t when = pause_end(now, latency_->latency_ms + stream_.around(latency_->jitter_ms));
  // Jitter must not reorder the stream: a chunk never leaves before the one read before it.
  last_release_ms_ = std::max({when, now, last_release_ms_});
  return last_release_ms_;
}

size_t Pacer::next_segment_size() {
  long size = slicer_->size + stream_.around(slicer_->variation);
  return static_cast<size_t>(std::max(1L, size));
}

size_t Pacer::allowance(int64_t now, size_t ready, int64_t* wake_ms) {
  if (ready == 0) return 0;
  size_t n = ready;
  if (slicer_ != nullptr) {
    if (segment_left_ == 0) {
      if (now < next_segment_ms_) {
        *wake_ms = next_segment_ms_;
        return 0;
      }
      // A short segment when less is ready: the stream's tail is never held back for more.
      segment_left_ = std::min(ready, next_segment_size());
    }
    n = std::min(n, segment_left_);
  }
  if (bandwidth_ != nullptr) {
    auto next = static_cast<int64_t>(std::ceil(next_byte_ms_));
    if (now < next) {
      ++paced_;
      *wake_ms = next;
      return 0;
    }
    // 10 ms worth a write, so the rate holds at the timer's 1 ms resolution.
    n = std::min(n, static_cast<size_t>(std::max(1L, bandwidth_->rate_kbs * 10)));
  }
  return n;
}

void Pacer::wrote(int64_t now, size_t n) {
  if (slicer_ != nullptr && n > 0) {
    segment_left_ -= std::min(n, segment_left_);
    if (segment_left_ == 0) {
      ++segments_;
      next_segment_ms_ = pause_end(now, slicer_->delay_ms);
    }
  }
  // rate KB/s is rate bytes a ms; an idle stream saves up no burst.
  if (bandwidth_ != nullptr)
    next_byte_ms_ = std::max(next_byte_ms_, static_cast<double>(now)) +
                    static_cast<double>(n) / static_cast<double>(bandwidth_->rate_kbs);
}

}  // namespace tlsproxy
