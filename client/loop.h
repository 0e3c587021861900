// The event loop: one thread, one epoll set, `parallel` connection slots, the resolver's
// slots, and one DeadlineQueue whose earliest timer is epoll's timeout.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "attempt.h"
#include "deadline_queue.h"
#include "options.h"
#include "resolver.h"

namespace tlsnb {

struct RunStats {
  long count = 0;
  long ok = 0;
  long failed = 0;
  double wall_ms = 0;
  double loop_gap_max_ms = 0;  // longest stretch between two epoll_wait calls
  long peak_fds = 0;
  long resumed = 0;
  long queries = 0;
};

class Loop {
 public:
  using Reporter = std::function<void(const Attempt&)>;
  Loop(const Options& options, Shared& shared, Reporter report);
  ~Loop();
  // Runs every attempt to its outcome. False (with `error`) only when the loop itself cannot start.
  bool run(RunStats* stats, std::string* error);

 private:
  static constexpr int admit_per_turn = 64;
  bool admit(int64_t now);
  void start_dial(std::unique_ptr<Attempt> attempt, uint32_t addr);
  void fire(const Timer& timer);
  void settle_lookups();
  void reap();
  size_t in_flight() const;

  const Options& options_;
  Shared& shared_;
  Reporter report_;
  DeadlineQueue timers_;
  std::unique_ptr<Resolver> resolver_;
  std::vector<std::unique_ptr<Attempt>> slots_;   // attempts that hold a connection slot
  std::vector<int> free_slots_;
  std::unordered_map<uint64_t, std::unique_ptr<Attempt>> resolving_;  // attempts waiting for a lookup
  std::unordered_map<uint64_t, Attempt*> live_;    // every attempt not yet reported, by conn
  std::vector<std::unique_ptr<Attempt>> finished_;
  uint32_t dial_addr_ = 0;  // host order: the literal to dial when there is no lookup
  long started_ = 0;
  RunStats stats_;
};

}  // namespace tlsnb
