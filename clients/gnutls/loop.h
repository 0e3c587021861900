// The event loop: one thread, one epoll set, --parallel slots, and one DeadlineQueue whose
// earliest timer is epoll_wait's timeout.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "attempt.h"
#include "client/deadline_queue.h"
#include "client/run_totals.h"
#include "options.h"

namespace tlsgnu {

// The run's totals, as the summary reports them.
using RunStats = tlsnb::RunTotals;

class Loop {
 public:
  using Reporter = std::function<void(const Attempt&)>;
  Loop(const Options& options, Shared& shared, Reporter report);
  // Runs every attempt to its outcome; false (with `error`) only when the loop cannot start.
  bool run(RunStats* stats, std::string* error);

 private:
  static constexpr int admit_per_turn = 64;
  bool admit(int64_t now);
  void fire(const tlsnb::Timer& timer);
  void reap();

  const Options& options_;
  Shared& shared_;
  Reporter report_;
  tlsnb::DeadlineQueue timers_;
  std::vector<std::unique_ptr<Attempt>> slots_;
  std::vector<int> free_slots_;
  std::unordered_map<uint64_t, Attempt*> live_;  // attempts not yet reported, by conn
  uint32_t dial_addr_ = 0;                        // host order
  long started_ = 0;
  RunStats stats_;
};

}  // namespace tlsgnu
