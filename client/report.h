// What a run prints: one JSON object per attempt and a summary, or a one-line-per-outcome
// text summary. Attempt lines carry conn, slot, stage, stage_code, detail, detail_text,
// verify_depth, addr, ms, resumed, tls_version, cipher, http_status, requests_done, in this
// order (the gates parse them).
#pragma once

#include <map>
#include <string>

#include "attempt_record.h"
#include "loop.h"

namespace tlsnb {

struct ProcessFigures {
  double cpu_ms = 0;   // user + system, getrusage(RUSAGE_SELF)
  long threads = 0;    // /proc/self/status Threads
  long rss_kib = 0;    // VmRSS
  long rss_peak_kib = 0;  // VmHWM
};

ProcessFigures read_process_figures();

// Prints one attempt as its JSON line on stdout. Nothing is allocated, so a run out of
// memory still gets every line whole (main's last-resort handler uses it too).
void print_attempt_line(const AttemptRecord& record);
// Attempt lines printed so far (main's last-resort handler must not add a second).
long attempt_lines_printed();

class Report {
 public:
  explicit Report(bool json) : json_(json) {}
  // Counts the attempt's outcome and, in JSON mode, prints its line.
  void attempt(const AttemptRecord& record);
  void summary(const RunStats& stats, const ProcessFigures& figures) const;

 private:
  bool json_;
  std::map<std::string, long> by_outcome_;
  std::map<std::string, std::string> texts_;
};

}  // namespace tlsnb
