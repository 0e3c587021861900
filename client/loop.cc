#include "loop.h"

#include <arpa/inet.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "dns_error.h"
#include "dns_judge.h"

namespace tlsnb {

Loop::Loop(const Options& options, Shared& shared, Reporter report)
    : options_(options), shared_(shared), report_(std::move(report)) {
  in_addr addr{};
  if (inet_pton(AF_INET, options.dial_literal().c_str(), &addr) == 1) dial_addr_ = ntohl(addr.s_addr);
}

Loop::~Loop() = default;

size_t Loop::in_flight() const { return live_.size(); }

void Loop::start_dial(std::unique_ptr<Attempt> attempt, uint32_t addr) {
  int slot = free_slots_.back();
  free_slots_.pop_back();
  Attempt* raw = attempt.get();
  slots_[static_cast<size_t>(slot)] = std::move(attempt);
  raw->dial(addr, slot);
}

// Starts new attempts while there is room: a lookup slot for names, a connection slot to dial.
// At most admit_per_turn a turn, so starting 1,024 attempts does not stall the loop in one
// stretch; true when more could start at once (the next epoll_wait then does not sleep).
bool Loop::admit(int64_t now) {
  for (int admitted = 0; started_ < options_.count && static_cast<long>(in_flight()) < options_.parallel;
       ++admitted) {
    if (resolver_ ? !resolver_->has_free_slot() : free_slots_.empty()) return false;
    if (admitted == admit_per_turn) return true;
    uint64_t conn = static_cast<uint64_t>(started_);
    std::unique_ptr<Attempt> attempt;
    try {
      attempt = std::make_unique<Attempt>(conn, shared_);
    } catch (const std::bad_alloc&) {
      return true;  // nothing started: try again on the next turn
    }
    ++started_;
    Attempt* raw = attempt.get();
    try {
      live_[conn] = raw;
      timers_.arm(now + options_.deadline_ms, Shared::timer_token(conn, Shared::deadline_timer), 0);
      if (resolver_) {
        raw->set_state(Attempt::State::resolving);
        resolving_[conn] = std::move(attempt);
        resolver_->start(conn);
        timers_.arm(now + options_.dns_timeout_ms, Shared::timer_token(conn, Shared::lookup_timer), 0);
        continue;
      }
      start_dial(std::move(attempt), dial_addr_);
    } catch (const std::bad_alloc&) {
      raw->finish(setup_outcome(SetupFailure::out_of_memory));
      if (attempt) finished_.push_back(std::move(attempt));  // else a slot or the lookup table holds it
    }
  }
  return false;
}

void Loop::fire(const Timer& timer) {
  uint64_t conn = timer.token >> 2;
  auto it = live_.find(conn);
  if (it == live_.end() || it->second->done()) return;  // already over: a lazily cancelled timer
  Attempt* attempt = it->second;
  switch (timer.token & 3) {
    case Shared::hold_timer:
      attempt->on_hold_over();
      return;
    case Shared::lookup_timer:  // the lookup's own deadline: a named code, the attempt's clock still runs
      if (attempt->state() == Attempt::State::resolving && resolver_) resolver_->expire(conn);
      return;
    default:
      break;
  }
  if (attempt->state() == Attempt::State::resolving && resolver_) resolver_->cancel(conn);
  attempt->on_deadline();
}

// Judges each finished lookup: dial the pinned address, or end the attempt.
void Loop::settle_lookups() {
  if (!resolver_) return;
  for (Lookup& lookup : resolver_->take_done()) {
    auto it = resolving_.find(lookup.conn);
    if (it == resolving_.end()) continue;
    std::unique_ptr<Attempt> attempt = std::move(it->second);
    resolving_.erase(it);
    if (attempt->done()) {
      finished_.push_back(std::move(attempt));
      continue;
    }
    if (lookup.code != 0) {
      attempt->finish(make_outcome(Stage::lookup, lookup.code, dns::dns_error_name(lookup.code)));
      finished_.push_back(std::move(attempt));
      continue;
    }
    dns::Pin pin = dns::pin_choose(lookup.addrs, options_.allow_private);
    if (pin.chosen < 0) {
      uint32_t refused = pin.refused >= 0 ? ntohl(lookup.addrs[static_cast<size_t>(pin.refused)].s_addr) : 0;
      char text[INET_ADDRSTRLEN] = "";
      if (pin.refused >= 0) inet_ntop(AF_INET, &lookup.addrs[static_cast<size_t>(pin.refused)], text, sizeof text);
      attempt->finish(pin.refused >= 0 ? make_outcome(Stage::refused, static_cast<long>(refused),
                                                      std::string("refused special-purpose address ") + text)
                                       : make_outcome(Stage::lookup, dns::no_address, "no address"));
      finished_.push_back(std::move(attempt));
      continue;
    }
    if (free_slots_.empty()) {  // cannot happen: admission keeps lookups + dials within --parallel
      attempt->finish(setup_outcome(SetupFailure::socket));
      finished_.push_back(std::move(attempt));
      continue;
    }
    start_dial(std::move(attempt), ntohl(lookup.addrs[static_cast<size_t>(pin.chosen)].s_addr));
  }
  // attempts whose deadline ended their lookup
  for (auto it = resolving_.begin(); it != resolving_.end();) {
    if (it->second->done()) {
      finished_.push_back(std::move(it->second));
      it = resolving_.erase(it);
    } else {
      ++it;
    }
  }
}

void Loop::reap() {
  for (size_t slot = 0; slot < slots_.size(); ++slot) {
    if (slots_[slot] && slots_[slot]->done()) {
      finished_.push_back(std::move(slots_[slot]));
      free_slots_.push_back(static_cast<int>(slot));
    }
  }
  for (auto& attempt : finished_) {
    const Outcome& o = attempt->outcome();
    ++stats_.count;
    if (o.ok()) ++stats_.ok;
    else ++stats_.failed;
    if (attempt->resumed()) ++stats_.resumed;
    report_(*attempt);
    live_.erase(attempt->conn());
  }
  finished_.clear();
}

bool Loop::run(RunStats* stats, std::string* error) {
  double begin = monotonic_ms_precise();
  int epfd = epoll_create1(EPOLL_CLOEXEC);
  if (epfd < 0) {
    *error = std::string("epoll_create1: ") + std::strerror(errno);
    return false;
  }
  Descriptor epoll_owner(epfd);
  shared_.epoll_fd = epfd;
  shared_.timers = &timers_;
  shared_.fd_opened();
  slots_.resize(static_cast<size_t>(options_.parallel));
  for (long i = options_.parallel - 1; i >= 0; --i) free_slots_.push_back(static_cast<int>(i));
  if (!options_.ns_ip.empty()) resolver_ = std::make_unique<Resolver>(shared_, options_);

  std::vector<epoll_event> events(256);
  finished_.reserve(static_cast<size_t>(options_.parallel) + Resolver::slots);
  double woke = monotonic_ms_precise();
  while (stats_.count < options_.count) {
    int64_t now = monotonic_ms();
    bool more = admit(now);
    long reported = stats_.count;
    reap();  // attempts that ended while starting (a setup failure): report them now, not at the next wake-up
    if (stats_.count != reported) continue;
    int timeout = more ? 0 : timers_.timeout_ms(now);
    double gap = monotonic_ms_precise() - woke;  // work done since the last wake-up: the loop was not waiting
    if (gap > stats_.loop_gap_max_ms) stats_.loop_gap_max_ms = gap;
    int n = epoll_wait(epfd, events.data(), static_cast<int>(events.size()), timeout);
    woke = monotonic_ms_precise();
    if (n < 0 && errno != EINTR) {
      *error = std::string("epoll_wait: ") + std::strerror(errno);
      return false;
    }
    for (size_t i = 0; i < static_cast<size_t>(n > 0 ? n : 0); ++i)
      static_cast<Watcher*>(events[i].data.ptr)->on_event(events[i].events);
    for (const Timer& timer : timers_.take_expired(monotonic_ms())) fire(timer);
    settle_lookups();
    reap();
  }
  stats_.wall_ms = monotonic_ms_precise() - begin;
  stats_.peak_fds = shared_.peak_fds;
  if (resolver_) stats_.queries = resolver_->queries_sent();
  resolver_.reset();
  shared_.fd_closed();
  *stats = stats_;
  return true;
}

}  // namespace tlsnb
