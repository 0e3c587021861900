// What a run counts, as every client's summary line reports it (clients/README.md "Output"):
// attempts and how they ended, the run's time, the loop's longest stretch, descriptors.
#pragma once

namespace tlsnb {

struct RunTotals {
  long count = 0;
  long ok = 0;
  long failed = 0;
  long resumed = 0;
  double wall_ms = 0;
  double loop_gap_max_ms = 0;  // longest stretch between two epoll_wait calls
  long peak_fds = 0;           // most descriptors held at once
};

}  // namespace tlsnb
