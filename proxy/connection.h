// One relayed connection: the client's socket, the socket dialled to the upstream, a Flow each way.
//
//   dialing   --(connect done)-->                      relaying
//   dialing   --(connect failed | client gone)-->      closed (client reset)
//   relaying  --(both flows finished)-->               closed
//   relaying  --(a read or write error)-->             closed (both reset: the error is mirrored)
//   relaying  --(limit_data | reset_peer reached)-->   draining
//   draining  --(receiver acked the bytes | cap)-->    closed (FIN both | client reset)
//   any       --(SIGTERM)-->                           closed (stopped)
#pragma once

#include <cstdint>

#include "client/deadline_queue.h"
#include "client/descriptor.h"
#include "flow.h"
#include "options.h"
#include "socket_ops.h"
#include "tally.h"

namespace tlsproxy {

enum class Side { client = 0, server = 1 };

// What every connection shares with the loop.
struct Shared {
  int epoll_fd = -1;
  tlsnb::DeadlineQueue* timers = nullptr;  // tokens: the connection's index
  Tally* tally = nullptr;
  const Options* options = nullptr;
};

// The epoll token of a connection's socket.
inline uint64_t socket_token(long index, Side side) {
  return static_cast<uint64_t>(index) << 1 | static_cast<uint64_t>(side);
}

class Connection {
 public:
  enum class State { dialing, relaying, draining, closed };
  // How long a limit or reset waits for its receiver to acknowledge the bytes before it acts anyway.
  static constexpr int64_t drain_cap_ms = 5000;

  Connection(long index, Descriptor client, Opened server, Shared& shared);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void start();
  void on_ready(Side side, uint32_t events, int64_t now);
  // A timer armed for WHEN is due.
  void on_timer(int64_t when, int64_t now);
  void stop();
  bool closed() const { return state_ == State::closed; }

 private:
  void step_dialing(uint32_t events, int64_t now);
  void step_relaying(int64_t now);
  void step_draining(int64_t now);
  void begin_draining(Direction direction, FlowEvent event, int64_t now);
  void end(const char* why, bool reset_client, bool reset_server);

  Flow& flow(Direction d) { return d == Direction::upstream ? upstream_ : downstream_; }
  Ends ends(Direction d) const;
  int fd(Side side) const { return sockets_[static_cast<size_t>(side)].get(); }
  void update_interest();
  void watch(Side side, uint32_t events);
  void unwatch(Side side);
  void arm(int64_t when);

  long index_;
  Shared& shared_;
  Descriptor sockets_[2];  // by Side
  int dial_error_;
  FlowPlan plans_[2];      // by Direction
  Flow upstream_;
  Flow downstream_;
  ConnRecord record_;
  State state_ = State::dialing;
  bool registered_[2] = {false, false};
  bool hung_up_[2] = {false, false};  // the peer shut both ways: no more readiness from it
  uint32_t watched_[2] = {0, 0};
  FlowEvent terminal_ = FlowEvent::none;
  Side drain_side_ = Side::client;
  int64_t drain_until_ = 0;
  int64_t armed_at_ = -1;
};

}  // namespace tlsproxy
