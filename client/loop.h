// The event loop: one thread, one epoll set, `parallel` connection slots, the resolver's
// slots, and one DeadlineQueue whose earliest timer is epoll's timeout.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attempt_record.h"
#include "deadline_queue.h"
#include "dns_judge.h"
#include "run_config.h"
#include "run_state.h"
#include "run_totals.h"

namespace tlsnb {

class Attempt;
class Resolver;
struct Lookup;

// The run's totals (the summary's), plus the DNS queries the resolver sent.
struct RunStats : RunTotals {
  long queries = 0;
};

class Loop {
 public:
  using Reporter = std::function<void(const AttemptRecord&)>;
  Loop(const RunConfig& config, RunState& shared, Reporter report);
  ~Loop();
  // Runs every attempt to its outcome. False (with `error`) only when the loop itself cannot start.
  bool run(RunStats* stats, std::string* error);

 private:
  static constexpr int admit_per_turn = 64;
  bool admit(int64_t now);
  void start_dial(Attempt& attempt, const dns::Address& addr);
  void fire(const Timer& timer);
  void settle_lookups();
  void settle(Attempt& attempt, const Lookup& lookup);
  void reap();

  const RunConfig& config_;
  RunState& shared_;
  Reporter report_;
  DeadlineQueue timers_;
  std::unique_ptr<Resolver> resolver_;
  // Every attempt not yet reported, by conn: resolving, dialled, or done and waiting for reap().
  std::map<uint64_t, std::unique_ptr<Attempt>> attempts_;
  // Connection slots no attempt holds; an attempt's slot comes back when it is reaped.
  std::vector<int> free_slots_;
  dns::Address dial_addr_;  // the literal to dial when there is no lookup
  long started_ = 0;
  RunStats stats_;
};

}  // namespace tlsnb
