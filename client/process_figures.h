// What a run cost the process, read when it ends: CPU time, threads and resident set (the
// summary's cpu_ms, threads, rss_kib, rss_peak_kib), and the descriptors open. Fixed buffers
// only: nothing here may throw.
#pragma once

namespace tlsnb {

struct ProcessFigures {
  double cpu_ms = 0;      // user + system, getrusage(RUSAGE_SELF)
  long threads = 0;       // /proc/self/status Threads
  long rss_kib = 0;       // VmRSS
  long rss_peak_kib = 0;  // VmHWM
};

ProcessFigures read_process_figures();

// Entries of /proc/self/fd now, the listing's own descriptor left out; -1 when it cannot be read.
// (The clients under test report it; tlsnb counts its descriptors as it opens them, RunState.)
long count_open_fds();

}  // namespace tlsnb
