// The contract's output for a client under test (clients/README.md "Output"): one JSON line per
// attempt as it ends and one summary line (--json), or the outcome table and one line of text.
// The lines are tlsnb's (client/report_lines.h); a client's own fields go where it puts them.
#pragma once

#include <functional>
#include <string>

#include "client/attempt_record.h"
#include "client/json_line.h"
#include "client/outcome_tally.h"
#include "client/process_figures.h"
#include "client/run_totals.h"

namespace contract {

// A client's own fields, added to one of the contract's lines.
using OwnFields = std::function<void(tlsnb::JsonLine&)>;

// A client's own summary figures, where it puts them: JSON fields after peak_fds and at the
// end, and the same figures' words in the text line.
struct OwnFigures {
  OwnFields after_peak_fds;
  OwnFields at_end;
  std::string text_after_peak_fds;  // "peak_sockets=3 "
  std::string text_at_end;          // " library=GnuTLS 3.7.9"
};

class Report {
 public:
  explicit Report(bool json) : json_(json) {}
  // Counts the attempt's outcome and, with --json, prints its line: the contract's fields, then `own`.
  void attempt(const tlsnb::AttemptRecord& record, const OwnFields& own = nullptr);
  // Out of memory while making it, the counts still go out (summary_out_of_memory), as tlsnb's do.
  void summary(const tlsnb::RunTotals& run, const tlsnb::ProcessFigures& process, const OwnFigures& own) const;
  // The last-resort summary, for a client whose own figures could not be made for want of memory.
  void summary_out_of_memory(const tlsnb::RunTotals& run) const;

 private:
  bool json_;
  tlsnb::OutcomeTally tally_;
};

}  // namespace contract
