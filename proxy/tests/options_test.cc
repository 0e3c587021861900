// The command line: --upstream required, --only-conn against conn=, every bad value one line.
#include <gtest/gtest.h>

#include "options.h"

using namespace tlsproxy;

namespace {

std::string error_of(std::vector<std::string> args) {
  ParseResult r = parse_options(args);
  EXPECT_FALSE(r.options.has_value());
  return r.error;
}

}  // namespace

TEST(Options, UpstreamIsRequired) {
  EXPECT_NE(error_of({"--fault", "downstream:blackhole"}).find("--upstream"), std::string::npos);
}

TEST(Options, OnlyConnAppliesToFaultsWithoutTheirOwnConn) {
  ParseResult r = parse_options({"--upstream", "127.0.0.1:9", "--fault", "downstream:blackhole", "--fault",
                                 "upstream:reset_peer:at=5,conn=4", "--only-conn", "3", "--seed", "7"});
  ASSERT_TRUE(r.options.has_value()) << r.error;
  EXPECT_EQ(r.options->faults[0].conn, 3);
  EXPECT_EQ(r.options->faults[1].conn, 4);
  EXPECT_EQ(r.options->seed, 7u);
  EXPECT_TRUE(r.options->seed_given);
}

TEST(Options, TheSameFaultTwiceOnOneDirectionIsRefused) {
  EXPECT_NE(error_of({"--upstream", "127.0.0.1:9", "--fault", "downstream:latency:ms=1", "--fault",
                      "both:latency:ms=2"})
                .find("given twice"),
            std::string::npos);
}

TEST(Options, BadValuesAreOneLine) {
  EXPECT_NE(error_of({"--upstream", "localhost:9"}).find("IPv4"), std::string::npos);
  EXPECT_NE(error_of({"--upstream", "127.0.0.1:0"}).find("IPv4"), std::string::npos);
  EXPECT_NE(error_of({"--upstream", "127.0.0.1:9", "--max-conns", "0"}).find("1.."), std::string::npos);
  EXPECT_NE(error_of({"--upstream", "127.0.0.1:9", "--seed"}).find("needs a value"), std::string::npos);
  EXPECT_NE(error_of({"--upstream", "127.0.0.1:9", "--verbose"}).find("unknown argument"), std::string::npos);
}
