#include "contract_report.h"

#include <cstdio>
#include <new>

#include "client/report_lines.h"

namespace contract {

void Report::attempt(const tlsnb::AttemptRecord& record, const OwnFields& own) {
  try {
    tally_.add(record.outcome);
  } catch (const std::bad_alloc&) {  // only the summary's per-outcome table misses this attempt (as tlsnb)
  }
  if (!json_) return;
  tlsnb::JsonLine line = tlsnb::open_attempt_line(stdout, record);
  if (own) own(line);
  line.done();
}

void Report::summary(const tlsnb::RunTotals& run, const tlsnb::ProcessFigures& process, const OwnFigures& own) const {
  try {
    if (!json_) {
      tally_.print_table(stdout);
      tlsnb::print_summary_text(stdout, run, process, own.text_after_peak_fds.c_str(), own.text_at_end.c_str());
      return;
    }
    tlsnb::JsonLine line = tlsnb::open_summary_line(stdout, run, tally_.json().c_str(), process);
    if (own.after_peak_fds) own.after_peak_fds(line);
    tlsnb::summary_tail(line, run, process);
    if (own.at_end) own.at_end(line);
    line.done();
  } catch (const std::bad_alloc&) {
    summary_out_of_memory(run);
  }
}

void Report::summary_out_of_memory(const tlsnb::RunTotals& run) const {
  tlsnb::print_summary_out_of_memory(stdout, run);
}

}  // namespace contract
