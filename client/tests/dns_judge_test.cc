// The judge: special-purpose ranges at their edges, and pin_choose over whole answers.
#include "dns_judge.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

uint32_t host_order(const char* dotted_quad) {
  in_addr a{};
  inet_pton(AF_INET, dotted_quad, &a);
  return ntohl(a.s_addr);
}

std::string verdict(const char* dotted_quad) {
  const char* range = dns::special_range(host_order(dotted_quad));
  bool special = dns::is_special(host_order(dotted_quad));
  if (special != (range != nullptr)) return "is_special and special_range disagree";
  return range ? range : "public";
}

// "chosen 0 (1.2.3.4)", "refused 1 (10.0.0.1)" or "none".
std::string pin(std::vector<const char*> quads, bool allow_private) {
  std::vector<in_addr> addrs;
  for (const char* quad : quads) {
    in_addr a{};
    inet_pton(AF_INET, quad, &a);
    addrs.push_back(a);
  }
  dns::Pin p = dns::pin_choose(addrs, allow_private);
  if (p.chosen >= 0 && p.refused >= 0) return "both chosen and refused";
  if (p.chosen >= 0) return "chosen " + std::to_string(p.chosen) + " (" + quads[static_cast<size_t>(p.chosen)] + ")";
  if (p.refused >= 0)
    return "refused " + std::to_string(p.refused) + " (" + quads[static_cast<size_t>(p.refused)] + ")";
  return "none";
}

}  // namespace

