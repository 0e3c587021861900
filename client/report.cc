#include "report.h"

#include <sys/resource.h>

#include <cstdio>
#include <cstring>
#include <new>
#include <string_view>

namespace tlsnb {

namespace {

long printed_attempts = 0;

// One JSON object on one line, written to `out` as it is built. Nothing is allocated (numbers
// go through fixed buffers, strings are escaped byte by byte), so an allocation failure can
// neither cut a line short nor lose it.
class JsonLine {
 public:
  JsonLine(FILE* out, const char* type) : out_(out) {
    std::fputs("{\"type\":\"", out_);
    std::fputs(type, out_);
    std::fputc('"', out_);
  }
  JsonLine& num(const char* key, long long value) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%lld", value);
    return raw(key, buf);
  }
  JsonLine& real(const char* key, double value) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", value);
    return raw(key, buf);
  }
  JsonLine& boolean(const char* key, bool value) { return raw(key, value ? "true" : "false"); }
  JsonLine& str(const char* key, std::string_view value) {
    name(key);
    std::fputc('"', out_);
    for (char c : value) escaped(static_cast<unsigned char>(c));
    std::fputc('"', out_);
    return *this;
  }
  JsonLine& raw(const char* key, const char* json) {
    name(key);
    std::fputs(json, out_);
    return *this;
  }
  void done() { std::fputs("}\n", out_); }

 private:
  void name(const char* key) {
    std::fputs(",\"", out_);
    std::fputs(key, out_);
    std::fputs("\":", out_);
  }
  void escaped(unsigned char c) {
    switch (c) {
      case '"': std::fputs("\\\"", out_); break;
      case '\\': std::fputs("\\\\", out_); break;
      case '\n': std::fputs("\\n", out_); break;
      default:
        if (c < 0x20) std::fprintf(out_, "\\u%04x", c);
        else std::fputc(c, out_);
    }
  }

  FILE* out_;
};

}  // namespace

void print_attempt_line(const AttemptRecord& r) {
  const Outcome& o = r.outcome;
  JsonLine(stdout, "attempt")
      .num("conn", static_cast<long long>(r.conn))
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
      .num("requests_done", r.requests_done)
      .done();
  ++printed_attempts;
}

long attempt_lines_printed() { return printed_attempts; }

// getrusage and /proc/self/status, read with fixed buffers (nothing here may throw).
ProcessFigures read_process_figures() {
  ProcessFigures f;
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  f.cpu_ms = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000.0 +
             static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000.0;
  FILE* status = std::fopen("/proc/self/status", "r");
  if (status == nullptr) return f;
  char line[256];
  while (std::fgets(line, sizeof line, status) != nullptr) {
    std::sscanf(line, "Threads: %ld", &f.threads);
    std::sscanf(line, "VmRSS: %ld", &f.rss_kib);
    std::sscanf(line, "VmHWM: %ld", &f.rss_peak_kib);
  }
  std::fclose(status);
  return f;
}

void Report::attempt(const AttemptRecord& r) {
  try {  // the text first: a count never lacks its text, even when an allocation fails between them
    std::string key = r.outcome.key();
    if (!texts_.count(key)) texts_[key] = r.outcome.text;
    ++by_outcome_[key];
  } catch (const std::bad_alloc&) {  // only the summary's per-outcome table misses this attempt
  }
  if (json_) print_attempt_line(r);
}

void Report::summary(const RunStats& s, const ProcessFigures& f) const {
  double per_conn = s.count > 0 ? f.cpu_ms / static_cast<double>(s.count) : 0;
  try {
    if (!json_) {
      for (const auto& [key, n] : by_outcome_) std::printf("%-16s %8ld  %s\n", key.c_str(), n, texts_.at(key).c_str());
      std::printf("count=%ld ok=%ld failed=%ld resumed=%ld wall_ms=%.1f cpu_ms=%.1f cpu_ms_per_conn=%.3f threads=%ld "
                  "peak_fds=%ld rss_kib=%ld loop_gap_max_ms=%.2f\n",
                  s.count, s.ok, s.failed, s.resumed, s.wall_ms, f.cpu_ms, per_conn, f.threads, s.peak_fds, f.rss_kib,
                  s.loop_gap_max_ms);
      return;
    }
    std::string outcomes = "{";
    for (const auto& [key, n] : by_outcome_) outcomes += (outcomes.size() > 1 ? ",\"" : "\"") + key + "\":" + std::to_string(n);
    outcomes += "}";
    JsonLine(stdout, "summary")
        .num("count", s.count)
        .num("ok", s.ok)
        .num("failed", s.failed)
        .raw("by_outcome", outcomes.c_str())
        .real("wall_ms", s.wall_ms)
        .real("cpu_ms", f.cpu_ms)
        .real("cpu_ms_per_conn", per_conn)
        .num("threads", f.threads)
        .num("peak_fds", s.peak_fds)
        .num("rss_kib", f.rss_kib)
        .num("rss_peak_kib", f.rss_peak_kib)
        .real("loop_gap_max_ms", s.loop_gap_max_ms)
        .num("resumed", s.resumed)
        .num("dns_queries", s.queries)
        .done();
  } catch (const std::bad_alloc&) {  // the counts still go out, without the per-outcome table
    std::printf("{\"type\":\"summary\",\"count\":%ld,\"ok\":%ld,\"failed\":%ld,\"by_outcome\":{},"
                "\"detail_text\":\"(summary out of memory)\"}\n",
                s.count, s.ok, s.failed);
  }
}

}  // namespace tlsnb
