// The contract's command line as a client under test parses it: usage errors first (exit 2),
// then what the client lacks (exit 89, its own reason), then a name without --connect.
#include <gtest/gtest.h>

#include "clients/contract/contract_options.h"

namespace {

const contract::Lacks lacks = {{{"--verify-depth", true, "no chain depth here"}, {"--dns-udp", false, "no resolver"}},
                               "no socket I/O of its own",
                               "(never resolves)"};

contract::ParseResult parse(std::vector<std::string> args) { return contract::parse_options(args, lacks); }

}  // namespace

TEST(ContractOptions, DefaultsFollowTheContract) {
  auto r = parse({"127.0.0.1:443"});
  ASSERT_TRUE(r.options) << r.error;
  EXPECT_EQ(r.options->name, "127.0.0.1");
  EXPECT_TRUE(r.options->name_is_ip());
  EXPECT_EQ(r.options->dial_ip(), "127.0.0.1");
  EXPECT_EQ(r.options->count, 1);
  EXPECT_EQ(r.options->parallel, 64);
  EXPECT_EQ(r.options->tls_max, 13);
  EXPECT_EQ(r.options->transport, contract::Transport::bio);
  EXPECT_EQ(r.options->sigpipe, contract::Sigpipe::leave);
}

TEST(ContractOptions, EveryFlagIsParsed) {
  auto r = parse({"--name", "hooks.test", "--connect", "127.0.0.2", "--tls-max", "1.2", "--sigpipe=ignore", "--seed",
                  "7", "--body", "100", "--json", "hooks.test:8443"});
  ASSERT_TRUE(r.options) << r.error;
  EXPECT_EQ(r.options->dial_ip(), "127.0.0.2");
  EXPECT_FALSE(r.options->name_is_ip());
  EXPECT_EQ(r.options->tls_max, 12);
  EXPECT_EQ(r.options->sigpipe, contract::Sigpipe::ignore);
  EXPECT_EQ(r.options->seed, 7u);
  EXPECT_EQ(r.options->body, 100);
  EXPECT_TRUE(r.options->json);
}

TEST(ContractOptions, UsageErrorsComeBeforeWhatTheClientLacks) {
  auto r = parse({"--verify-depth", "3", "--bogus", "127.0.0.1:1"});
  EXPECT_EQ(r.exit_code, contract::exit_usage);
  EXPECT_EQ(r.error, "unknown flag '--bogus' (see --help)");
  r = parse({"--verify-depth", "3", "127.0.0.1:99999"});
  EXPECT_EQ(r.exit_code, contract::exit_usage);
  r = parse({"--dns-udp=1", "127.0.0.1:1"});
  EXPECT_EQ(r.error, "--dns-udp: takes no value");
}

TEST(ContractOptions, TheFirstFlagLackedIsExit89WithItsReason) {
  auto r = parse({"--dns-udp", "--verify-depth", "3", "--transport", "fd", "a.test:1"});
  EXPECT_FALSE(r.options);
  EXPECT_EQ(r.exit_code, contract::exit_lacking);
  EXPECT_EQ(r.error, "no resolver");
}

TEST(ContractOptions, TransportFdIsLackedOnlyWhereTheClientSaysSo) {
  auto r = parse({"--transport", "fd", "127.0.0.1:1"});
  EXPECT_EQ(r.exit_code, contract::exit_lacking);
  EXPECT_EQ(r.error, "no socket I/O of its own");
  contract::Lacks has_fd = lacks;
  has_fd.transport_fd = nullptr;
  r = contract::parse_options({"--transport", "fd", "127.0.0.1:1"}, has_fd);
  ASSERT_TRUE(r.options) << r.error;
  EXPECT_EQ(r.options->transport, contract::Transport::fd);
}

TEST(ContractOptions, ANameNeedsConnect) {
  auto r = parse({"a.test:1"});
  EXPECT_EQ(r.exit_code, contract::exit_usage);
  EXPECT_EQ(r.error, "TARGET 'a.test' is a name: give --connect IP (never resolves)");
  EXPECT_TRUE(parse({"--connect", "127.0.0.1", "a.test:1"}).options);
}