/* Both edges of every range are special, and their neighbours outside are not */
TEST(DnsJudge, EveryRangeHoldsBothEdgesAndNoNeighbour) {
  const char* edges[] = {
      "0.0.0.0",      "0.255.255.255",   "1.0.0.0",         "9.255.255.255",   "10.0.0.0",     "10.255.255.255",
      "11.0.0.0",     "100.63.255.255",  "100.64.0.0",      "100.127.255.255", "100.128.0.0",  "126.255.255.255",
      "127.0.0.0",    "127.255.255.255", "128.0.0.0",       "169.253.255.255", "169.254.0.0",  "169.254.255.255",
      "169.255.0.0",  "172.15.255.255",  "172.16.0.0",      "172.31.255.255",  "172.32.0.0",   "191.255.255.255",
      "192.0.0.0",    "192.0.0.255",     "192.0.1.0",       "192.0.1.255",     "192.0.2.0",    "192.0.2.255",
      "192.0.3.0",    "192.31.195.255",  "192.31.196.0",    "192.31.196.255",  "192.31.197.0", "192.52.192.255",
      "192.52.193.0", "192.52.193.255",  "192.52.194.0",    "192.88.98.255",   "192.88.99.0",  "192.88.99.255",
      "192.88.100.0", "192.167.255.255", "192.168.0.0",     "192.168.255.255", "192.169.0.0",  "192.175.47.255",
      "192.175.48.0", "192.175.48.255",  "192.175.49.0",    "198.17.255.255",  "198.18.0.0",   "198.19.255.255",
      "198.20.0.0",   "198.51.99.255",   "198.51.100.0",    "198.51.100.255",  "198.51.101.0", "203.0.112.255",
      "203.0.113.0",  "203.0.113.255",   "203.0.114.0",     "223.255.255.255", "224.0.0.0",    "239.255.255.255",
      "240.0.0.0",    "255.255.255.254", "255.255.255.255",
  };
  std::string got;
  for (const char* quad : edges) got += std::string(quad) + " -> " + verdict(quad) + "\n";
  EXPECT_EQ(
      "0.0.0.0 -> 0.0.0.0/8 this network\n"
      "0.255.255.255 -> 0.0.0.0/8 this network\n"
      "1.0.0.0 -> public\n"
      "9.255.255.255 -> public\n"
      "10.0.0.0 -> 10.0.0.0/8 private\n"
      "10.255.255.255 -> 10.0.0.0/8 private\n"
      "11.0.0.0 -> public\n"
      "100.63.255.255 -> public\n"
      "100.64.0.0 -> 100.64.0.0/10 shared address space\n"
      "100.127.255.255 -> 100.64.0.0/10 shared address space\n"
      "100.128.0.0 -> public\n"
      "126.255.255.255 -> public\n"
      "127.0.0.0 -> 127.0.0.0/8 loopback\n"
      "127.255.255.255 -> 127.0.0.0/8 loopback\n"
      "128.0.0.0 -> public\n"
      "169.253.255.255 -> public\n"
      "169.254.0.0 -> 169.254.0.0/16 link-local\n"
      "169.254.255.255 -> 169.254.0.0/16 link-local\n"
      "169.255.0.0 -> public\n"
      "172.15.255.255 -> public\n"
      "172.16.0.0 -> 172.16.0.0/12 private\n"
      "172.31.255.255 -> 172.16.0.0/12 private\n"
      "172.32.0.0 -> public\n"
      "191.255.255.255 -> public\n"
      "192.0.0.0 -> 192.0.0.0/24 IETF protocol assignments\n"
      "192.0.0.255 -> 192.0.0.0/24 IETF protocol assignments\n"
      "192.0.1.0 -> public\n"
      "192.0.1.255 -> public\n"
      "192.0.2.0 -> 192.0.2.0/24 documentation\n"
      "192.0.2.255 -> 192.0.2.0/24 documentation\n"
      "192.0.3.0 -> public\n"
      "192.31.195.255 -> public\n"
      "192.31.196.0 -> 192.31.196.0/24 AS112-v4\n"
      "192.31.196.255 -> 192.31.196.0/24 AS112-v4\n"
      "192.31.197.0 -> public\n"
      "192.52.192.255 -> public\n"
      "192.52.193.0 -> 192.52.193.0/24 AMT\n"
      "192.52.193.255 -> 192.52.193.0/24 AMT\n"
      "192.52.194.0 -> public\n"
      "192.88.98.255 -> public\n"
      "192.88.99.0 -> 192.88.99.0/24 deprecated 6to4 relay anycast\n"
      "192.88.99.255 -> 192.88.99.0/24 deprecated 6to4 relay anycast\n"
      "192.88.100.0 -> public\n"
      "192.167.255.255 -> public\n"
      "192.168.0.0 -> 192.168.0.0/16 private\n"
      "192.168.255.255 -> 192.168.0.0/16 private\n"
      "192.169.0.0 -> public\n"
      "192.175.47.255 -> public\n"
      "192.175.48.0 -> 192.175.48.0/24 direct delegation AS112\n"
      "192.175.48.255 -> 192.175.48.0/24 direct delegation AS112\n"
      "192.175.49.0 -> public\n"
      "198.17.255.255 -> public\n"
      "198.18.0.0 -> 198.18.0.0/15 benchmarking\n"
      "198.19.255.255 -> 198.18.0.0/15 benchmarking\n"
      "198.20.0.0 -> public\n"
      "198.51.99.255 -> public\n"
      "198.51.100.0 -> 198.51.100.0/24 documentation\n"
      "198.51.100.255 -> 198.51.100.0/24 documentation\n"
      "198.51.101.0 -> public\n"
      "203.0.112.255 -> public\n"
      "203.0.113.0 -> 203.0.113.0/24 documentation\n"
      "203.0.113.255 -> 203.0.113.0/24 documentation\n"
      "203.0.114.0 -> public\n"
      "223.255.255.255 -> public\n"
      "224.0.0.0 -> 224.0.0.0/4 multicast\n"
      "239.255.255.255 -> 224.0.0.0/4 multicast\n"
      "240.0.0.0 -> 240.0.0.0/4 reserved\n"
      "255.255.255.254 -> 240.0.0.0/4 reserved\n"
      "255.255.255.255 -> 255.255.255.255/32 limited broadcast\n",
      got);
}

/* The cloud metadata address is link-local */
TEST(DnsJudge, MetadataAddressIsSpecial) { EXPECT_EQ("169.254.0.0/16 link-local", verdict("169.254.169.254")); }

/* A public answer: the first address is dialled */
TEST(DnsJudge, PublicAnswerChoosesTheFirstAddress) {
  EXPECT_EQ("chosen 0 (93.184.216.34)", pin({"93.184.216.34", "1.1.1.1"}, false));
}

