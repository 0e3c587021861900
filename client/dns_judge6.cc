// The IPv6 half of the judge: the IANA IPv6 special-purpose registry as a table, and every
// way an IPv6 address carries an IPv4 one, extracted and judged by the IPv4 table.
// Rule (the safest reading of the registry): an IPv6 address is public only inside
// 2000::/3 (global unicast, RFC 4291 2.4) and outside every block below, and, when its
// interface id is an ISATAP one, only when the IPv4 address in it is public.
// fuzz/judge_oracle.py checks this table against Python's ipaddress and a table of its own.
#include <arpa/inet.h>

#include <cstring>
#include <string>

#include "dns_judge.h"

namespace dns {

namespace {

// Where a block carries an IPv4 address (RFC 6052 2.2 layouts for NAT64).
enum class Embeds { none, low32, nat64_48, six_to_four, teredo };

struct SpecialBlock6 {
  uint8_t base[16];
  int prefix;  // 0 to 128
  Embeds embeds;
  const char* name;
};

// IANA IPv6 special-purpose address registry (RFC 6890 and successors) plus the deprecated
// site-local and multicast blocks; the first match names the block, so a block inside
// another comes first. Every one is refused, the registry's "globally reachable"
// exceptions inside 2001::/23 too: anycast and tunnelling services no client should dial.
constexpr SpecialBlock6 kSpecialBlocks6[] = {
    {{}, 128, Embeds::none, "::/128 unspecified (RFC 4291)"},
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 128, Embeds::none, "::1/128 loopback (RFC 4291)"},
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 96, Embeds::low32, "::ffff:0:0/96 IPv4-mapped (RFC 4291)"},
    {{0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 96, Embeds::low32, "::ffff:0:0:0/96 IPv4-translated (RFC 2765)"},
    {{}, 96, Embeds::low32, "::/96 IPv4-compatible, deprecated (RFC 4291)"},
    {{0, 0x64, 0xff, 0x9b}, 96, Embeds::low32, "64:ff9b::/96 NAT64 well-known prefix (RFC 6052)"},
    {{0, 0x64, 0xff, 0x9b, 0, 1}, 48, Embeds::nat64_48, "64:ff9b:1::/48 NAT64 local use (RFC 8215)"},
    {{0x01, 0x00}, 64, Embeds::none, "100::/64 discard-only (RFC 6666)"},
    {{0x20, 0x01, 0, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01}, 128, Embeds::none,
     "2001:1::1/128 port control protocol anycast (RFC 7723)"},
    {{0x20, 0x01, 0, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02}, 128, Embeds::none,
     "2001:1::2/128 TURN anycast (RFC 8155)"},
    {{0x20, 0x01, 0, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x03}, 128, Embeds::none,
     "2001:1::3/128 DNS-SD service registration anycast (RFC 9665)"},
    {{0x20, 0x01, 0, 0x02, 0, 0}, 48, Embeds::none, "2001:2::/48 benchmarking (RFC 5180)"},
    {{0x20, 0x01, 0, 0x03}, 32, Embeds::none, "2001:3::/32 AMT (RFC 7450)"},
    {{0x20, 0x01, 0, 0x04, 0x01, 0x12}, 48, Embeds::none, "2001:4:112::/48 AS112-v6 (RFC 7535)"},
    {{0x20, 0x01, 0, 0x10}, 28, Embeds::none, "2001:10::/28 ORCHID, deprecated (RFC 4843)"},
    {{0x20, 0x01, 0, 0x20}, 28, Embeds::none, "2001:20::/28 ORCHIDv2 (RFC 7343)"},
    {{0x20, 0x01, 0, 0x30}, 28, Embeds::none, "2001:30::/28 drone remote ID (RFC 9374)"},
    {{0x20, 0x01, 0, 0}, 32, Embeds::teredo, "2001::/32 Teredo (RFC 4380)"},
    {{0x20, 0x01, 0, 0}, 23, Embeds::none, "2001::/23 IETF protocol assignments (RFC 2928)"},
    {{0x20, 0x01, 0x0d, 0xb8}, 32, Embeds::none, "2001:db8::/32 documentation (RFC 3849)"},
    {{0x20, 0x02}, 16, Embeds::six_to_four, "2002::/16 6to4 (RFC 3056)"},
    {{0x3f, 0xff, 0}, 20, Embeds::none, "3fff::/20 documentation (RFC 9637)"},
    {{0x5f, 0x00}, 16, Embeds::none, "5f00::/16 segment routing SIDs (RFC 9602)"},
    {{0xfc}, 7, Embeds::none, "fc00::/7 unique local (RFC 4193)"},
    {{0xfe, 0x80}, 10, Embeds::none, "fe80::/10 link-local (RFC 4291)"},
    {{0xfe, 0xc0}, 10, Embeds::none, "fec0::/10 site-local, deprecated (RFC 3879)"},
    {{0xff}, 8, Embeds::none, "ff00::/8 multicast (RFC 4291)"},
};

constexpr const char* kOutsideGlobalUnicast = "outside 2000::/3 global unicast (RFC 4291)";
constexpr const char* kIsatap = "ISATAP interface id (RFC 5214)";

bool inside(const uint8_t* addr, const uint8_t* base, int prefix) {
  int whole = prefix / 8, bits = prefix % 8;
  if (std::memcmp(addr, base, static_cast<size_t>(whole)) != 0) return false;
  if (bits == 0) return true;
  uint8_t mask = static_cast<uint8_t>(0xff << (8 - bits));
  return (addr[whole] & mask) == (base[whole] & mask);
}

uint32_t be32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

// RFC 5214 6.1: interface id 0000:5efe or 0200:5efe (the u bit), then the IPv4 address.
bool isatap_interface(const uint8_t* a) {
  return (a[8] == 0 || a[8] == 0x02) && a[9] == 0 && a[10] == 0x5e && a[11] == 0xfe;
}

std::string quad(uint32_t host_order) {
  in_addr in{htonl(host_order)};
  char text[INET_ADDRSTRLEN] = "";
  inet_ntop(AF_INET, &in, text, sizeof text);
  return text;
}

// The embedded IPv4 address(es) of `a` for the layout `embeds`, with who they are.
int embedded(const uint8_t* a, Embeds embeds, Embedded4 out[2]) {
  switch (embeds) {
    case Embeds::none: return 0;
    case Embeds::low32: out[0] = {be32(a + 12), "embeds"}; return 1;
    case Embeds::nat64_48: {  // RFC 6052 2.2, prefix /48: octets 6-7, u octet 8 (zero), then 9-10
      const uint8_t v4[4] = {a[6], a[7], a[9], a[10]};
      out[0] = {be32(v4), "embeds"};
      return 1;
    }
    case Embeds::six_to_four: out[0] = {be32(a + 2), "embeds"}; return 1;
    case Embeds::teredo:  // RFC 4380 4: server at 32-63, client at 96-127 with every bit flipped
      out[0] = {be32(a + 4), "embeds server"};
      out[1] = {~be32(a + 12), "embeds client"};
      return 2;
  }
  return 0;
}

}  // namespace

