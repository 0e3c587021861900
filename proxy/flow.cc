#include "flow.h"

#include <algorithm>

#include "socket_ops.h"

namespace tlsproxy {

namespace {

constexpr size_t read_size = 16 * 1024;
// Read-write turns in one advance: a fast pair of sockets cannot keep the loop from the others for long.
constexpr int max_turns = 16;

}  // namespace

Flow::Flow(const FlowPlan& plan, SeededStream stream, Tally& tally)
    : limit_(plan.get(FaultKind::limit_data)),
      reset_(plan.get(FaultKind::reset_peer)),
      half_close_(plan.get(FaultKind::half_close)),
      slow_close_(plan.get(FaultKind::slow_close)),
      latency_(plan.has(FaultKind::latency)),
      pacer_(plan, stream),
      tally_(tally) {
  if (plan.has(FaultKind::blackhole)) state_ = State::discarding;
}

bool Flow::wants_read() const {
  return state_ == State::discarding || (state_ == State::flowing && queued_ < queue_cap);
}

int64_t Flow::take_wake() {
  int64_t when = wake_ms_;
  wake_ms_ = -1;
  return when;
}

void Flow::wake_at(int64_t when) {
  if (wake_ms_ < 0 || when < wake_ms_) wake_ms_ = when;
}

void Flow::discard_queue() {
  dropped_ += queued_;
  queue_.clear();
  queued_ = 0;
}

FlowEvent Flow::advance(int64_t now, Ends ends) {
  blocked_on_sink_ = false;
  FlowEvent event = FlowEvent::none;
  switch (state_) {
    case State::flowing:
      event = step_flowing(now, ends);
      break;
    case State::emptying:
      event = step_emptying(now, ends);
      break;
    case State::closing_late:
      step_closing_late(now, ends);
      break;
    case State::discarding:
      event = step_discarding(now, ends);
      break;
    case State::finished:
      break;
  }
  // The pacer's counts reach the tally as they grow, so a REPORT at SIGTERM has them.
  tally_.fired(FaultKind::slicer, pacer_.segments() - segments_told_);
  tally_.fired(FaultKind::bandwidth, pacer_.paced() - paced_told_);
  segments_told_ = pacer_.segments();
  paced_told_ = pacer_.paced();
  return event;
}

// Reads and writes by turns while a write makes room for a read that stopped on a full queue:
// a hung-up source is no longer watched, so nothing else would come back for its end of file.
FlowEvent Flow::step_flowing(int64_t now, Ends ends) {
  FlowEvent event = FlowEvent::none;
  for (int turn = 0;; ++turn) {
    if (turn == max_turns) {
      wake_at(now);  // more to move: the next turn of the loop comes back at once
      break;
    }
    bool full = false;
    if (!read_source(now, ends.source, &full)) return FlowEvent::failed;
    size_t before = queued_;
    event = write_sink(now, ends.sink);
    if (event != FlowEvent::none || state_ != State::flowing || !full || queued_ == before) break;
  }
  if (event != FlowEvent::none || state_ != State::emptying) return event;
  return step_emptying(now, ends);  // the source ended in this turn: pass on what is left at once
}

FlowEvent Flow::step_emptying(int64_t now, Ends ends) {
  FlowEvent event = write_sink(now, ends.sink);
  if (event != FlowEvent::none || !queue_.empty() || state_ != State::emptying) return event;
  if (slow_close_ == nullptr) {
    shut_write(ends.sink);
    state_ = State::finished;
    return FlowEvent::none;
  }
  tally_.fired(FaultKind::slow_close);
  close_at_ms_ = pause_end(now, slow_close_->delay_ms);
  state_ = State::closing_late;
  step_closing_late(now, ends);
  return FlowEvent::none;
}

void Flow::step_closing_late(int64_t now, Ends ends) {
  if (now < close_at_ms_) {
    wake_at(close_at_ms_);
    return;
  }
  shut_write(ends.sink);
  state_ = State::finished;
}

FlowEvent Flow::step_discarding(int64_t now, Ends ends) {
  char sink[read_size];
  for (int turn = 0;; ++turn) {
    if (turn == max_turns) {  // a fast sender must not keep the loop from the others
      wake_at(now);
      return FlowEvent::none;
    }
    Moved m = read_some(ends.source, sink, sizeof sink);
    if (m.would_block()) return FlowEvent::none;
    if (m.n < 0) {
      failure_ = m.err;
      return FlowEvent::failed;
    }
    if (m.n == 0) {  // the end of file is swallowed too: a blackhole never closes its receiver
      state_ = State::finished;
      return FlowEvent::none;
    }
    dropped_ += static_cast<uint64_t>(m.n);
    if (!half_closed_) tally_.fired(FaultKind::blackhole);
  }
}

bool Flow::read_source(int64_t now, int source, bool* full) {
  *full = queued_ >= queue_cap;
  while (state_ == State::flowing && !*full) {
    Chunk chunk;
    chunk.bytes.resize(std::min(read_size, queue_cap - queued_));
    Moved m = read_some(source, chunk.bytes.data(), chunk.bytes.size());
    if (m.would_block()) return true;
    if (m.n < 0) {
      failure_ = m.err;
      return false;
    }
    if (m.n == 0) {
      state_ = State::emptying;
      return true;
    }
    chunk.bytes.resize(static_cast<size_t>(m.n));
    chunk.release_ms = pacer_.release_time(now);
    if (latency_) tally_.fired(FaultKind::latency);
    queued_ += chunk.bytes.size();
    tally_.buffered(queued_);
    queue_.push_back(std::move(chunk));
    *full = queued_ >= queue_cap;
  }
  return true;
}

long Flow::next_threshold() const {
  long next = -1;
  for (const FaultSpec* f : {limit_, reset_, half_close_}) {
    if (f == nullptr || (f == half_close_ && half_closed_)) continue;
    if (next < 0 || f->at < next) next = f->at;
  }
  return next;
}

FlowEvent Flow::at_threshold(int sink) {
  auto reached = [this](const FaultSpec* f) { return f != nullptr && static_cast<uint64_t>(f->at) == written_; };
  if (reached(limit_)) return FlowEvent::limit_reached;
  if (reached(reset_)) return FlowEvent::reset_reached;
  if (reached(half_close_) && !half_closed_) {
    tally_.fired(FaultKind::half_close);
    shut_write(sink);
    half_closed_ = true;
    discard_queue();
    state_ = state_ == State::flowing ? State::discarding : State::finished;
  }
  return FlowEvent::none;
}

FlowEvent Flow::write_sink(int64_t now, int sink) {
  for (;;) {
    FlowEvent event = at_threshold(sink);
    if (event != FlowEvent::none || state_ == State::discarding || state_ == State::finished) return event;
    if (queue_.empty()) return FlowEvent::none;
    Chunk& head = queue_.front();
    if (head.release_ms > now) {
      wake_at(head.release_ms);
      return FlowEvent::none;
    }
    size_t ready = head.bytes.size() - head.offset;
    long threshold = next_threshold();
    if (threshold >= 0) ready = std::min(ready, static_cast<size_t>(static_cast<uint64_t>(threshold) - written_));
    int64_t wake = -1;
    size_t allowed = pacer_.allowance(now, ready, &wake);
    if (allowed == 0) {
      wake_at(wake);
      return FlowEvent::none;
    }
    Moved m = write_some(sink, head.bytes.data() + head.offset, allowed);
    if (m.would_block()) {
      blocked_on_sink_ = true;
      return FlowEvent::none;
    }
    if (m.n < 0) {
      failure_ = m.err;
      return FlowEvent::failed;
    }
    auto n = static_cast<size_t>(m.n);
    pacer_.wrote(now, n);
    written_ += n;
    head.offset += n;
    queued_ -= n;
    if (head.offset == head.bytes.size()) queue_.pop_front();
  }
}

}  // namespace tlsproxy
