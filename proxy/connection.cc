#include "connection.h"

#include <sys/epoll.h>

#include <cerrno>

namespace tlsproxy {

namespace {

constexpr Direction both_directions[] = {Direction::upstream, Direction::downstream};

// Reads and drops what a peer sent and nobody will read, so the close that follows is a FIN:
// closing a socket with unread input sends an RST, which could overtake the limit's bytes.
void drop_unread(int fd) {
  char sink[16 * 1024];
  for (int reads = 0; reads < 64; ++reads)
    if (read_some(fd, sink, sizeof sink).n <= 0) return;
}

}  // namespace

Connection::Connection(long index, Descriptor client, Opened server, Shared& shared)
    : index_(index),
      shared_(shared),
      sockets_{std::move(client), std::move(server.fd)},
      dial_error_(server.err),
      plans_{FlowPlan(shared.options->faults, index, Direction::upstream),
             FlowPlan(shared.options->faults, index, Direction::downstream)},
      upstream_(plans_[0], SeededStream(shared.options->seed, static_cast<uint64_t>(index), 0), *shared.tally),
      downstream_(plans_[1], SeededStream(shared.options->seed, static_cast<uint64_t>(index), 1), *shared.tally) {
  record_.index = index;
  for (Direction d : both_directions)
    for (const FaultInfo& info : fault_catalogue())
      if (plans_[static_cast<size_t>(d)].has(info.kind)) {
        shared.tally->armed(info.kind);
        record_.faults.push_back(std::string(direction_name(d)) + ":" + info.name);
      }
}

void Connection::start() {
  if (dial_error_ != 0) {  // the refusal is passed on as the nearest thing a client could see: a reset
    end("dial_failed", true, false);
    return;
  }
  watch(Side::server, EPOLLOUT);
  watch(Side::client, 0);  // errors and hang-ups only, until the upstream answers
}

Ends Connection::ends(Direction d) const {
  return d == Direction::upstream ? Ends{fd(Side::client), fd(Side::server)} : Ends{fd(Side::server), fd(Side::client)};
}

void Connection::on_ready(Side side, uint32_t events, int64_t now) {
  switch (state_) {
    case State::dialing:
      if (side == Side::server) step_dialing(events, now);
      else if (events & (EPOLLERR | EPOLLHUP)) end("aborted", true, false);
      return;
    case State::relaying:
      if ((events & EPOLLERR) && pending_error(fd(side)) != 0) {
        end("aborted", true, true);  // a reset from one side is passed on as a reset to the other
        return;
      }
      // Level-triggered, a hung-up socket would wake the loop forever: it is read from now on
      // whenever the other side's events or a timer run the flows (its reads no longer block).
      if (events & EPOLLHUP) {
        unwatch(side);
        hung_up_[static_cast<size_t>(side)] = true;
      }
      step_relaying(now);
      return;
    case State::draining:
    case State::closed:
      return;
  }
}

void Connection::on_timer(int64_t when, int64_t now) {
  if (when == armed_at_) armed_at_ = -1;
  if (state_ == State::relaying) step_relaying(now);
  else if (state_ == State::draining) step_draining(now);
}

void Connection::stop() {
  if (state_ != State::closed) end("stopped", false, false);
}

void Connection::step_dialing(uint32_t events, int64_t now) {
  int err = pending_error(fd(Side::server));
  if (err != 0) {
    // A server that accepts and resets at once can do so before this wake-up: it was dialled.
    end(err == ECONNRESET ? "aborted" : "dial_failed", true, false);
    return;
  }
  if (!(events & EPOLLOUT)) return;
  state_ = State::relaying;
  step_relaying(now);
}

void Connection::step_relaying(int64_t now) {
  for (Direction d : both_directions) {
    FlowEvent event = flow(d).advance(now, ends(d));
    if (event == FlowEvent::failed) {
      end("aborted", true, true);
      return;
    }
    if (event != FlowEvent::none) {
      begin_draining(d, event, now);
      return;
    }
  }
  if (upstream_.finished() && downstream_.finished()) {
    end("closed", false, false);
    return;
  }
  update_interest();
  for (Direction d : both_directions) {
    int64_t wake = flow(d).take_wake();
    if (wake >= 0) arm(wake);
  }
}

void Connection::begin_draining(Direction direction, FlowEvent event, int64_t now) {
  terminal_ = event;
  shared_.tally->fired(event == FlowEvent::limit_reached ? FaultKind::limit_data : FaultKind::reset_peer);
  for (Direction d : both_directions) flow(d).discard_queue();
  if (event == FlowEvent::limit_reached) {
    shut_write(fd(Side::client));
    shut_write(fd(Side::server));
  }
  unwatch(Side::client);
  unwatch(Side::server);
  drain_side_ = direction == Direction::upstream ? Side::server : Side::client;
  drain_until_ = now + drain_cap_ms;
  state_ = State::draining;
  step_draining(now);
}

// The K bytes must reach the receiver before the close: an RST drops what the kernel still holds.
void Connection::step_draining(int64_t now) {
  if (unacked_bytes(fd(drain_side_)) > 0 && now < drain_until_) {
    arm(now + 1);
    return;
  }
  if (terminal_ == FlowEvent::limit_reached) {
    drop_unread(fd(Side::client));
    drop_unread(fd(Side::server));
    end("limit_data", false, false);
  } else {
    end("reset_peer", true, false);
  }
}

void Connection::end(const char* why, bool reset_client, bool reset_server) {
  for (Direction d : both_directions) {
    record_.bytes[static_cast<size_t>(d)] = flow(d).written();
    record_.dropped[static_cast<size_t>(d)] = flow(d).dropped();
  }
  record_.end = why;
  if (reset_client) reset_and_close(sockets_[0]);
  if (reset_server) reset_and_close(sockets_[1]);
  sockets_[0].reset();  // closing removes the socket from epoll: no stale event can name it
  sockets_[1].reset();
  state_ = State::closed;
  shared_.tally->ended(record_);
}

void Connection::update_interest() {
  watch(Side::client, (upstream_.wants_read() ? EPOLLIN : 0u) | (downstream_.blocked_on_sink() ? EPOLLOUT : 0u));
  watch(Side::server, (downstream_.wants_read() ? EPOLLIN : 0u) | (upstream_.blocked_on_sink() ? EPOLLOUT : 0u));
}

void Connection::watch(Side side, uint32_t events) {
  auto s = static_cast<size_t>(side);
  if (hung_up_[s] || (registered_[s] && watched_[s] == events)) return;
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = socket_token(index_, side);
  epoll_ctl(shared_.epoll_fd, registered_[s] ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd(side), &ev);
  registered_[s] = true;
  watched_[s] = events;
}

void Connection::unwatch(Side side) {
  auto s = static_cast<size_t>(side);
  if (!registered_[s]) return;
  epoll_ctl(shared_.epoll_fd, EPOLL_CTL_DEL, fd(side), nullptr);
  registered_[s] = false;
}

void Connection::arm(int64_t when) {
  if (armed_at_ >= 0 && armed_at_ <= when) return;  // an earlier wake-up comes first and re-arms
  shared_.timers->arm(when, static_cast<uint64_t>(index_));
  armed_at_ = when;
}

}  // namespace tlsproxy
