// What a run prints: one JSON object per attempt and a summary, or a one-line-per-outcome
// text summary. The lines' fields and their order are the contract's (report_lines.h: the
// gates parse them); tlsnb's summary adds dns_queries.
#pragma once

#include "attempt_record.h"
#include "loop.h"
#include "outcome_tally.h"
#include "process_figures.h"

namespace tlsnb {

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
  OutcomeTally tally_;
};

}  // namespace tlsnb