/* One private address refuses the whole answer, wherever it stands, and it is the one named */
TEST(DnsJudge, OnePrivateAddressRefusesTheWholeAnswer) {
  EXPECT_EQ("refused 0 (10.0.0.1)", pin({"10.0.0.1", "93.184.216.34"}, false));
  EXPECT_EQ("refused 1 (10.0.0.1)", pin({"93.184.216.34", "10.0.0.1"}, false));
  EXPECT_EQ("refused 2 (169.254.169.254)", pin({"1.1.1.1", "8.8.8.8", "169.254.169.254"}, false));
}

/* With several special addresses, the first in answer order is named */
TEST(DnsJudge, FirstSpecialAddressIsNamed) {
  EXPECT_EQ("refused 1 (127.0.0.1)", pin({"1.1.1.1", "127.0.0.1", "10.0.0.1"}, false));
}

/* --allow-private accepts any answer and dials its first address */
TEST(DnsJudge, AllowPrivateChoosesTheFirstAddress) {
  EXPECT_EQ("chosen 0 (10.0.0.1)", pin({"10.0.0.1", "93.184.216.34"}, true));
  EXPECT_EQ("chosen 0 (127.0.0.1)", pin({"127.0.0.1"}, true));
}

/* No address: nothing chosen, nothing refused (the resolver says no_address) */
TEST(DnsJudge, EmptyAnswerChoosesNothing) {
  EXPECT_EQ("none", pin({}, false));
  EXPECT_EQ("none", pin({}, true));
}

namespace {

std::string reason6(const char* text) {
  in6_addr a{};
  if (inet_pton(AF_INET6, text, &a) != 1) return "not an IPv6 address";
  std::string reason = dns::special_reason6(a);
  if (dns::is_special6(a) != !reason.empty()) return "is_special6 and special_reason6 disagree";
  return reason.empty() ? "public" : reason;
}

// Each text, then " -> " and its verdict, one line each.
std::string reasons6(std::vector<const char*> texts) {
  std::string got;
  for (const char* text : texts) got += std::string(text) + " -> " + reason6(text) + "\n";
  return got;
}

}  // namespace

/* The SSRF bypass spellings of the issue are refused, each naming the IPv4 inside */
TEST(DnsJudge6, BypassSpellingsNameTheEmbeddedIPv4) {
  EXPECT_EQ(
      "::ffff:127.0.0.1 -> ::ffff:0:0/96 IPv4-mapped (RFC 4291), embeds 127.0.0.1 (127.0.0.0/8 loopback)\n"
      "::127.0.0.1 -> ::/96 IPv4-compatible, deprecated (RFC 4291), embeds 127.0.0.1 (127.0.0.0/8 loopback)\n"
      "::ffff:0:a00:1 -> ::ffff:0:0:0/96 IPv4-translated (RFC 2765), embeds 10.0.0.1 (10.0.0.0/8 private)\n"
      "64:ff9b::a9fe:a9fe -> 64:ff9b::/96 NAT64 well-known prefix (RFC 6052), embeds 169.254.169.254 "
      "(169.254.0.0/16 link-local)\n"
      "64:ff9b:1:a9fe:a9:fe00:: -> 64:ff9b:1::/48 NAT64 local use (RFC 8215), embeds 169.254.169.254 "
      "(169.254.0.0/16 link-local)\n"
      "2002:7f00:1:: -> 2002::/16 6to4 (RFC 3056), embeds 127.0.0.1 (127.0.0.0/8 loopback)\n"
      "2001:0:4136:e378:8000:63bf:3fff:fdd2 -> 2001::/32 Teredo (RFC 4380), embeds server 65.54.227.120 (public), "
      "embeds client 192.0.2.45 (192.0.2.0/24 documentation)\n"
      "2600::5efe:a9fe:a9fe -> ISATAP interface id (RFC 5214), embeds 169.254.169.254 (169.254.0.0/16 link-local)\n"
      "2600::200:5efe:7f00:1 -> ISATAP interface id (RFC 5214), embeds 127.0.0.1 (127.0.0.0/8 loopback)\n",
      reasons6({"::ffff:127.0.0.1", "::127.0.0.1", "::ffff:0:a00:1", "64:ff9b::a9fe:a9fe", "64:ff9b:1:a9fe:a9:fe00::",
                "2002:7f00:1::", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "2600::5efe:a9fe:a9fe",
                "2600::200:5efe:7f00:1"}));
}

