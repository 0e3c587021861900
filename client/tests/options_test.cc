// Option parsing: the contract's flags, and one clear line for every bad input.
#include <gtest/gtest.h>

#include <cerrno>

#include "flag_table.h"
#include "options.h"

using tlsnb::parse_options;

namespace {

std::string error_of(std::vector<std::string> args) { return parse_options(args).error; }

}  // namespace

TEST(Options, DefaultsFollowTheContract) {
  auto r = parse_options({"127.0.0.1:443"});
  ASSERT_TRUE(r.options) << r.error;
  EXPECT_EQ(r.options->name, "127.0.0.1");
  EXPECT_EQ(r.options->port, 443);
  EXPECT_EQ(r.options->count, 1);
  EXPECT_EQ(r.options->parallel, 64);
  EXPECT_EQ(r.options->requests, 1);
  EXPECT_EQ(r.options->deadline_ms, 2000);
  EXPECT_TRUE(r.options->verify);
  EXPECT_EQ(r.options->transport, tlsnb::TransportKind::bio);
  EXPECT_FALSE(r.options->sigpipe_ignore);
}

TEST(Options, EveryFlagIsParsed) {
  auto r = parse_options({"--name", "hooks.test", "--connect", "127.0.0.2", "--allow-private", "--cafile", "ca.pem",
                          "--system-trust", "--no-verify", "--partial-chain", "--verify-depth", "3", "--tls-max", "1.2",
                          "--transport", "fd", "--sigpipe", "ignore", "--count", "10", "--parallel", "1024",
                          "--requests", "3", "--body", "60000", "--deadline-ms", "500", "--resume", "--hold-ms", "300", "--dns-timeout-ms", "250",
                          "--json", "--seed", "7", "hooks.test:8443"});
  ASSERT_TRUE(r.options) << r.error;
  const auto& o = *r.options;
  EXPECT_EQ(o.name, "hooks.test");
  EXPECT_EQ(o.dial_literal(), "127.0.0.2");
  EXPECT_TRUE(o.allow_private && o.system_trust && !o.verify && o.partial_chain && o.resume && o.json);
  EXPECT_EQ(o.verify_depth, 3);
  EXPECT_EQ(o.transport, tlsnb::TransportKind::fd);
  EXPECT_TRUE(o.sigpipe_ignore);
  EXPECT_EQ(o.count, 10);
  EXPECT_EQ(o.parallel, 1024);
  EXPECT_EQ(o.requests, 3);
  EXPECT_EQ(o.body, 60000);
  EXPECT_EQ(o.deadline_ms, 500);
  EXPECT_EQ(o.hold_ms, 300);
  EXPECT_EQ(o.dns_timeout_ms, 250);
  EXPECT_EQ(o.seed, 7u);
}

TEST(Options, InlineValuesAreAccepted) {
  auto r = parse_options({"--count=5", "--transport=fd", "127.0.0.1:1"});
  ASSERT_TRUE(r.options) << r.error;
  EXPECT_EQ(r.options->count, 5);
}

TEST(Options, BadInputIsOneLineNamingTheProblem) {
  EXPECT_EQ(error_of({"--bogus", "127.0.0.1:1"}), "unknown flag '--bogus' (see --help)");
  EXPECT_EQ(error_of({"127.0.0.1:1", "--count"}), "--count: missing value");
  EXPECT_EQ(error_of({"--parallel", "0", "127.0.0.1:1"}), "--parallel: expects an integer in 1..65536, got '0'");
  EXPECT_EQ(error_of({"127.0.0.1:0"}), "TARGET:PORT: expected HOST:PORT with a port in 1..65535, got '127.0.0.1:0'");
  EXPECT_EQ(error_of({"127.0.0.1:65536"}),
            "TARGET:PORT: expected HOST:PORT with a port in 1..65535, got '127.0.0.1:65536'");
  EXPECT_EQ(error_of({}), "missing TARGET:PORT");
  EXPECT_EQ(error_of({"--transport", "tcp", "127.0.0.1:1"}), "--transport: expects bio or fd, got 'tcp'");
  EXPECT_EQ(error_of({"--json=1", "127.0.0.1:1"}), "--json: takes no value");
  EXPECT_EQ(error_of({"--count", "12x", "127.0.0.1:1"}), "--count: expects an integer in 1..100000000, got '12x'");
  EXPECT_EQ(error_of({"--ns", "1.2.3.4", "hooks.test:1"}), "--ns: expects IPv4:PORT or [IPv6]:PORT, got '1.2.3.4'");
}

