// The contract's lines (clients/README.md "Output"): an attempt's fields and the summary's
// figures, each in the contract's order, as tlsnb prints them; a client under test adds its own
// fields where its line puts them (open_* leave the line open; JsonLine::done() ends it).
#pragma once

#include <cstdio>

#include "attempt_record.h"
#include "json_line.h"
#include "process_figures.h"
#include "run_totals.h"

namespace tlsnb {

// conn, slot, stage, stage_code, detail, detail_text, verify_depth, addr, ms, resumed,
// tls_version, cipher, http_status, requests_done.
JsonLine open_attempt_line(FILE* out, const AttemptRecord& record);

// count, ok, failed, by_outcome (a JSON object), wall_ms, cpu_ms, cpu_ms_per_conn, threads,
// peak_fds: a client's counts of its own connections may follow.
JsonLine open_summary_line(FILE* out, const RunTotals& run, const char* by_outcome, const ProcessFigures& process);
// rss_kib, rss_peak_kib, loop_gap_max_ms, resumed: the rest of the summary but a client's own figures.
JsonLine& summary_tail(JsonLine& line, const RunTotals& run, const ProcessFigures& process);

// The same figures as one line of text (without --json); a client's own, already formatted,
// after peak_fds ("peak_sockets=3 ") and at the end (" library=GnuTLS 3.7.9").
void print_summary_text(FILE* out, const RunTotals& run, const ProcessFigures& process,
                        const char* after_peak_fds = "", const char* at_end = "");

// The summary when making the full one ran out of memory: the counts, an empty by_outcome and
// "(summary out of memory)", with no allocation (stdout's buffer is there after the attempt lines).
void print_summary_out_of_memory(FILE* out, const RunTotals& run);

}  // namespace tlsnb
