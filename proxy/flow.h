// One direction of a relayed connection: bytes read from its source, held in a bounded queue,
// written to its sink through the direction's faults. An explicit state machine:
//
//   flowing      --(source EOF)-->              emptying
//   emptying     --(queue written)-->           finished (sink shut) | closing_late (slow_close)
//   closing_late --(slow_close's time)-->       finished (sink shut)
//   flowing      --(half_close at byte K)-->    discarding (sink shut)
//   (start)      --(blackhole)-->               discarding (sink never shut, never written)
//   discarding   --(source EOF)-->              finished
//
// limit_data and reset_peer end the whole connection: the flow reports them, its Connection acts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "fault_spec.h"
#include "pacer.h"
#include "tally.h"

namespace tlsproxy {

// The two sockets a flow moves between (owned by its Connection).
struct Ends {
  int source;
  int sink;
};

// What an advance() asks of the Connection.
enum class FlowEvent { none, limit_reached, reset_reached, failed };

class Flow {
 public:
  enum class State { flowing, emptying, closing_late, discarding, finished };
  // Bytes held per direction: when full, the source is not read (back-pressure).
  static constexpr size_t queue_cap = 64 * 1024;

  Flow(const FlowPlan& plan, SeededStream stream, Tally& tally);

  // Moves what can move now; never blocks.
  FlowEvent advance(int64_t now, Ends ends);
  // Drops what is queued (the connection is ending).
  void discard_queue();

  State state() const { return state_; }
  bool finished() const { return state_ == State::finished; }
  bool wants_read() const;
  bool blocked_on_sink() const { return blocked_on_sink_; }
  // The earliest time a pacing wait asked to be woken at, or -1; cleared by the call.
  int64_t take_wake();
  int failure() const { return failure_; }
  uint64_t written() const { return written_; }
  uint64_t dropped() const { return dropped_; }

 private:
  struct Chunk {
    std::vector<char> bytes;
    size_t offset = 0;
    int64_t release_ms = 0;
  };

  FlowEvent step_flowing(int64_t now, Ends ends);
  FlowEvent step_emptying(int64_t now, Ends ends);
  void step_closing_late(int64_t now, Ends ends);
  FlowEvent step_discarding(int64_t now, Ends ends);
  // Reads while there is room; false on a read error (failure_ set). *full: it stopped for want of room.
  bool read_source(int64_t now, int source, bool* full);
  FlowEvent write_sink(int64_t now, int sink);
  // The byte count of the next limit_data, reset_peer or half_close still to act, or -1.
  long next_threshold() const;
  FlowEvent at_threshold(int sink);
  void wake_at(int64_t when);

  const FaultSpec* limit_;
  const FaultSpec* reset_;
  const FaultSpec* half_close_;
  const FaultSpec* slow_close_;
  bool latency_;
  Pacer pacer_;
  Tally& tally_;
  State state_ = State::flowing;
  std::deque<Chunk> queue_;
  size_t queued_ = 0;
  uint64_t written_ = 0;
  uint64_t dropped_ = 0;
  uint64_t segments_told_ = 0;  // slicer segments already counted in the tally
  uint64_t paced_told_ = 0;
  bool half_closed_ = false;
  bool blocked_on_sink_ = false;
  int64_t close_at_ms_ = -1;
  int64_t wake_ms_ = -1;
  int failure_ = 0;
};

}  // namespace tlsproxy
