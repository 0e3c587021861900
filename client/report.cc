#include "report.h"

#include <sys/resource.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <sstream>

namespace tlsnb {

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
  f.cpu_ms = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000.0 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000.0;
  std::ifstream status("/proc/self/status");
  std::string key;
  long value = 0;
  std::string line;
  while (std::getline(status, line)) {
    std::istringstream fields(line);
    fields >> key >> value;
    if (key == "Threads:") f.threads = value;
    else if (key == "VmRSS:") f.rss_kib = value;
    else if (key == "VmHWM:") f.rss_peak_kib = value;
  }
  return f;
}

void Report::attempt(const Attempt& a) {
  const Outcome& o = a.outcome();
  try {
    std::string key = o.key();
    ++by_outcome_[key];
    if (!texts_.count(key)) texts_[key] = o.text;
    if (!json_) return;
    std::ostringstream j;
    j << "{\"type\":\"attempt\",\"conn\":" << a.conn() << ",\"slot\":" << a.slot() << ",\"stage\":\""
      << stage_name(o.stage) << "\",\"stage_code\":" << static_cast<int>(o.stage) << ",\"detail\":" << o.detail
      << ",\"detail_text\":\"" << json_escape(o.text) << "\",\"verify_depth\":" << o.verify_depth << ",\"addr\":\""
      << a.addr() << "\",\"ms\":" << a.elapsed_ms() << ",\"resumed\":" << (a.resumed() ? "true" : "false")
      << ",\"tls_version\":\"" << a.tls_version() << "\",\"cipher\":\"" << a.cipher()
      << "\",\"http_status\":" << a.http_status() << ",\"requests_done\":" << a.requests_done() << "}\n";
    std::fputs(j.str().c_str(), stdout);
  } catch (const std::bad_alloc&) {  // still one line per attempt, from a fixed buffer
    std::printf("{\"type\":\"attempt\",\"conn\":%llu,\"slot\":%d,\"stage\":\"%s\",\"stage_code\":%d,\"detail\":%ld,"
                "\"detail_text\":\"(report out of memory)\"}\n",
                static_cast<unsigned long long>(a.conn()), a.slot(), stage_name(o.stage), static_cast<int>(o.stage),
                o.detail);
  }
}

void Report::summary(const RunStats& s, const ProcessFigures& f) const {
  double per_conn = s.count > 0 ? f.cpu_ms / static_cast<double>(s.count) : 0;
  if (json_) {
    std::ostringstream j;
    j << "{\"type\":\"summary\",\"count\":" << s.count << ",\"ok\":" << s.ok << ",\"failed\":" << s.failed
      << ",\"by_outcome\":{";
    bool first = true;
    for (const auto& [key, n] : by_outcome_) {
      j << (first ? "" : ",") << "\"" << key << "\":" << n;
      first = false;
    }
    j << "},\"wall_ms\":" << s.wall_ms << ",\"cpu_ms\":" << f.cpu_ms << ",\"cpu_ms_per_conn\":" << per_conn
      << ",\"threads\":" << f.threads << ",\"peak_fds\":" << s.peak_fds << ",\"rss_kib\":" << f.rss_kib
      << ",\"rss_peak_kib\":" << f.rss_peak_kib << ",\"loop_gap_max_ms\":" << s.loop_gap_max_ms
      << ",\"resumed\":" << s.resumed << ",\"dns_queries\":" << s.queries << "}\n";
    std::fputs(j.str().c_str(), stdout);
    return;
  }
  for (const auto& [key, n] : by_outcome_) {
    const std::string& text = texts_.at(key);
    std::printf("%-16s %8ld  %s\n", key.c_str(), n, text.c_str());
  }
  std::printf("count=%ld ok=%ld failed=%ld resumed=%ld wall_ms=%.1f cpu_ms=%.1f cpu_ms_per_conn=%.3f threads=%ld "
              "peak_fds=%ld rss_kib=%ld loop_gap_max_ms=%.2f\n",
              s.count, s.ok, s.failed, s.resumed, s.wall_ms, f.cpu_ms, per_conn, f.threads, s.peak_fds, f.rss_kib,
              s.loop_gap_max_ms);
}

}  // namespace tlsnb
