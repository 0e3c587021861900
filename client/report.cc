#include "report.h"

#include <cstdio>
#include <new>

#include "report_lines.h"

namespace tlsnb {

namespace {

long printed_attempts = 0;

}  // namespace

void print_attempt_line(const AttemptRecord& r) {
  open_attempt_line(stdout, r).done();
  ++printed_attempts;
}

long attempt_lines_printed() { return printed_attempts; }

void Report::attempt(const AttemptRecord& r) {
  try {
    tally_.add(r.outcome);
  } catch (const std::bad_alloc&) {  // only the summary's per-outcome table misses this attempt
  }
  if (json_) print_attempt_line(r);
}

void Report::summary(const RunStats& s, const ProcessFigures& f) const {
  try {
    if (!json_) {
      tally_.print_table(stdout);
      print_summary_text(stdout, s, f);
      return;
    }
    JsonLine line = open_summary_line(stdout, s, tally_.json().c_str(), f);
    summary_tail(line, s, f).num("dns_queries", s.queries).done();
  } catch (const std::bad_alloc&) {  // the counts still go out, without the per-outcome table
    print_summary_out_of_memory(stdout, s);
  }
}

}  // namespace tlsnb
