// The report: the text summary (a line per outcome, then the totals), the count of attempt
// lines main's last-resort handler reads, and the process figures the summary prints.
#include "report.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <string>

using tlsnb::AttemptRecord;
using tlsnb::Report;

namespace {

AttemptRecord record(tlsnb::Stage stage, long detail, const char* text) {
  AttemptRecord r;
  r.outcome = tlsnb::make_outcome(stage, detail, text);
  return r;
}

}  // namespace

/* Without --json: one line per outcome (key, count, the first text seen for it), then the totals */
TEST(Report, TextSummaryIsATableThenTheTotals) {
  Report report(false);
  testing::internal::CaptureStdout();
  report.attempt(record(tlsnb::Stage::ok, 0, "ok"));
  report.attempt(record(tlsnb::Stage::handshake, 10, "certificate has expired"));
  report.attempt(record(tlsnb::Stage::ok, 0, "ok"));
  report.attempt(record(tlsnb::Stage::handshake, 10, "a later text for the same outcome"));
  tlsnb::RunStats stats;
  stats.count = 4;
  stats.ok = 2;
  stats.failed = 2;
  report.summary(stats, tlsnb::ProcessFigures{});
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(0u, out.find("handshake/10            2  certificate has expired\n"
                         "ok/0                    2  ok\n"
                         "count=4 ok=2 failed=2 resumed=0 "))
      << out;
  EXPECT_EQ(std::string::npos, out.find("a later text")) << out;
  EXPECT_EQ(std::string::npos, out.find('{')) << out;
}

/* Only JSON attempt lines are counted, one each: main prints its out-of-memory line only when none was */
TEST(Report, AttemptLinesAreCountedInJsonModeOnly) {
  EXPECT_EQ(0, tlsnb::attempt_lines_printed());
  testing::internal::CaptureStdout();
  Report(false).attempt(record(tlsnb::Stage::ok, 0, "ok"));
  EXPECT_EQ(0, tlsnb::attempt_lines_printed());
  Report(true).attempt(record(tlsnb::Stage::ok, 0, "ok"));
  Report(true).attempt(record(tlsnb::Stage::ok, 0, "ok"));
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(2, tlsnb::attempt_lines_printed());
  EXPECT_EQ(2, std::count(out.begin(), out.end(), '\n')) << out;
}

/* The figures come from this process: resident memory, its peak, threads and descriptors are never 0 */
TEST(Report, ProcessFiguresAreThisProcesss) {
  tlsnb::ProcessFigures f = tlsnb::read_process_figures();
  EXPECT_GT(f.rss_kib, 0);
  EXPECT_GE(f.rss_peak_kib, f.rss_kib);
  EXPECT_GE(f.threads, 1);
  EXPECT_GE(tlsnb::count_open_fds(), 3);  // stdin, stdout, stderr at least
}

/* count_open_fds (the clients under test print it) agrees with fcntl over every descriptor, and reading leaks none */
TEST(Report, OpenDescriptorsAreCountedExactly) {
  auto by_fcntl = [] {
    long n = 0;
    for (int fd = 0; fd < 4096; ++fd) n += fcntl(fd, F_GETFD) != -1;
    return n;
  };
  long before = tlsnb::count_open_fds();
  EXPECT_EQ(by_fcntl(), before);
  int fds[2];
  ASSERT_EQ(0, pipe(fds));
  int third = dup(fds[0]);
  EXPECT_EQ(before + 3, tlsnb::count_open_fds());
  close(fds[0]);
  close(fds[1]);
  close(third);
  tlsnb::read_process_figures();
  EXPECT_EQ(before, tlsnb::count_open_fds());
  EXPECT_EQ(before, by_fcntl());
}
