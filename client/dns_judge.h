// Judging the addresses of an answer before one is dialled: every address is judged and one
// special-purpose address refuses the whole answer, wherever it stands (a name with a private
// address in its answer is one resolver change from being sent there). The address chosen is
// dialled as a literal, with no second lookup that could answer differently (rebinding).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <vector>

namespace dns {

// True for an address in one of the IPv4 special-purpose ranges (private, loopback,
// link-local, shared, documentation, benchmarking, multicast, reserved, broadcast...).
bool is_special(uint32_t host_order_addr);

// The range `host_order_addr` falls in, as "172.16.0.0/12 private", or nullptr.
const char* special_range(uint32_t host_order_addr);

// An IPv4 address carried inside an IPv6 one, and its place ("embeds", "embeds server"...).
struct Embedded4 {
  uint32_t addr = 0;  // host order
  const char* role = "";
};

// The IPv6 verdict (client/dns_judge6.cc): the block that makes the address special, or
// nullptr when it is public, and the IPv4 addresses the block carries (0 to 2).
struct Special6 {
  const char* block = nullptr;
  Embedded4 embedded[2];
  int count = 0;
};

Special6 judge6(const in6_addr& addr);
bool is_special6(const in6_addr& addr);

// "::ffff:0:0/96 IPv4-mapped (RFC 4291), embeds 127.0.0.1 (127.0.0.0/8 loopback)", or "" when public.
std::string special_reason6(const in6_addr& addr);

// One address of an answer, of either family.
struct Address {
  int family = AF_INET;  // AF_INET or AF_INET6
  in_addr v4{};
  in6_addr v6{};
};

Address address_of(const in_addr& v4);
bool address_from_text(const std::string& text, Address& addr);  // IPv4 or IPv6 literal
Address address_of(const in6_addr& v6);
std::string address_text(const Address& addr);
// Fills `out` with `addr` and `port` (host order); returns the length to give connect().
socklen_t socket_address(const Address& addr, uint16_t port, sockaddr_storage& out);  // dotted quad, or RFC 5952 text
bool is_special(const Address& addr);
std::string special_reason(const Address& addr);  // the range or block, "" when public

struct Pin {
  int chosen = -1;   // index of the address to dial, or -1
  int refused = -1;  // index of the FIRST special address when the answer is refused, or -1
};

// With allow_private every answer is accepted and its first address chosen. Without,
// any special address of either family refuses the whole answer (the first one in answer order is named);
// otherwise the first address is chosen. An empty answer gives {-1, -1}.
Pin pin_choose(const std::vector<Address>& addrs, bool allow_private);
Pin pin_choose(const std::vector<in_addr>& addrs, bool allow_private);

}  // namespace dns
