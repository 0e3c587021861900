#include "loop.h"

#include <arpa/inet.h>
#include <sys/epoll.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <new>

#include "attempt.h"
#include "descriptor.h"
#include "dns_error.h"
#include "dns_judge.h"
#include "resolver.h"
#include "timer_token.h"

namespace tlsnb {

namespace {

// refused/packed IPv4 (host order), or refused/-6 for IPv6 (16 octets do not fit the detail):
// the text names the address, and for IPv6 why (client/README.md "refused").
Outcome refused_outcome(const dns::Address& addr) {
  long detail = addr.family == AF_INET6 ? details::refused_ipv6 : static_cast<long>(ntohl(addr.v4.s_addr));
  std::string text = "refused special-purpose address " + dns::address_text(addr);
  if (addr.family == AF_INET6) text += " (" + dns::special_reason(addr) + ")";
  return make_outcome(Stage::refused, detail, text);
}

}  // namespace

Loop::Loop(const RunConfig& config, RunState& shared, Reporter report)
    : config_(config), shared_(shared), report_(std::move(report)) {
  dns::address_from_text(config.dial_literal(), dial_addr_);
}

Loop::~Loop() = default;

void Loop::start_dial(Attempt& attempt, const dns::Address& addr) {
  int slot = free_slots_.back();
  free_slots_.pop_back();
  attempt.dial(addr, slot);
}

// Starts new attempts while there is room: a lookup slot for names, a connection slot to dial.
// At most admit_per_turn a turn, so starting 1,024 attempts does not stall the loop in one
// stretch; true when more could start at once (the next epoll_wait then does not sleep).
bool Loop::admit(int64_t now) {
  for (int admitted = 0; started_ < config_.count && static_cast<long>(attempts_.size()) < config_.parallel;
       ++admitted) {
    if (resolver_ ? !resolver_->has_free_slot() : free_slots_.empty()) return false;
    if (admitted == admit_per_turn) return true;
    uint64_t conn = static_cast<uint64_t>(started_);
    Attempt* attempt = nullptr;
    try {
      auto made = attempts_.emplace(conn, std::make_unique<Attempt>(conn, shared_));
      attempt = made.first->second.get();
    } catch (const std::bad_alloc&) {
      return true;  // nothing started: try again on the next turn
    }
    ++started_;
    try {
      timers_.arm(now + config_.deadline_ms, encode_timer(conn, TimerKind::deadline));
      if (resolver_) {
        attempt->set_state(Attempt::State::resolving);
        resolver_->start(conn);
        timers_.arm(now + config_.dns_timeout_ms, encode_timer(conn, TimerKind::lookup));
        continue;
      }
      start_dial(*attempt, dial_addr_);
    } catch (const std::bad_alloc&) {
      attempt->finish(setup_outcome(SetupFailure::out_of_memory));  // reap() reports it
    }
  }
  return false;
}

// Cancellation is lazy: a timer whose attempt was reported, or is done, finds nothing to do.
void Loop::fire(const Timer& timer) {
  TimerToken token = decode_timer(timer.token);
  auto it = attempts_.find(token.conn);
  if (it == attempts_.end() || it->second->done()) return;
  Attempt& attempt = *it->second;
  bool resolving = attempt.state() == Attempt::State::resolving && resolver_;
  switch (token.kind) {
    case TimerKind::hold:
      attempt.on_hold_over();
      return;
    case TimerKind::lookup:  // the lookup's own deadline: a named code, the attempt's clock still runs
      if (resolving) resolver_->expire(token.conn);
      return;
    case TimerKind::fallback:
      attempt.on_fallback_timer();
      return;
    case TimerKind::deadline:
      if (resolving) resolver_->cancel(token.conn);
      attempt.on_deadline();
      return;
  }
}

// Judges each finished lookup: dial the pinned address, or end the attempt.
void Loop::settle_lookups() {
  if (!resolver_) return;
  for (Lookup& lookup : resolver_->take_done()) {
    auto it = attempts_.find(lookup.conn);
    if (it == attempts_.end() || it->second->state() != Attempt::State::resolving) continue;  // done meanwhile
    settle(*it->second, lookup);
  }
}

void Loop::settle(Attempt& attempt, const Lookup& lookup) {
  if (lookup.code != 0) {
    attempt.finish(make_outcome(Stage::lookup, lookup.code, dns::dns_error_name(lookup.code)));
    return;
  }
  dns::Pin pin = dns::pin_choose(lookup.addrs, config_.allow_private);
  if (pin.chosen < 0) {
    attempt.finish(pin.refused >= 0 ? refused_outcome(lookup.addrs[static_cast<size_t>(pin.refused)])
                                    : make_outcome(Stage::lookup, dns::no_address, "no address"));
    return;
  }
  if (free_slots_.empty()) {  // cannot happen: admission keeps lookups + dials within --parallel
    attempt.finish(setup_outcome(SetupFailure::socket));
    return;
  }
  // RFC 8305: the first IPv6 address first; the first IPv4 one after the head start (or at once
  // when the IPv6 connect fails). One family: its first address.
  auto first_of = [&lookup](int family) {
    return std::find_if(lookup.addrs.begin(), lookup.addrs.end(),
                        [family](const dns::Address& a) { return a.family == family; });
  };
  auto six = first_of(AF_INET6);
  auto four = first_of(AF_INET);
  if (six == lookup.addrs.end() || four == lookup.addrs.end()) {
    start_dial(attempt, lookup.addrs[static_cast<size_t>(pin.chosen)]);
    return;
  }
  attempt.set_fallback(*four);
  start_dial(attempt, *six);
  if (!attempt.done()) timers_.arm(monotonic_ms() + config_.head_start_ms, encode_timer(attempt.conn(), TimerKind::fallback));
}

// Reports every attempt that is done, in conn order, and gives its slot back.
void Loop::reap() {
  for (auto it = attempts_.begin(); it != attempts_.end();) {
    if (!it->second->done()) {
      ++it;
      continue;
    }
    AttemptRecord record = it->second->take_record();
    it = attempts_.erase(it);
    if (record.slot >= 0) free_slots_.push_back(record.slot);
    ++stats_.count;
    if (record.outcome.ok()) ++stats_.ok;
    else ++stats_.failed;
    if (record.resumed) ++stats_.resumed;
    report_(record);
  }
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
  free_slots_.reserve(static_cast<size_t>(config_.parallel));
  for (long i = config_.parallel - 1; i >= 0; --i) free_slots_.push_back(static_cast<int>(i));
  if (!config_.ns_ip.empty()) resolver_ = std::make_unique<Resolver>(shared_, config_);

  std::vector<epoll_event> events(256);
  double woke = monotonic_ms_precise();
  while (stats_.count < config_.count) {
    int64_t now = monotonic_ms();
    bool more = admit(now);
    settle_lookups();  // a lookup that ended as it started (a name no query can carry): judged now, not at a timer
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