TEST(ContractOptions, ReadyToRunAnswersHelpAndErrorsWithTheirExitStatus) {
  int code = -1;
  testing::internal::CaptureStdout();
  EXPECT_FALSE(contract::ready_to_run(parse({"--help"}), "client", "usage text\n", &code));
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "usage text\n");
  EXPECT_EQ(code, 0);
  testing::internal::CaptureStderr();
  EXPECT_FALSE(contract::ready_to_run(parse({"--verify-depth", "3", "127.0.0.1:1"}), "client", "", &code));
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "client: no chain depth here\n");
  EXPECT_EQ(code, contract::exit_lacking);
  EXPECT_TRUE(contract::ready_to_run(parse({"127.0.0.1:1"}), "client", "", &code));
}

TEST(ContractOptions, RevocationNeedsVerificationAsTlsnbSays) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--no-verify", "--crl", "x.crl", "127.0.0.1:1"},
                                               {"--no-verify", "--crl-all", "127.0.0.1:1"},
                                               {"--no-verify", "--ocsp-staple", "check", "127.0.0.1:1"}}) {
    auto r = parse(args);
    EXPECT_FALSE(r.options) << args[1];
    EXPECT_EQ(r.exit_code, contract::exit_usage) << args[1];
    EXPECT_EQ(r.error, "--crl, --crl-all and --ocsp-staple need verification (drop --no-verify)") << args[1];
  }
  EXPECT_TRUE(parse({"--no-verify", "--ocsp-staple", "off", "127.0.0.1:1"}).options);
  EXPECT_TRUE(parse({"--crl", "x.crl", "127.0.0.1:1"}).options);
}

/* --no-verify-name is every C++ adapter's (each honours it with its library's switch); with --no-verify it
   is usage (exit 2, tlsnb's line), before what a client lacks */
TEST(ContractOptions, NoVerifyNameIsParsedAndRefusedWithNoVerify) {
  auto r = parse({"127.0.0.1:1"});
  ASSERT_TRUE(r.options) << r.error;
  EXPECT_TRUE(r.options->verify_name);
  r = parse({"--no-verify-name", "--crl", "x.crl", "127.0.0.1:1"});
  ASSERT_TRUE(r.options) << r.error;
  EXPECT_FALSE(r.options->verify_name);
  EXPECT_TRUE(r.options->verify);
  r = parse({"--no-verify", "--no-verify-name", "--verify-depth", "3", "127.0.0.1:1"});
  EXPECT_FALSE(r.options);
  EXPECT_EQ(r.exit_code, contract::exit_usage);
  EXPECT_EQ(r.error, "--no-verify-name and --no-verify exclude each other (the first still verifies the chain; drop one)");
}

TEST(ContractOptions, TheLastTlsMaxWins) {  // clients/mbedtls's profile starts it with --tls-max 1.2; a row may ask 1.3
  auto r = parse({"--tls-max", "1.2", "--tls-max", "1.3", "127.0.0.1:1"});
  ASSERT_TRUE(r.options) << r.error;
  EXPECT_EQ(r.options->tls_max, 13);
}

/* A client that dials --connect only (gnutls, mbedtls, wolfssl): its own lacks, the resolver's four
   each with the same reason, and a name without --connect said as such */
TEST(ContractOptions, WithoutResolverLacksTheResolversFlagsAndSaysSo) {
  const contract::Lacks no_resolver = contract::without_resolver({{"--verify-depth", true, "no chain depth here"}}, nullptr);
  auto r = contract::parse_options({"--verify-depth", "3", "127.0.0.1:1"}, no_resolver);
  EXPECT_EQ(r.exit_code, contract::exit_lacking);
  EXPECT_EQ(r.error, "no chain depth here");
  r = contract::parse_options({"--ns", "127.0.0.1:53", "a.test:1"}, no_resolver);
  EXPECT_EQ(r.exit_code, contract::exit_lacking);
  EXPECT_EQ(r.error, "not offered: --ns: this client has no resolver (dial with --connect)");
  r = contract::parse_options({"--allow-private", "127.0.0.1:1"}, no_resolver);
  EXPECT_EQ(r.error, "not offered: --allow-private: this client has no resolver");
  r = contract::parse_options({"--dns-udp=1", "127.0.0.1:1"}, no_resolver);
  EXPECT_EQ(r.exit_code, contract::exit_usage);
  r = contract::parse_options({"a.test:1"}, no_resolver);
  EXPECT_EQ(r.error, "TARGET 'a.test' is a name: give --connect IP (this client never resolves a name)");
  EXPECT_TRUE(contract::parse_options({"--transport", "fd", "127.0.0.1:1"}, no_resolver).options);
}
