#include "report_lines.h"

namespace tlsnb {

namespace {

double cpu_ms_per_conn(const RunTotals& run, const ProcessFigures& process) {
  return run.count > 0 ? process.cpu_ms / static_cast<double>(run.count) : 0;
}

}  // namespace

JsonLine open_attempt_line(FILE* out, const AttemptRecord& r) {
  const Outcome& o = r.outcome;
  JsonLine line(out, "attempt");
  line.num("conn", static_cast<long long>(r.conn))
      .num("slot", r.slot)
      .str("stage", stage_name(o.stage))
      .num("stage_code", static_cast<int>(o.stage))
      .num("detail", o.detail)
      .str("detail_text", o.text)
      .num("verify_depth", o.verify_depth)
      .str("addr", r.addr)
      .real("ms", r.ms)
      .boolean("resumed", r.resumed)
      .str("tls_version", r.tls_version)
      .str("cipher", r.cipher)
      .num("http_status", r.http_status)
      .num("requests_done", r.requests_done);
  return line;
}

JsonLine open_summary_line(FILE* out, const RunTotals& s, const char* by_outcome, const ProcessFigures& f) {
  JsonLine line(out, "summary");
  line.num("count", s.count)
      .num("ok", s.ok)
      .num("failed", s.failed)
      .raw("by_outcome", by_outcome)
      .real("wall_ms", s.wall_ms)
      .real("cpu_ms", f.cpu_ms)
      .real("cpu_ms_per_conn", cpu_ms_per_conn(s, f))
      .num("threads", f.threads)
      .num("peak_fds", s.peak_fds);
  return line;
}

JsonLine& summary_tail(JsonLine& line, const RunTotals& s, const ProcessFigures& f) {
  return line.num("rss_kib", f.rss_kib)
      .num("rss_peak_kib", f.rss_peak_kib)
      .real("loop_gap_max_ms", s.loop_gap_max_ms)
      .num("resumed", s.resumed);
}

void print_summary_text(FILE* out, const RunTotals& s, const ProcessFigures& f, const char* after_peak_fds,
                        const char* at_end) {
  std::fprintf(out,
               "count=%ld ok=%ld failed=%ld resumed=%ld wall_ms=%.1f cpu_ms=%.1f cpu_ms_per_conn=%.3f threads=%ld "
               "peak_fds=%ld %srss_kib=%ld loop_gap_max_ms=%.2f%s\n",
               s.count, s.ok, s.failed, s.resumed, s.wall_ms, f.cpu_ms, cpu_ms_per_conn(s, f), f.threads, s.peak_fds,
               after_peak_fds, f.rss_kib, s.loop_gap_max_ms, at_end);
}

void print_summary_out_of_memory(FILE* out, const RunTotals& s) {
  std::fprintf(out,
               "{\"type\":\"summary\",\"count\":%ld,\"ok\":%ld,\"failed\":%ld,\"by_outcome\":{},"
               "\"detail_text\":\"(summary out of memory)\"}\n",
               s.count, s.ok, s.failed);
}

}  // namespace tlsnb