/* IPv6 literals in brackets as TARGET and in --ns, bare in --connect; a bare colon in a host is refused */
TEST(Options, IPv6LiteralsWhereIPv4OnesAreTaken) {
  auto r = parse_options({"[::1]:443"});
  ASSERT_TRUE(r.options) << r.error;
  EXPECT_EQ(r.options->target, "::1");
  EXPECT_EQ(r.options->name, "::1");
  EXPECT_EQ(r.options->dial_literal(), "::1");
  r = parse_options({"--connect", "2001:db8::5", "hooks.test:443"});
  ASSERT_TRUE(r.options) << r.error;
  EXPECT_EQ(r.options->dial_literal(), "2001:db8::5");
  r = parse_options({"--ns", "[::1]:5353", "hooks.test:443"});
  ASSERT_TRUE(r.options) << r.error;
  EXPECT_EQ(r.options->ns_ip, "::1");
  EXPECT_EQ(r.options->ns_port, 5353);
  EXPECT_EQ(error_of({"::1:443"}), "TARGET:PORT: expected HOST:PORT with a port in 1..65535, got '::1:443'");
  EXPECT_EQ(error_of({"--ns", "::1:53", "hooks.test:1"}), "--ns: expects IPv4:PORT or [IPv6]:PORT, got '::1:53'");
  EXPECT_EQ(error_of({"--connect", "[::1]", "hooks.test:1"}), "--connect: expects an IPv4 or IPv6 literal, got '[::1]'");
  EXPECT_EQ(error_of({"--ns", "[::1]:53", "[::1]:443"}), "--ns needs TARGET to be a name, got the IP literal '::1'");
}

TEST(Options, ANameNeedsAnAddressOrAResolver) {
  EXPECT_EQ(error_of({"hooks.test:443"}),
            "TARGET 'hooks.test' is a name: give --connect IP or --ns IP:PORT (tlsnb never blocks in a resolver)");
  EXPECT_EQ(error_of({"--connect", "127.0.0.1", "--ns", "127.0.0.1:53", "hooks.test:443"}),
            "--connect and --ns exclude each other");
  EXPECT_TRUE(parse_options({"--ns", "127.0.0.1:5353", "hooks.test:443"}).options);
}

TEST(Options, HelpIsNotAnError) {
  auto r = parse_options({"--help"});
  EXPECT_TRUE(r.help);
  EXPECT_FALSE(r.options);
}

/* A non-ASCII --name becomes its A-label (UTS #46), the U-label kept; IDNA's refusal is one line; ASCII is untouched */
TEST(Options, InternationalNameBecomesItsALabel) {
  auto r = parse_options({"--connect", "127.0.0.1", "--name", "Caf\xC3\xA9.hooks.test", "hooks.test:443"});
  ASSERT_TRUE(r.options) << r.error;
  EXPECT_EQ(r.options->name, "xn--caf-dma.hooks.test");
  EXPECT_EQ(r.options->name_unicode, "Caf\xC3\xA9.hooks.test");
  r = parse_options({"--ns", "127.0.0.1:53", "b\xC3\xBC" "cher.test:443"});
  ASSERT_TRUE(r.options) << r.error;
  EXPECT_EQ(r.options->target, "xn--bcher-kva.test");
  EXPECT_EQ(r.options->name, "xn--bcher-kva.test");
  r = parse_options({"--connect", "127.0.0.1", "--name", "hooks.test.", "hooks.test:443"});
  ASSERT_TRUE(r.options) << r.error;
  EXPECT_EQ(r.options->name, "hooks.test.");  // the trailing dot is kept (client/README.md)
  EXPECT_EQ(r.options->name_unicode, "");
  EXPECT_EQ(error_of({"--connect", "127.0.0.1", "--name", "a\xE2\x80\x8D\xC3\xA9.test", "hooks.test:1"}),
            "--name 'a\xE2\x80\x8D\xC3\xA9.test': IDNA refuses it: string contains a forbidden context-j character");
}

