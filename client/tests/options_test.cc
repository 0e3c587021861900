// Option parsing: the contract's flags, and one clear line for every bad input.
#include <gtest/gtest.h>

#include <cerrno>

#include "dns_name.h"
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
  EXPECT_EQ(r.options->head_start_ms, 250);  // RFC 8305 5: the Connection Attempt Delay it recommends
  EXPECT_TRUE(r.options->verify);
  EXPECT_EQ(r.options->transport, tlsnb::TransportKind::bio);
  EXPECT_FALSE(r.options->sigpipe_ignore);
}

TEST(Options, EveryFlagIsParsed) {
  auto r = parse_options({"--name", "hooks.test", "--connect", "127.0.0.2", "--allow-private", "--cafile", "ca.pem",
                          "--system-trust", "--no-verify", "--partial-chain", "--verify-depth", "3", "--tls-max", "1.2",
                          "--transport", "fd", "--sigpipe", "ignore", "--count", "10", "--parallel", "1024",
                          "--requests", "3", "--body", "60000", "--deadline-ms", "500", "--resume", "--hold-ms", "300", "--dns-timeout-ms", "250",
                          "--head-start-ms", "40", "--json", "--seed", "7", "hooks.test:8443"});
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
  EXPECT_EQ(o.head_start_ms, 40);
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
  EXPECT_EQ(error_of({"--head-start-ms", "0", "127.0.0.1:1"}), "--head-start-ms: expects an integer in 1..86400000, got '0'");
  for (const char* depth : {"0", "100"}) {
    auto r = parse_options({"--verify-depth", depth, "127.0.0.1:1"});
    ASSERT_TRUE(r.options) << r.error;
    EXPECT_EQ(std::to_string(r.options->verify_depth), depth);
  }
  EXPECT_EQ(error_of({"--verify-depth", "101", "127.0.0.1:1"}), "--verify-depth: expects an integer in 0..100, got '101'");
  EXPECT_EQ(error_of({"--verify-depth", "-1", "127.0.0.1:1"}), "--verify-depth: expects an integer in 0..100, got '-1'");
}

/* --no-verify-name keeps verification and drops the name check only: parsed on its own and beside the
   verification-only flags, refused with --no-verify in either order, its line in the help */
