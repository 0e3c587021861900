#include "dns_judge.h"

#include <arpa/inet.h>

namespace dns {

namespace {

struct SpecialRange {
  uint32_t base;  // host order
  int prefix;     // 1 to 32
  const char* name;
};

constexpr uint32_t v4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { return a << 24 | b << 16 | c << 8 | d; }

// IANA IPv4 special-purpose registry (RFC 6890 and successors), plus multicast; the first
// match names the range.
// fuzz/judge_oracle.py checks this table against Python's ipaddress module.
constexpr SpecialRange kSpecialRanges[] = {
    {v4(0, 0, 0, 0), 8, "0.0.0.0/8 this network"},
    {v4(10, 0, 0, 0), 8, "10.0.0.0/8 private"},
    {v4(100, 64, 0, 0), 10, "100.64.0.0/10 shared address space"},
    {v4(127, 0, 0, 0), 8, "127.0.0.0/8 loopback"},
    {v4(169, 254, 0, 0), 16, "169.254.0.0/16 link-local"},
    {v4(172, 16, 0, 0), 12, "172.16.0.0/12 private"},
    {v4(192, 0, 0, 0), 24, "192.0.0.0/24 IETF protocol assignments"},
    {v4(192, 0, 2, 0), 24, "192.0.2.0/24 documentation"},
    {v4(192, 31, 196, 0), 24, "192.31.196.0/24 AS112-v4"},
    {v4(192, 52, 193, 0), 24, "192.52.193.0/24 AMT"},
    {v4(192, 88, 99, 0), 24, "192.88.99.0/24 deprecated 6to4 relay anycast"},
    {v4(192, 168, 0, 0), 16, "192.168.0.0/16 private"},
    {v4(192, 175, 48, 0), 24, "192.175.48.0/24 direct delegation AS112"},
    {v4(198, 18, 0, 0), 15, "198.18.0.0/15 benchmarking"},
    {v4(198, 51, 100, 0), 24, "198.51.100.0/24 documentation"},
    {v4(203, 0, 113, 0), 24, "203.0.113.0/24 documentation"},
    {v4(224, 0, 0, 0), 4, "224.0.0.0/4 multicast"},
    {v4(255, 255, 255, 255), 32, "255.255.255.255/32 limited broadcast"},  // before 240/4, which holds it
    {v4(240, 0, 0, 0), 4, "240.0.0.0/4 reserved"},
};

constexpr uint32_t mask_of(int prefix) { return prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix); }

}  // namespace

const char* special_range(uint32_t host_order_addr) {
  for (const SpecialRange& range : kSpecialRanges) {
    if ((host_order_addr & mask_of(range.prefix)) == range.base) return range.name;
  }
  return nullptr;
}

bool is_special(uint32_t host_order_addr) { return special_range(host_order_addr) != nullptr; }

Address address_of(const in_addr& v4) {
  Address addr;
  addr.v4 = v4;
  return addr;
}

Address address_of(const in6_addr& v6) {
  Address addr;
  addr.family = AF_INET6;
  addr.v6 = v6;
  return addr;
}

bool address_from_text(const std::string& text, Address& addr) {
  addr = Address{};
  if (inet_pton(AF_INET, text.c_str(), &addr.v4) == 1) return true;
  addr.family = AF_INET6;
  return inet_pton(AF_INET6, text.c_str(), &addr.v6) == 1;
}

socklen_t socket_address(const Address& addr, uint16_t port, sockaddr_storage& out) {
  out = sockaddr_storage{};
  if (addr.family == AF_INET6) {
    auto* six = reinterpret_cast<sockaddr_in6*>(&out);
    six->sin6_family = AF_INET6;
    six->sin6_port = htons(port);
    six->sin6_addr = addr.v6;
    return sizeof *six;
  }
  auto* four = reinterpret_cast<sockaddr_in*>(&out);
  four->sin_family = AF_INET;
  four->sin_port = htons(port);
  four->sin_addr = addr.v4;
  return sizeof *four;
}

std::string address_text(const Address& addr) {
  char text[INET6_ADDRSTRLEN] = "";
  if (addr.family == AF_INET6) inet_ntop(AF_INET6, &addr.v6, text, sizeof text);
  else inet_ntop(AF_INET, &addr.v4, text, sizeof text);
  return text;
}

bool is_special(const Address& addr) {
  return addr.family == AF_INET6 ? is_special6(addr.v6) : is_special(ntohl(addr.v4.s_addr));
}

std::string special_reason(const Address& addr) {
  if (addr.family == AF_INET6) return special_reason6(addr.v6);
  const char* range = special_range(ntohl(addr.v4.s_addr));
  return range ? range : "";
}

Pin pin_choose(const std::vector<in_addr>& addrs, bool allow_private) {
  std::vector<Address> both;
  both.reserve(addrs.size());
  for (const in_addr& addr : addrs) both.push_back(address_of(addr));
  return pin_choose(both, allow_private);
}

Pin pin_choose(const std::vector<Address>& addrs, bool allow_private) {
  Pin pin;
  if (addrs.empty()) return pin;
  if (!allow_private) {
    for (size_t i = 0; i < addrs.size(); ++i) {
      if (is_special(addrs[i])) {
        pin.refused = static_cast<int>(i);
        return pin;
      }
    }
  }
  pin.chosen = 0;
  return pin;
}

}  // namespace dns