/* Each trust choice that needs verification is refused alone under --no-verify; each resolver flag keeps its range */
TEST(Options, EachChoiceIsCheckedOnItsOwn) {
  const std::string revocation = "--crl, --crl-all and --ocsp-staple need verification (drop --no-verify)";
  EXPECT_EQ(error_of({"--no-verify", "--crl", "a.pem", "127.0.0.1:1"}), revocation);
  EXPECT_EQ(error_of({"--no-verify", "--crl-all", "127.0.0.1:1"}), revocation);
  EXPECT_EQ(error_of({"--no-verify", "--ocsp-staple", "check", "127.0.0.1:1"}), revocation);
  EXPECT_TRUE(parse_options({"--no-verify", "--ocsp-staple", "off", "127.0.0.1:1"}).options);
  EXPECT_EQ(error_of({"--ns", "ns.test:53", "hooks.test:1"}), "--ns: expects IPv4:PORT or [IPv6]:PORT, got 'ns.test:53'");
  EXPECT_EQ(error_of({"--ns", "127.0.0.1:53", "--dns-timeout-ms", "0", "hooks.test:1"}),
            "--dns-timeout-ms: expects an integer in 1..86400000, got '0'");
  for (const char* depth : {"0", "100"}) {
    auto r = parse_options({"--verify-depth", depth, "127.0.0.1:1"});
    ASSERT_TRUE(r.options) << r.error;
    EXPECT_EQ(std::to_string(r.options->verify_depth), depth);
  }
  EXPECT_EQ(error_of({"--verify-depth", "101", "127.0.0.1:1"}), "--verify-depth: expects an integer in 0..100, got '101'");
  EXPECT_EQ(error_of({"--verify-depth", "-1", "127.0.0.1:1"}), "--verify-depth: expects an integer in 0..100, got '-1'");
}

/* A flag given twice: the last one counts, "off" included */
TEST(Options, TheLastOfARepeatedFlagCounts) {
  auto r = parse_options({"--ocsp-staple", "check", "--ocsp-staple", "off", "127.0.0.1:1"});
  ASSERT_TRUE(r.options) << r.error;
  EXPECT_EQ(r.options->staple, tlsnb::StaplePolicy::off);
  r = parse_options({"--ocsp-staple", "require", "--ocsp-staple", "check", "127.0.0.1:1"});
  ASSERT_TRUE(r.options) << r.error;
  EXPECT_EQ(r.options->staple, tlsnb::StaplePolicy::check);
  r = parse_options({"--ocsp-staple", "check", "--ocsp-staple", "require", "127.0.0.1:1"});
  ASSERT_TRUE(r.options) << r.error;
  EXPECT_EQ(r.options->staple, tlsnb::StaplePolicy::require);
}

/* Numbers and HOST:PORT at their edges: an empty number, a stale errno, the largest value, an empty host */
TEST(Options, NumbersAndHostPortAtTheirEdges) {
  EXPECT_EQ(error_of({"--count=", "127.0.0.1:1"}), "--count: expects an integer in 1..100000000, got ''");
  EXPECT_EQ(error_of({"127.0.0.1:"}), "TARGET:PORT: expected HOST:PORT with a port in 1..65535, got '127.0.0.1:'");
  EXPECT_EQ(error_of({":443"}), "TARGET:PORT: expected HOST:PORT with a port in 1..65535, got ':443'");
  EXPECT_EQ(error_of({"[]:443"}), "TARGET:PORT: expected HOST:PORT with a port in 1..65535, got '[]:443'");
  auto r = parse_options({"127.0.0.1:65535"});
  ASSERT_TRUE(r.options) << r.error;
  EXPECT_EQ(r.options->port, 65535);
  r = parse_options({"--connect", "127.0.0.1", "a:443"});
  ASSERT_TRUE(r.options) << r.error;
  EXPECT_EQ(r.options->target, "a");
  long value = 0;
  errno = ERANGE;  // left by an earlier call: a valid number is still taken
  EXPECT_TRUE(tlsnb::parse_long("5", 1, 9, &value));
  EXPECT_EQ(value, 5);
  EXPECT_TRUE(tlsnb::parse_long("9", 1, 9, &value));
  EXPECT_FALSE(tlsnb::parse_long("10", 1, 9, &value));
  EXPECT_FALSE(tlsnb::parse_long("", 1, 9, &value));
}

/* ASCII names pass untouched (case kept, no IDNA mapping); a byte of 0x80 is not ASCII; a second TARGET is named */
TEST(Options, AsciiNamesAreNotMappedAndOnlyOneTargetIsTaken) {
  auto r = parse_options({"--connect", "127.0.0.1", "--name", "WWW.Hooks.Test", "Hooks.Test:443"});
  ASSERT_TRUE(r.options) << r.error;
  EXPECT_EQ(r.options->name, "WWW.Hooks.Test");
  EXPECT_EQ(r.options->target, "Hooks.Test");
  EXPECT_EQ(r.options->name_unicode, "");
  EXPECT_NE(error_of({"--connect", "127.0.0.1", "--name", "a\x80.test", "hooks.test:443"}), "");
  EXPECT_EQ(error_of({"127.0.0.1:1", "127.0.0.2:2"}), "one TARGET:PORT expected, got '127.0.0.2:2'");
}
