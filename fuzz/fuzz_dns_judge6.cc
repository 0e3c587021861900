// The judge over answers of both families. Input: addresses one after another, each a tag
// octet (odd: IPv6, 16 octets follow; even: IPv4, 4 octets follow); a cut address ends it.
// Properties:
//  - is_special6 agrees with a second reading of the registry written here from the
//    oracle's table (fuzz/judge_oracle6.py's TABLE, parsed as text, matched bit by bit
//    another way) and its rule: public only inside 2000::/3, outside every block, and no
//    ISATAP interface id carrying a special IPv4;
//  - special_reason6 is empty exactly for a public address; a block that carries IPv4
//    names each address it carries with the IPv4 table's verdict; in the mapped,
//    translated and NAT64 well-known blocks that address is the last 32 bits;
//  - pin_choose over the answer: a refused one names a special address with none before
//    it, a chosen one has none, --allow-private always picks the first.
#include <arpa/inet.h>

#include <cstring>
#include <string>
#include <vector>

#include "dns_judge.h"
#include "property.h"

namespace {

struct Block {
  const char* text;
  int prefix;
};

// fuzz/judge_oracle6.py's TABLE, the same text.
constexpr Block kOracleTable[] = {
    {"::", 128},         {"::1", 128},          {"::ffff:0:0", 96},    {"::ffff:0:0:0", 96},  {"::", 96},
    {"64:ff9b::", 96},   {"64:ff9b:1::", 48},   {"100::", 64},         {"2001:1::1", 128},    {"2001:1::2", 128},
    {"2001:1::3", 128},  {"2001:2::", 48},      {"2001:3::", 32},      {"2001:4:112::", 48},  {"2001:10::", 28},
    {"2001:20::", 28},   {"2001:30::", 28},     {"2001::", 32},        {"2001::", 23},        {"2001:db8::", 32},
    {"2002::", 16},      {"3fff::", 20},        {"5f00::", 16},        {"fc00::", 7},         {"fe80::", 10},
    {"fec0::", 10},      {"ff00::", 8},
};

using u128 = unsigned __int128;

u128 value_of(const uint8_t* a) {
  u128 v = 0;
  for (int i = 0; i < 16; ++i) v = v << 8 | a[i];
  return v;
}

// As a 128-bit number, masked (the client compares octets, then a partial one).
struct Parsed {
  u128 base = 0;
  u128 mask = 0;
};

// The table's text parsed once.
const std::vector<Parsed>& oracle_table() {
  static const std::vector<Parsed> parsed = [] {
    std::vector<Parsed> out;
    for (const Block& block : kOracleTable) {
      in6_addr base{};
      inet_pton(AF_INET6, block.text, &base);
      Parsed p;
      p.mask = block.prefix == 0 ? 0 : ~u128{0} << (128 - block.prefix);
      p.base = value_of(base.s6_addr) & p.mask;
      out.push_back(p);
    }
    return out;
  }();
  return parsed;
}

bool in_block(u128 value, const Parsed& block) { return (value & block.mask) == block.base; }

uint32_t low32(const uint8_t* a) {
  uint32_t v;
  std::memcpy(&v, a + 12, 4);
  return ntohl(v);
}

bool reference_special(const uint8_t* a) {
  u128 value = value_of(a);
  if (value >> 125 != 1) return true;  // outside 2000::/3
  for (const Parsed& block : oracle_table()) {
    if (in_block(value, block)) return true;
  }
  bool isatap = (a[8] | 0x02) == 0x02 && a[9] == 0 && a[10] == 0x5e && a[11] == 0xfe;
  return isatap && dns::is_special(low32(a));
}

std::string quad(uint32_t host_order) {
  in_addr in{htonl(host_order)};
  char text[INET_ADDRSTRLEN] = "";
  inet_ntop(AF_INET, &in, text, sizeof text);
  return text;
}

void check_address6(const in6_addr& addr) {
  bool special = dns::is_special6(addr);
  PROPERTY(special == reference_special(addr.s6_addr));
  std::string reason = dns::special_reason6(addr);
  PROPERTY(reason.empty() == !special);
  dns::Special6 verdict = dns::judge6(addr);
  PROPERTY(verdict.count >= 0 && verdict.count <= 2);
  for (int i = 0; i < verdict.count; ++i) {
    const char* range = dns::special_range(verdict.embedded[i].addr);
    std::string named = " " + quad(verdict.embedded[i].addr) + " (" + (range ? range : "public") + ")";
    PROPERTY(reason.find(named) != std::string::npos);
  }
  // Mapped, translated and NAT64's well-known prefix carry their IPv4 in the last 32 bits: it is the one named.
  for (size_t block : {2, 3, 5}) {
    if (in_block(value_of(addr.s6_addr), oracle_table()[block]))
      PROPERTY(verdict.count == 1 && verdict.embedded[0].addr == low32(addr.s6_addr));
  }
}

void check_pin(const std::vector<dns::Address>& addrs) {
  dns::Pin strict = dns::pin_choose(addrs, false);
  dns::Pin lax = dns::pin_choose(addrs, true);
  PROPERTY(lax.chosen == (addrs.empty() ? -1 : 0) && lax.refused == -1);
  PROPERTY(strict.chosen == -1 || strict.refused == -1);
  size_t stop = strict.refused >= 0 ? static_cast<size_t>(strict.refused) : addrs.size();
  for (size_t i = 0; i < stop; ++i) PROPERTY(!dns::is_special(addrs[i]));
  if (strict.refused >= 0) PROPERTY(dns::is_special(addrs[stop]));
  if (!addrs.empty() && strict.refused < 0) PROPERTY(strict.chosen == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<dns::Address> addrs;
  for (size_t pos = 0; pos < size;) {
    bool six = data[pos] & 1;
    size_t len = six ? 16 : 4;
    if (pos + 1 + len > size) break;
    if (six) {
      in6_addr v6;
      std::memcpy(v6.s6_addr, data + pos + 1, 16);
      check_address6(v6);
      addrs.push_back(dns::address_of(v6));
    } else {
      in_addr v4;
      std::memcpy(&v4.s_addr, data + pos + 1, 4);
      addrs.push_back(dns::address_of(v4));
    }
    pos += 1 + len;
  }
  check_pin(addrs);
  return 0;
}
