// Outcome mapping: stable names and numbers (DESIGN.md's table), OpenSSL's queue read once.
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <cerrno>

#include "outcome.h"

using namespace tlsnb;

TEST(Outcome, StagesHaveTheirDesignNumbersAndNames) {
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

TEST(Outcome, EmptyErrorQueueMeansPeerClosedWithoutAlert) {
  ERR_clear_error();
  Outcome o = openssl_outcome(Stage::handshake);
  EXPECT_EQ(o.key(), "handshake/-1");
}

TEST(Outcome, FirstOpenSslErrorIsTheDetail) {
  OPENSSL_init_ssl(OPENSSL_INIT_LOAD_SSL_STRINGS, nullptr);  // tlsnb's SSL_CTX_new does this
  ERR_clear_error();
  ERR_raise(ERR_LIB_SSL, SSL_R_TLSV1_ALERT_PROTOCOL_VERSION);
  ERR_raise(ERR_LIB_SSL, SSL_R_UNEXPECTED_EOF_WHILE_READING);
  Outcome o = openssl_outcome(Stage::handshake);
  EXPECT_EQ(o.detail, 0x0A00042EL);  // library 20, reason 1070: the seed's protocol_version alert
  EXPECT_NE(o.text.find("tlsv1 alert protocol version"), std::string::npos) << o.text;
  ERR_clear_error();
}
