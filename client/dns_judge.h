// Judging the addresses of an answer before one is dialled: every address is judged and one
// special-purpose address refuses the whole answer, wherever it stands (a name with a private
// address in its answer is one resolver change from being sent there). The address chosen is
// dialled as a literal, with no second lookup that could answer differently (rebinding).
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <vector>

namespace dns {

// True for an address in one of the IPv4 special-purpose ranges (private, loopback,
// link-local, shared, documentation, benchmarking, multicast, reserved, broadcast...).
bool is_special(uint32_t host_order_addr);

// The range `host_order_addr` falls in, as "172.16.0.0/12 private", or nullptr.
const char* special_range(uint32_t host_order_addr);

struct Pin {
  int chosen = -1;   // index of the address to dial, or -1
  int refused = -1;  // index of the FIRST special address when the answer is refused, or -1
};

// With allow_private every answer is accepted and its first address chosen. Without,
// any special address refuses the whole answer (the first one in answer order is named);
// otherwise the first address is chosen. An empty answer gives {-1, -1}.
Pin pin_choose(const std::vector<in_addr>& addrs, bool allow_private);

}  // namespace dns
