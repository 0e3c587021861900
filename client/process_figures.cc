#include "process_figures.h"

#include <dirent.h>
#include <sys/resource.h>

#include <cstdio>

namespace tlsnb {

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
  while (dirent* entry = readdir(dir))
    if (entry->d_name[0] != '.') ++n;
  closedir(dir);
  return n - 1;  // the listing's own descriptor
}

}  // namespace tlsnb
