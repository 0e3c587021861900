#include "report.h"

#include <dirent.h>
#include <sys/resource.h>

#include <cstdio>

namespace tlsnb_curl {

namespace {

class JsonLine {
 public:
  explicit JsonLine(const char* type) { text_ = std::string("{\"type\":\"") + type + "\""; }
  JsonLine& num(const char* key, long long value) { return raw(key, std::to_string(value)); }
  JsonLine& real(const char* key, double value) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", value);
    return raw(key, buf);
  }
  JsonLine& boolean(const char* key, bool value) { return raw(key, value ? "true" : "false"); }
  JsonLine& str(const char* key, const std::string& value) { return raw(key, "\"" + json_escape(value) + "\""); }
  JsonLine& raw(const char* key, const std::string& json) {
    text_ += ",\"";
    text_ += key;
    text_ += "\":";
    text_ += json;
    return *this;
  }
  std::string done() { return text_ + "}\n"; }

 private:
  std::string text_;
};

}  // namespace

std::string json_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size() + 2);
  for (char raw : text) {
    auto c = static_cast<unsigned char>(raw);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

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

long count_open_fds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  long n = 0;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(dir);
  return n - 1;  // the directory's own descriptor
}

void Report::attempt(const AttemptLine& a) {
  const Outcome& o = a.outcome;
  std::string key = o.key();
  ++by_outcome_[key];
  if (!texts_.count(key)) texts_[key] = o.text;
  if (!json_) return;
  std::string line = JsonLine("attempt")
                         .num("conn", a.conn)
                         .num("slot", a.slot)
                         .str("stage", stage_name(o.stage))
                         .num("stage_code", static_cast<int>(o.stage))
                         .num("detail", o.detail)
                         .str("detail_text", o.text)
                         .num("verify_depth", o.verify_depth)
                         .str("addr", a.addr)
                         .real("ms", a.ms)
                         .boolean("resumed", a.resumed)
                         .str("tls_version", a.tls_version)
                         .str("cipher", a.cipher)
                         .num("http_status", a.http_status)
                         .num("requests_done", a.requests_done)
                         .num("connections", a.connections)
                         .done();
  std::fputs(line.c_str(), stdout);
}

void Report::summary(const RunStats& s, const ProcessFigures& f) const {
  double per_conn = s.count > 0 ? f.cpu_ms / static_cast<double>(s.count) : 0;
  if (!json_) {
    for (const auto& [key, n] : by_outcome_) std::printf("%-16s %8ld  %s\n", key.c_str(), n, texts_.at(key).c_str());
    std::printf("count=%ld ok=%ld failed=%ld resumed=%ld wall_ms=%.1f cpu_ms=%.1f cpu_ms_per_conn=%.3f threads=%ld "
                "peak_fds=%ld peak_sockets=%ld rss_kib=%ld loop_gap_max_ms=%.2f\n",
                s.count, s.ok, s.failed, s.resumed, s.wall_ms, f.cpu_ms, per_conn, f.threads, s.peak_fds,
                s.peak_sockets, f.rss_kib, s.loop_gap_max_ms);
    return;
  }
  std::string outcomes = "{";
  for (const auto& [key, n] : by_outcome_) outcomes += (outcomes.size() > 1 ? ",\"" : "\"") + key + "\":" + std::to_string(n);
  outcomes += "}";
  std::string line = JsonLine("summary")
                         .num("count", s.count)
                         .num("ok", s.ok)
                         .num("failed", s.failed)
                         .raw("by_outcome", outcomes)
                         .real("wall_ms", s.wall_ms)
                         .real("cpu_ms", f.cpu_ms)
                         .real("cpu_ms_per_conn", per_conn)
                         .num("threads", f.threads)
                         .num("peak_fds", s.peak_fds)
                         .num("peak_sockets", s.peak_sockets)
                         .num("connections", s.connections)
                         .num("multis", s.multis)
                         .num("rss_kib", f.rss_kib)
                         .num("rss_peak_kib", f.rss_peak_kib)
                         .real("loop_gap_max_ms", s.loop_gap_max_ms)
                         .num("resumed", s.resumed)
                         .done();
  std::fputs(line.c_str(), stdout);
}

}  // namespace tlsnb_curl