/* An embedding block is refused whole, a public IPv4 inside it too; ISATAP in a public prefix only when its IPv4 is special */
TEST(DnsJudge6, EmbeddingBlocksAreRefusedWhole) {
  EXPECT_EQ(
      "::ffff:8.8.8.8 -> ::ffff:0:0/96 IPv4-mapped (RFC 4291), embeds 8.8.8.8 (public)\n"
      "64:ff9b::808:808 -> 64:ff9b::/96 NAT64 well-known prefix (RFC 6052), embeds 8.8.8.8 (public)\n"
      "2002:808:808:: -> 2002::/16 6to4 (RFC 3056), embeds 8.8.8.8 (public)\n"
      "2600::5efe:808:808 -> public\n"
      "2600::400:5efe:7f00:1 -> public\n",  // RFC 5214 6.1: 0000:5efe or 0200:5efe only
      reasons6({"::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::", "2600::5efe:808:808", "2600::400:5efe:7f00:1"}));
}

/* Both edges of the blocks at the border of 2000::/3 and inside it, and their public neighbours */
TEST(DnsJudge6, BlockEdgesAndNeighbours) {
  EXPECT_EQ(
      ":: -> ::/128 unspecified (RFC 4291)\n"
      "::1 -> ::1/128 loopback (RFC 4291)\n"
      "100:: -> 100::/64 discard-only (RFC 6666)\n"
      "100:0:0:1:: -> outside 2000::/3 global unicast (RFC 4291)\n"
      "1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff -> outside 2000::/3 global unicast (RFC 4291)\n"
      "2000:: -> public\n"
      "2001:: -> 2001::/32 Teredo (RFC 4380), embeds server 0.0.0.0 (0.0.0.0/8 this network), "
      "embeds client 255.255.255.255 (255.255.255.255/32 limited broadcast)\n"
      "2001:1::1 -> 2001:1::1/128 port control protocol anycast (RFC 7723)\n"
      "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff -> 2001::/23 IETF protocol assignments (RFC 2928)\n"
      "2001:200:: -> public\n"
      "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff -> public\n"
      "2001:db8:: -> 2001:db8::/32 documentation (RFC 3849)\n"
      "2001:db9:: -> public\n"
      "2002:: -> 2002::/16 6to4 (RFC 3056), embeds 0.0.0.0 (0.0.0.0/8 this network)\n"
      "2003:: -> public\n"
      "3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff -> public\n"
      "3fff:: -> 3fff::/20 documentation (RFC 9637)\n"
      "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff -> 3fff::/20 documentation (RFC 9637)\n"
      "3fff:1000:: -> public\n"
      "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff -> public\n"
      "4000:: -> outside 2000::/3 global unicast (RFC 4291)\n"
      "5f00::1 -> 5f00::/16 segment routing SIDs (RFC 9602)\n"
      "fc00::1 -> fc00::/7 unique local (RFC 4193)\n"
      "fe80::1 -> fe80::/10 link-local (RFC 4291)\n"
      "fec0::1 -> fec0::/10 site-local, deprecated (RFC 3879)\n"
      "ff02::1 -> ff00::/8 multicast (RFC 4291)\n",
      reasons6({"::", "::1", "100::", "100:0:0:1::", "1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2000::", "2001::",
                "2001:1::1", "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", "2001:200::",
                "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db8::", "2001:db9::", "2002::", "2003::",
                "3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "3fff::", "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff",
                "3fff:1000::", "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "4000::", "5f00::1", "fc00::1", "fe80::1",
                "fec0::1", "ff02::1"}));
}

