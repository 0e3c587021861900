// Outcomes and the contract's output: one line per attempt, one summary (clients/README.md).
#pragma once

#include <map>
#include <string>

#include "client/outcome.h"

namespace tlsnb_curl {

// The lab's stages, details and outcomes are the reference's (client/outcome.h, one copy).
using tlsnb::make_outcome;
using tlsnb::Outcome;
using tlsnb::Stage;
using tlsnb::stage_name;
namespace details = tlsnb::details;

// What one attempt reports.
struct AttemptLine {
  long conn = 0;
  int slot = -1;
  Outcome outcome;
  std::string addr;
  double ms = 0;
  bool resumed = false;
  std::string tls_version;
  std::string cipher;
  long http_status = 0;
  long requests_done = 0;
  long connections = 0;  // TCP connections libcurl opened for this attempt (1 expected)
};

struct RunStats {
  long count = 0, ok = 0, failed = 0, resumed = 0;
  double wall_ms = 0;
  double loop_gap_max_ms = 0;
  long peak_fds = 0;      // most descriptors in /proc/self/fd above those open at start
  long peak_sockets = 0;  // most connection sockets open at once
  long connections = 0;   // sockets libcurl opened in all
  long multis = 0;        // multi handles made (one per slot, remade when a connection lingered)
};

struct ProcessFigures {
  double cpu_ms = 0;
  long threads = 0, rss_kib = 0, rss_peak_kib = 0;
};

ProcessFigures read_process_figures();
long count_open_fds();  // entries in /proc/self/fd, without the one reading it
std::string json_escape(const std::string& text);

class Report {
 public:
  explicit Report(bool json) : json_(json) {}
  void attempt(const AttemptLine& a);
  void summary(const RunStats& s, const ProcessFigures& f) const;

 private:
  bool json_;
  std::map<std::string, long> by_outcome_;
  std::map<std::string, std::string> texts_;
};

}  // namespace tlsnb_curl