TEST(Options, NoVerifyNameDropsOnlyTheNameCheck) {
  auto r = parse_options({"127.0.0.1:1"});
  ASSERT_TRUE(r.options) << r.error;
  EXPECT_TRUE(r.options->verify_name);
  r = parse_options({"--no-verify-name", "--connect", "127.0.0.1", "hooks.test:1"});
  ASSERT_TRUE(r.options) << r.error;
  EXPECT_FALSE(r.options->verify_name);
  EXPECT_TRUE(r.options->verify);
  EXPECT_EQ(r.options->name, "hooks.test");  // still the SNI
  r = parse_options({"--no-verify-name", "--crl", "a.crl", "--crl-all", "--ocsp-staple", "require", "--pin-sha256",
                     "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", "--partial-chain", "--verify-depth", "3",
                     "127.0.0.1:1"});
  ASSERT_TRUE(r.options) << r.error;
  EXPECT_FALSE(r.options->verify_name);
  EXPECT_EQ(r.options->crls.size(), 1u);
  const std::string both =
      "--no-verify-name and --no-verify exclude each other (the first still verifies the chain; drop one)";
  EXPECT_EQ(error_of({"--no-verify-name", "--no-verify", "127.0.0.1:1"}), both);
  EXPECT_EQ(error_of({"--no-verify", "--no-verify-name", "127.0.0.1:1"}), both);
  EXPECT_EQ(error_of({"--no-verify-name=1", "127.0.0.1:1"}), "--no-verify-name: takes no value");
  EXPECT_NE(std::string(tlsnb::usage()).find("\n  --no-verify-name      verify the chain as ever but match no name"),
            std::string::npos);
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

/* --name is a host name (RFC 1035 2.3.4: at most 253 characters in text, labels of 1..63, letters, digits, '-'
   and '_'; a trailing dot allowed) or a bare IP literal: a longer name, a bracketed literal, a control character or a
   space is refused before any connection, naming the flag and the problem; the edges themselves are taken */
TEST(Options, NameIsAHostNameOrABareIpLiteral) {
  const std::string l63(63, 'a');
  const std::string name253 = l63 + "." + l63 + "." + l63 + "." + std::string(61, 'b');  // 4 labels, 3 dots
  ASSERT_EQ(name253.size(), 253u);
  const std::string name300 = l63 + "." + l63 + "." + l63 + "." + l63 + "." + std::string(44, 'e');
  ASSERT_EQ(name300.size(), 300u);
  const std::string host_bytes = " (a host name holds letters, digits, '-' and '_')";
  auto with_name = [](const std::string& name) { return error_of({"--name", name, "127.0.0.1:1"}); };
  EXPECT_EQ(with_name(name253), "");
  EXPECT_EQ(with_name(name253 + "."), "");  // the trailing dot is not a character of the name's length
  EXPECT_EQ(with_name(l63 + ".test"), "");
  EXPECT_EQ(with_name("::1"), "");  // an IP literal, bare: checked against iPAddress SANs
  EXPECT_EQ(with_name("127.0.0.1"), "");
  EXPECT_EQ(with_name("_srv.hooks-1.test"), "");
  EXPECT_EQ(with_name(name300), "--name: 300 characters (a DNS name holds at most 253, RFC 1035 2.3.4)");
  EXPECT_EQ(with_name(name253 + "b"), "--name: 254 characters (a DNS name holds at most 253, RFC 1035 2.3.4)");
  EXPECT_EQ(with_name(name253 + "b."), "--name: 254 characters (a DNS name holds at most 253, RFC 1035 2.3.4)");
  EXPECT_EQ(with_name(l63 + "a.test"), "--name: a label of 64 characters at offset 0 (at most 63, RFC 1035 2.3.4)");
  EXPECT_EQ(with_name("hooks." + l63 + "a"), "--name: a label of 64 characters at offset 6 (at most 63, RFC 1035 2.3.4)");
  EXPECT_EQ(with_name("[::1]"), "--name '[::1]': an IP literal goes bare (--name ::1); brackets are for TARGET:PORT");
  EXPECT_EQ(with_name("[127.0.0.1]"),
            "--name '[127.0.0.1]': an IP literal goes bare (--name 127.0.0.1); brackets are for TARGET:PORT");
  EXPECT_EQ(with_name("[::1x"), "--name: '[' at offset 0" + host_bytes);
  EXPECT_EQ(with_name("[hooks.test]"), "--name: '[' at offset 0" + host_bytes);
  EXPECT_EQ(with_name("hooks\x01.test"), "--name: control character 0x01 at offset 5" + host_bytes);
  EXPECT_EQ(with_name("hooks\t.test"), "--name: control character 0x09 at offset 5" + host_bytes);
  EXPECT_EQ(with_name("hooks.test\x1f"), "--name: control character 0x1f at offset 10" + host_bytes);
  EXPECT_EQ(with_name("hooks.test\x7f"), "--name: control character 0x7f at offset 10" + host_bytes);
  EXPECT_EQ(with_name("hooks test"), "--name: a space at offset 5" + host_bytes);
  EXPECT_EQ(with_name("hooks.te~st"), "--name: '~' at offset 8" + host_bytes);
  EXPECT_EQ(with_name("hooks..test"), "--name: an empty label at offset 6 (two dots in a row, or a leading dot)");
  EXPECT_EQ(with_name("."), "--name: no label (an empty name, or one dot: the root)");
  // a U-label name is checked as its A-label, which the message shows (its offsets count in it)
  EXPECT_EQ(with_name("caf\xC3\xA9..test"), "--name 'caf\xC3\xA9..test' (its A-label 'xn--caf-dma..test'): an empty label "
                                            "at offset 12 (two dots in a row, or a leading dot)");
  // TARGET as the name (no --name) keeps its own path: the resolver's lookup/-120 (dns/dns.toml code/bad-name)
  EXPECT_TRUE(parse_options({"--ns", "127.0.0.1:53", l63 + "a.test:443"}).options);
}

/* name_text_problem (dns_name.h), the words of the CLI's --name check, on what the CLI cannot hand it: an empty
   text, a byte past ASCII (IDNA takes those first). Here, not in dns_name_test.cc, so that it sits beside its one
   caller; its suite is DnsName so that dns_name.cc's rows (mutants/operator_rows.toml: unit:DnsName.*) run it */
TEST(DnsName, TextProblemNamesTheFirstRuleBrokenAndWhere) {
  const std::string host_bytes = " (a host name holds letters, digits, '-' and '_')";
  EXPECT_EQ(dns::name_text_problem("hooks.test"), "");
  EXPECT_EQ(dns::name_text_problem("hooks.test."), "");
  EXPECT_EQ(dns::name_text_problem(""), "no label (an empty name, or one dot: the root)");
  EXPECT_EQ(dns::name_text_problem("."), "no label (an empty name, or one dot: the root)");
  EXPECT_EQ(dns::name_text_problem(".hooks"), "an empty label at offset 0 (two dots in a row, or a leading dot)");
  EXPECT_EQ(dns::name_text_problem("a\x80.test"), "non-ASCII byte 0x80 at offset 1" + host_bytes);
  EXPECT_EQ(dns::name_text_problem("a.b\xff"), "non-ASCII byte 0xff at offset 3" + host_bytes);
  EXPECT_EQ(dns::name_text_problem("a.b\x7f"), "control character 0x7f at offset 3" + host_bytes);
  EXPECT_EQ(dns::name_text_problem("a.b\x1f"), "control character 0x1f at offset 3" + host_bytes);
  EXPECT_EQ(dns::name_text_problem(std::string("a.b\0c", 5)), "control character 0x00 at offset 3" + host_bytes);
  EXPECT_EQ(dns::name_text_problem("a.b c"), "a space at offset 3" + host_bytes);
  EXPECT_EQ(dns::name_text_problem("a.b!"), "'!' at offset 3" + host_bytes);
  EXPECT_EQ(dns::name_text_problem("a.!b"), "'!' at offset 2" + host_bytes);  // the first byte of a label is checked
  EXPECT_EQ(dns::name_text_problem(std::string(64, 'x')), "a label of 64 characters at offset 0 (at most 63, RFC 1035 2.3.4)");
  EXPECT_EQ(dns::name_text_problem("a." + std::string(70, 'x') + ".b"),
            "a label of 70 characters at offset 2 (at most 63, RFC 1035 2.3.4)");
  const std::string l63(63, 'x');
  const std::string name254 = l63 + "." + l63 + "." + l63 + "." + std::string(62, 'y');
  EXPECT_EQ(dns::name_text_problem(name254), "254 characters (a DNS name holds at most 253, RFC 1035 2.3.4)");
  EXPECT_EQ(dns::name_text_problem(name254 + "."), "254 characters (a DNS name holds at most 253, RFC 1035 2.3.4)");
  EXPECT_EQ(dns::name_text_problem(name254.substr(1) + "."), "");  // 253 and its trailing dot
  // a text refused is a text name_from_text refuses, and one taken is one it takes
  dns::Name name;
  for (const char* text : {"hooks.test", "", ".", "a..b", "a b", "a\x01"}) {
    EXPECT_EQ(dns::name_from_text(text, name), dns::name_text_problem(text).empty()) << text;
  }
}

/* RFC 5280 6.1.1's policy inputs: none by default (no policy processing), each parsed, --policy repeatable
   and checked for an OID's dotted form, any of them with --no-verify refused, their lines in the help */
TEST(Options, PolicyInputsAreParsedAndNeedVerification) {
  auto r = parse_options({"127.0.0.1:1"});
  ASSERT_TRUE(r.options) << r.error;
  EXPECT_FALSE(r.options->checks_policies());
  r = parse_options({"--policy", "2.16.840.1.101.3.2.1.48.1", "--policy", "2.5.29.32.0", "--explicit-policy",
                     "--inhibit-policy-mapping", "--inhibit-any-policy", "127.0.0.1:1"});
  ASSERT_TRUE(r.options) << r.error;
  EXPECT_EQ(r.options->policies, (std::vector<std::string>{"2.16.840.1.101.3.2.1.48.1", "2.5.29.32.0"}));
  EXPECT_TRUE(r.options->explicit_policy && r.options->inhibit_policy_mapping && r.options->inhibit_any_policy);
  EXPECT_TRUE(r.options->checks_policies());
  for (const char* alone : {"--explicit-policy", "--inhibit-policy-mapping", "--inhibit-any-policy"}) {
    r = parse_options({alone, "127.0.0.1:1"});
    ASSERT_TRUE(r.options) << r.error;
    EXPECT_TRUE(r.options->checks_policies()) << alone;
  }
  EXPECT_EQ(error_of({"--policy", "anyPolicy", "127.0.0.1:1"}),
            "--policy: expects a policy OID in dotted form (2.5.29.32.0 is anyPolicy), got 'anyPolicy'");
  const std::string needs = "--policy, --explicit-policy, --inhibit-policy-mapping and --inhibit-any-policy need "
                            "verification (drop --no-verify)";
  EXPECT_EQ(error_of({"--policy", "2.5.29.32.0", "--no-verify", "127.0.0.1:1"}), needs);
  EXPECT_EQ(error_of({"--no-verify", "--inhibit-any-policy", "127.0.0.1:1"}), needs);
  EXPECT_NE(std::string(tlsnb::usage()).find("\n  --policy OID          a policy of the initial policy set"), std::string::npos);
}