/* One special IPv6 address among public IPv4 ones refuses the whole answer, and is named */
TEST(DnsJudge6, MixedAnswerIsJudgedWhole) {
  std::vector<dns::Address> addrs;
  for (const char* text : {"93.184.216.34", "2606:4700::1111", "::ffff:10.0.0.1", "1.1.1.1"}) {
    in_addr v4{};
    in6_addr v6{};
    if (inet_pton(AF_INET, text, &v4) == 1) addrs.push_back(dns::address_of(v4));
    else if (inet_pton(AF_INET6, text, &v6) == 1) addrs.push_back(dns::address_of(v6));
  }
  dns::Pin strict = dns::pin_choose(addrs, false);
  EXPECT_EQ(2, strict.refused);
  EXPECT_EQ(-1, strict.chosen);
  EXPECT_EQ("::ffff:10.0.0.1", dns::address_text(addrs[2]));
  EXPECT_EQ(0, dns::pin_choose(addrs, true).chosen);
  addrs.erase(addrs.begin() + 2);
  EXPECT_EQ(0, dns::pin_choose(addrs, false).chosen);
}

/* A literal read into an Address that held another one replaces it whole, either family */
TEST(DnsJudge, AddressFromTextReplacesWhatTheAddressHeld) {
  dns::Address addr;
  ASSERT_TRUE(dns::address_from_text("2001:db8::5", addr));
  ASSERT_TRUE(dns::address_from_text("192.0.2.7", addr));
  EXPECT_EQ(AF_INET, addr.family);
  EXPECT_EQ("192.0.2.7", dns::address_text(addr));
  EXPECT_TRUE(IN6_IS_ADDR_UNSPECIFIED(&addr.v6));
  ASSERT_TRUE(dns::address_from_text("2001:db8::6", addr));
  EXPECT_EQ(AF_INET6, addr.family);
  EXPECT_EQ(0u, addr.v4.s_addr);
  EXPECT_FALSE(dns::address_from_text("2001:db8::zz", addr));
  EXPECT_FALSE(dns::address_from_text("hooks.test", addr));
}

/* socket_address writes the whole sockaddr: family, port, address, and zeros in every other field */
TEST(DnsJudge, SocketAddressIsWrittenWhole) {
  dns::Address six, four;
  ASSERT_TRUE(dns::address_from_text("2001:db8::5", six));
  ASSERT_TRUE(dns::address_from_text("192.0.2.7", four));
  sockaddr_storage out;
  std::memset(&out, 0xAB, sizeof out);
  ASSERT_EQ(sizeof(sockaddr_in6), dns::socket_address(six, 8443, out));
  const auto* s6 = reinterpret_cast<const sockaddr_in6*>(&out);
  EXPECT_EQ(AF_INET6, s6->sin6_family);
  EXPECT_EQ(htons(8443), s6->sin6_port);
  EXPECT_EQ(0, std::memcmp(&s6->sin6_addr, &six.v6, sizeof six.v6));
  EXPECT_EQ(0u, s6->sin6_flowinfo);
  EXPECT_EQ(0u, s6->sin6_scope_id);
  std::memset(&out, 0xAB, sizeof out);
  ASSERT_EQ(sizeof(sockaddr_in), dns::socket_address(four, 443, out));
  const auto* s4 = reinterpret_cast<const sockaddr_in*>(&out);
  EXPECT_EQ(AF_INET, s4->sin_family);
  EXPECT_EQ(htons(443), s4->sin_port);
  EXPECT_EQ(four.v4.s_addr, s4->sin_addr.s_addr);
  const unsigned char zero[sizeof s4->sin_zero] = {};
  EXPECT_EQ(0, std::memcmp(s4->sin_zero, zero, sizeof zero));
}

