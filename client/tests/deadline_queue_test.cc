// The deadline structure: earliest first, only what is due, a timeout for epoll.
#include <gtest/gtest.h>

#include "deadline_queue.h"

using tlsnb::DeadlineQueue;

TEST(DeadlineQueue, EmptyMeansWaitForever) {
  DeadlineQueue q;
  EXPECT_EQ(q.timeout_ms(1000), -1);
  EXPECT_TRUE(q.take_expired(1000).empty());
}

TEST(DeadlineQueue, TimeoutIsTheEarliestTimer) {
  DeadlineQueue q;
  q.arm(1500, 1);
  q.arm(1200, 2);
  q.arm(1900, 3);
  EXPECT_EQ(q.timeout_ms(1000), 200);
  EXPECT_EQ(q.timeout_ms(1200), 0);
  EXPECT_EQ(q.timeout_ms(5000), 0);
}

TEST(DeadlineQueue, OnlyDueTimersAreTakenEarliestFirst) {
  DeadlineQueue q;
  for (uint64_t i = 0; i < 100; ++i) q.arm(static_cast<int64_t>(1000 + (i * 37) % 100), i);
  auto due = q.take_expired(1049);
  ASSERT_EQ(due.size(), 50u);
  for (size_t i = 1; i < due.size(); ++i) EXPECT_LE(due[i - 1].when_ms, due[i].when_ms);
  EXPECT_EQ(q.size(), 50u);
  EXPECT_EQ(q.timeout_ms(1049), 1);
}

TEST(DeadlineQueue, TokenTravelsWithTheTimer) {
  DeadlineQueue q;
  q.arm(10, 7);
  auto due = q.take_expired(10);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].token, 7u);
}

/* Nothing is cancelled: a timer stays until it expires, however many share its token */
TEST(DeadlineQueue, ATimerIsOnlyGoneWhenTaken) {
  DeadlineQueue q;
  q.arm(10, 7);
  q.arm(20, 7);
  EXPECT_EQ(q.take_expired(15).size(), 1u);
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.take_expired(20).size(), 1u);
  EXPECT_EQ(q.size(), 0u);
}

/* epoll's timeout is capped at 1,000,000 ms, exactly: a timer further away waits the cap, one nearer its own time */
TEST(DeadlineQueue, TimeoutIsCappedAtOneMillionMilliseconds) {
  auto timeout_for = [](int64_t ahead_ms) {  // one timer AHEAD_MS after now (1000)
    DeadlineQueue q;
    q.arm(1000 + ahead_ms, 1);
    return q.timeout_ms(1000);
  };
  EXPECT_EQ(timeout_for(5000000), 1000000);
  EXPECT_EQ(timeout_for(1000001), 1000000);
  EXPECT_EQ(timeout_for(1000000), 1000000);
  EXPECT_EQ(timeout_for(999999), 999999);
}

/* The whole-millisecond clock is the precise one cut down, not another scale */
TEST(DeadlineQueue, MillisecondClockAgreesWithThePreciseOne) {
  double before = tlsnb::monotonic_ms_precise();
  int64_t ms = tlsnb::monotonic_ms();
  double after = tlsnb::monotonic_ms_precise();
  EXPECT_GE(static_cast<double>(ms), before - 1.0);
  EXPECT_LE(static_cast<double>(ms), after);
}
