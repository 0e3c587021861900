// The pacer on a fake clock: segment sizes and pauses, latency order, bandwidth.
#include <gtest/gtest.h>

#include "options.h"
#include "pacer.h"

using namespace tlsproxy;

namespace {

// A pacer for one downstream fault list, connection 0.
struct Paced {
  explicit Paced(std::vector<std::string> faults) {
    std::vector<std::string> args = {"--upstream", "127.0.0.1:9", "--seed", "1"};
    for (const std::string& f : faults) args.insert(args.end(), {"--fault", f});
    options = *parse_options(args).options;
    plan = FlowPlan(options.faults, 0, Direction::downstream);
  }
  Pacer make() const { return Pacer(plan, SeededStream(options.seed, 0, 1)); }
  Options options;
  FlowPlan plan;
};

}  // namespace

TEST(Pacer, NoFaultLetsEverythingGoAtOnce) {
  Paced p({});
  Pacer pacer = p.make();
  int64_t wake = -1;
  EXPECT_EQ(pacer.release_time(100), 100);
  EXPECT_EQ(pacer.allowance(100, 5000, &wake), 5000u);
}

TEST(Pacer, SlicerCutsSegmentsAndPausesBetweenThem) {
  Paced p({"downstream:slicer:size=4,delay_ms=10"});
  Pacer pacer = p.make();
  int64_t wake = -1;
  ASSERT_EQ(pacer.allowance(0, 10, &wake), 4u);
  pacer.wrote(0, 4);
  EXPECT_EQ(pacer.allowance(5, 6, &wake), 0u);
  EXPECT_EQ(wake, 11);  // 10 ms on a clock that may read up to 1 ms early: 11
  EXPECT_EQ(pacer.allowance(10, 6, &wake), 0u);
  EXPECT_EQ(pacer.allowance(11, 6, &wake), 4u);
  pacer.wrote(11, 4);
  EXPECT_EQ(pacer.segments(), 2u);
}

TEST(Pacer, ShortWriteLeavesTheSegmentOpenWithoutAPause) {
  Paced p({"downstream:slicer:size=4,delay_ms=10"});
  Pacer pacer = p.make();
  int64_t wake = -1;
  ASSERT_EQ(pacer.allowance(0, 10, &wake), 4u);
  pacer.wrote(0, 1);
  EXPECT_EQ(pacer.allowance(0, 9, &wake), 3u);
  EXPECT_EQ(pacer.segments(), 0u);
}

TEST(Pacer, LastPartialSegmentIsNotHeldBack) {
  Paced p({"downstream:slicer:size=7,delay_ms=1"});
  Pacer pacer = p.make();
  int64_t wake = -1;
  EXPECT_EQ(pacer.allowance(0, 3, &wake), 3u);
}

TEST(Pacer, SegmentVariationStaysInItsRangeAndIsSeeded) {
  Paced p({"downstream:slicer:size=5,variation=3"});
  Pacer a = p.make();
  Pacer b = p.make();
  for (int i = 0; i < 200; ++i) {
    int64_t wake = -1;
    size_t n = a.allowance(i, 1000, &wake);
    EXPECT_GE(n, 2u);
    EXPECT_LE(n, 8u);
    EXPECT_EQ(n, b.allowance(i, 1000, &wake));
    a.wrote(i, n);
    b.wrote(i, n);
  }
}

TEST(Pacer, LatencyJitterNeverReordersChunks) {
  Paced p({"downstream:latency:ms=50,jitter=40"});
  Pacer pacer = p.make();
  int64_t last = 0;
  for (int64_t now = 0; now < 100; ++now) {
    int64_t when = pacer.release_time(now);
    EXPECT_GE(when, now + 11);
    EXPECT_LE(when, now + 91 > last ? now + 91 : last);
    EXPECT_GE(when, last);
    last = when;
  }
}

TEST(Pacer, BandwidthHoldsTheRate) {
  Paced p({"downstream:bandwidth:rate=100"});  // 100 bytes a ms
  Pacer pacer = p.make();
  size_t sent = 0;
  int64_t now = 0;
  while (sent < 100000) {
    int64_t wake = -1;
    size_t n = pacer.allowance(now, 100000 - sent, &wake);
    if (n == 0) {
      ASSERT_GT(wake, now);
      now = wake;
      continue;
    }
    pacer.wrote(now, n);
    sent += n;
  }
  EXPECT_GE(now, 990);   // 100,000 bytes at 100 KB/s: a second, less the first write's 10 ms
  EXPECT_LE(now, 1010);
}
