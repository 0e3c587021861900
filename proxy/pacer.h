// When and how much of one direction's stream may leave: latency (when a chunk is released),
// slicer (segment sizes and the pause between them) and bandwidth (bytes per time).
// Pure arithmetic on times in ms: no socket, so the unit tests drive it with a fake clock.
#pragma once

#include <cstddef>
#include <cstdint>

#include "fault_spec.h"
#include "seeded_stream.h"

namespace tlsproxy {

// When a pause of MS that starts at NOW ends. The clock counts whole ms, rounded down, so NOW may
// be up to 1 ms before the real time: the pause is held 1 ms more, never shorter than asked (a
// latency of 100 ms each way measured 199.9 ms a round trip without it).
inline int64_t pause_end(int64_t now, long ms) { return ms > 0 ? now + ms + 1 : now; }

class Pacer {
 public:
  Pacer(const FlowPlan& plan, SeededStream stream);

  // When a chunk read at NOW may leave: NOW + latency +- jitter, never before an earlier chunk.
  int64_t release_time(int64_t now);
  // How many of READY bytes (released, at the head of the queue) may be written at NOW;
  // 0 with *wake_ms set when the next write must wait.
  size_t allowance(int64_t now, size_t ready, int64_t* wake_ms);
  // N bytes of the allowance were written at NOW (a short write leaves the segment open).
  void wrote(int64_t now, size_t n);

  uint64_t segments() const { return segments_; }   // slicer segments completed
  uint64_t paced() const { return paced_; }          // writes bandwidth made wait

 private:
  size_t next_segment_size();

  const FaultSpec* slicer_;
  const FaultSpec* latency_;
  const FaultSpec* bandwidth_;
  SeededStream stream_;
  int64_t last_release_ms_ = 0;
  size_t segment_left_ = 0;         // bytes of the current segment still to write
  int64_t next_segment_ms_ = 0;     // a new segment may start then
  double next_byte_ms_ = 0;         // bandwidth: the next byte may leave then
  uint64_t segments_ = 0;
  uint64_t paced_ = 0;
};

}  // namespace tlsproxy
