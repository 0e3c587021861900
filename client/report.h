// What a run prints: one JSON object per attempt and a summary (DESIGN.md), or a
// one-line-per-outcome text summary.
#pragma once

#include <map>
#include <string>

#include "attempt.h"
#include "loop.h"

namespace tlsnb {

struct ProcessFigures {
  double cpu_ms = 0;   // user + system, getrusage(RUSAGE_SELF)
  long threads = 0;    // /proc/self/status Threads
  long rss_kib = 0;    // VmRSS
  long rss_peak_kib = 0;  // VmHWM
};

ProcessFigures read_process_figures();

class Report {
 public:
  explicit Report(bool json) : json_(json) {}
  // Prints the attempt (JSON mode) and counts its outcome.
  void attempt(const Attempt& attempt);
  void summary(const RunStats& stats, const ProcessFigures& figures) const;

 private:
  bool json_;
  std::map<std::string, long> by_outcome_;
  std::map<std::string, std::string> texts_;
};

std::string json_escape(const std::string& text);
// Attempt lines printed by any Report so far (main's last-resort handler must not add a second).
long attempt_lines_printed();

}  // namespace tlsnb
