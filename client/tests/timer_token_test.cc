// A loop timer's token: which attempt, and which of its timers, survives the round trip.
#include <gtest/gtest.h>

#include "timer_token.h"

using namespace tlsnb;

TEST(TimerToken, ConnAndKindComeBackWhole) {
  for (uint64_t conn : {uint64_t{0}, uint64_t{1}, uint64_t{99999999}, (uint64_t{1} << 61) - 1}) {
    for (TimerKind kind : {TimerKind::deadline, TimerKind::hold, TimerKind::lookup}) {
      TimerToken token = decode_timer(encode_timer(conn, kind));
      EXPECT_EQ(token.conn, conn);
      EXPECT_EQ(token.kind, kind);
    }
  }
}

TEST(TimerToken, OneAttemptsTimersHaveDistinctTokens) {
  EXPECT_NE(encode_timer(5, TimerKind::deadline), encode_timer(5, TimerKind::hold));
  EXPECT_NE(encode_timer(5, TimerKind::hold), encode_timer(5, TimerKind::lookup));
  EXPECT_NE(encode_timer(5, TimerKind::deadline), encode_timer(6, TimerKind::deadline));
}
