// Outcome mapping: stable names and numbers (the failure rows live in ssl_failure_test.cc).
#include <gtest/gtest.h>

#include <cerrno>

#include "outcome.h"

using namespace tlsnb;

TEST(Outcome, StagesHaveTheirStableNumbersAndNames) {
  EXPECT_EQ(static_cast<int>(Stage::ok), 0);
  EXPECT_EQ(static_cast<int>(Stage::connect), 1);
  EXPECT_EQ(static_cast<int>(Stage::handshake), 2);
  EXPECT_EQ(static_cast<int>(Stage::write), 3);
  EXPECT_EQ(static_cast<int>(Stage::read), 4);
  EXPECT_EQ(static_cast<int>(Stage::setup), 5);
  EXPECT_EQ(static_cast<int>(Stage::lookup), 6);
  EXPECT_EQ(static_cast<int>(Stage::refused), 7);
  EXPECT_EQ(static_cast<int>(Stage::deadline), 102);
  EXPECT_STREQ(stage_name(Stage::deadline), "deadline");
  EXPECT_STREQ(stage_name(Stage::refused), "refused");
}

TEST(Outcome, KeyIsStageSlashDetail) {
  EXPECT_EQ(make_outcome(Stage::handshake, 10, "expired").key(), "handshake/10");
  EXPECT_EQ(errno_outcome(Stage::connect, ECONNREFUSED).key(), "connect/111");
  EXPECT_EQ(errno_outcome(Stage::connect, ECONNREFUSED).text, "Connection refused");
  EXPECT_EQ(setup_outcome(SetupFailure::bio_new).key(), "setup/2");
}

// A peer that closes during the handshake: handshake/-1, its errno named in the text when there is one.
TEST(Outcome, PeerClosedNamesItsErrnoOnlyWhenThereIsOne) {
  EXPECT_EQ(peer_closed_outcome(0).key(), "handshake/-1");
  EXPECT_EQ(peer_closed_outcome(0).text, "peer closed the connection without an alert");
  EXPECT_EQ(peer_closed_outcome(ECONNRESET).text,
            "peer closed the connection without an alert (Connection reset by peer)");
}

// A reset or EPIPE reported by connect()'s SO_ERROR is the peer closing (README: outcome details);
// any other connect error keeps its errno.
TEST(Outcome, ConnectResetOrEpipeIsPeerClosedOtherErrnosStayConnect) {
  EXPECT_EQ(connect_failure_outcome(ECONNRESET).key(), "handshake/-1");
  EXPECT_EQ(connect_failure_outcome(EPIPE).key(), "handshake/-1");
  EXPECT_EQ(connect_failure_outcome(ECONNREFUSED).key(), "connect/111");
  EXPECT_EQ(connect_failure_outcome(EHOSTUNREACH).key(), "connect/113");
}