/* Every block names itself at its first and last address, the small ones inside 2001::/23 and 100::/64 too */
TEST(DnsJudge6, EveryBlockNamesItselfAtBothEnds) {
  EXPECT_EQ(
      "100::ffff:ffff:ffff:ffff -> 100::/64 discard-only (RFC 6666)\n"
      "2001:1::2 -> 2001:1::2/128 TURN anycast (RFC 8155)\n"
      "2001:1::3 -> 2001:1::3/128 DNS-SD service registration anycast (RFC 9665)\n"
      "2001:1::4 -> 2001::/23 IETF protocol assignments (RFC 2928)\n"
      "2001:2:: -> 2001:2::/48 benchmarking (RFC 5180)\n"
      "2001:2:0:ffff:ffff:ffff:ffff:ffff -> 2001:2::/48 benchmarking (RFC 5180)\n"
      "2001:3:: -> 2001:3::/32 AMT (RFC 7450)\n"
      "2001:3:ffff:ffff:ffff:ffff:ffff:ffff -> 2001:3::/32 AMT (RFC 7450)\n"
      "2001:4:112:: -> 2001:4:112::/48 AS112-v6 (RFC 7535)\n"
      "2001:4:112:ffff:ffff:ffff:ffff:ffff -> 2001:4:112::/48 AS112-v6 (RFC 7535)\n"
      "2001:10:: -> 2001:10::/28 ORCHID, deprecated (RFC 4843)\n"
      "2001:1f:ffff:ffff:ffff:ffff:ffff:ffff -> 2001:10::/28 ORCHID, deprecated (RFC 4843)\n"
      "2001:20:: -> 2001:20::/28 ORCHIDv2 (RFC 7343)\n"
      "2001:2f:ffff:ffff:ffff:ffff:ffff:ffff -> 2001:20::/28 ORCHIDv2 (RFC 7343)\n"
      "2001:30:: -> 2001:30::/28 drone remote ID (RFC 9374)\n"
      "2001:3f:ffff:ffff:ffff:ffff:ffff:ffff -> 2001:30::/28 drone remote ID (RFC 9374)\n"
      "2001:0:ffff:ffff:ffff:ffff:ffff:ffff -> 2001::/32 Teredo (RFC 4380)"
      ", embeds server 255.255.255.255 (255.255.255.255/32 limited broadcast)"
      ", embeds client 0.0.0.0 (0.0.0.0/8 this network)\n"
      "64:ff9b::ffff:ffff -> 64:ff9b::/96 NAT64 well-known prefix (RFC 6052)"
      ", embeds 255.255.255.255 (255.255.255.255/32 limited broadcast)\n"
      "64:ff9b:1:ffff:ffff:ffff:ffff:ffff -> 64:ff9b:1::/48 NAT64 local use (RFC 8215)"
      ", embeds 255.255.255.255 (255.255.255.255/32 limited broadcast)\n"
      "::ffff:ffff:ffff -> ::ffff:0:0/96 IPv4-mapped (RFC 4291)"
      ", embeds 255.255.255.255 (255.255.255.255/32 limited broadcast)\n"
      "::ffff:0:ffff:ffff -> ::ffff:0:0:0/96 IPv4-translated (RFC 2765)"
      ", embeds 255.255.255.255 (255.255.255.255/32 limited broadcast)\n"
      "::ffff:ffff -> ::/96 IPv4-compatible, deprecated (RFC 4291)"
      ", embeds 255.255.255.255 (255.255.255.255/32 limited broadcast)\n"
      "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff -> 2002::/16 6to4 (RFC 3056)"
      ", embeds 255.255.255.255 (255.255.255.255/32 limited broadcast)\n"
      "5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff -> 5f00::/16 segment routing SIDs (RFC 9602)\n"
      "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff -> fc00::/7 unique local (RFC 4193)\n"
      "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff -> fe80::/10 link-local (RFC 4291)\n"
      "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff -> fec0::/10 site-local, deprecated (RFC 3879)\n"
      "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff -> ff00::/8 multicast (RFC 4291)\n",
      reasons6({"100::ffff:ffff:ffff:ffff", "2001:1::2", "2001:1::3", "2001:1::4", "2001:2::",
                "2001:2:0:ffff:ffff:ffff:ffff:ffff", "2001:3::", "2001:3:ffff:ffff:ffff:ffff:ffff:ffff",
                "2001:4:112::", "2001:4:112:ffff:ffff:ffff:ffff:ffff", "2001:10::",
                "2001:1f:ffff:ffff:ffff:ffff:ffff:ffff", "2001:20::", "2001:2f:ffff:ffff:ffff:ffff:ffff:ffff",
                "2001:30::", "2001:3f:ffff:ffff:ffff:ffff:ffff:ffff", "2001:0:ffff:ffff:ffff:ffff:ffff:ffff",
                "64:ff9b::ffff:ffff", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "::ffff:ffff:ffff", "::ffff:0:ffff:ffff",
                "::ffff:ffff", "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
                "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
                "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}));
}