Special6 judge6(const in6_addr& addr) {
  const uint8_t* a = addr.s6_addr;
  Special6 verdict;
  for (const SpecialBlock6& block : kSpecialBlocks6) {
    if (!inside(a, block.base, block.prefix)) continue;
    verdict.block = block.name;
    verdict.count = embedded(a, block.embeds, verdict.embedded);
    return verdict;
  }
  if ((a[0] & 0xe0) != 0x20) {
    verdict.block = kOutsideGlobalUnicast;
    return verdict;
  }
  if (isatap_interface(a)) {
    uint32_t v4 = be32(a + 12);
    if (is_special(v4)) {
      verdict.block = kIsatap;
      verdict.embedded[0] = {v4, "embeds"};
      verdict.count = 1;
    }
  }
  return verdict;
}

bool is_special6(const in6_addr& addr) { return judge6(addr).block != nullptr; }

std::string special_reason6(const in6_addr& addr) {
  Special6 verdict = judge6(addr);
  if (verdict.block == nullptr) return "";
  std::string text = verdict.block;
  for (int i = 0; i < verdict.count; ++i) {
    const Embedded4& e = verdict.embedded[i];
    const char* range = special_range(e.addr);
    text += std::string(", ") + e.role + " " + quad(e.addr) + " (" + (range ? range : "public") + ")";
  }
  return text;
}

}  // namespace dns
