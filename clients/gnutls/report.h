// What the run prints: one JSON line per attempt as it ends and one summary line (--json), or
// a short human table. Field names are tlsnb's (clients/README.md "Output").
#pragma once

#include <map>
#include <string>

#include "attempt.h"
#include "loop.h"

namespace tlsgnu {

struct ProcessFigures {
  double cpu_ms = 0;  // getrusage: user + system
  long threads = 0;
  long rss_kib = 0;
  long rss_peak_kib = 0;
  long fds_open = -1;  // entries of /proc/self/fd when the summary is made (stdio included)
};

ProcessFigures read_process_figures();
std::string json_escape(const std::string& text);

class Report {
 public:
  explicit Report(bool json) : json_(json) {}
  void attempt(const Attempt& a);
  void summary(const RunStats& stats, const ProcessFigures& figures) const;

 private:
  bool json_;
  std::map<std::string, long> by_outcome_;
  std::map<std::string, std::string> texts_;  // the first detail_text of each outcome
};

}  // namespace tlsgnu
