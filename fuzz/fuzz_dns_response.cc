// The response parser, then the judge, on any message.
// Properties:
//  - the code and the fields agree (ok has addresses, malformed names a fault, nothing else does);
//  - every address kept was written in the message as an A IN record (TYPE 1, CLASS 1, any TTL,
//    RDLENGTH 4, then the four octets), found by a plain scan independent of the parser's walk;
//  - pin_choose: a refused answer names a special address and no special address stands before
//    it; a chosen one has no special address at all; --allow-private always chooses the first.
#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "dns_judge.h"
#include "dns_message.h"
#include "exact_input.h"
#include "mirror_query.h"
#include "property.h"

namespace {

// Every 4 octets that follow TYPE 1, CLASS 1, any TTL and RDLENGTH 4, wherever they are.
std::vector<uint32_t> a_record_shapes(dns::Span msg) {
  std::vector<uint32_t> found;
  const uint8_t* p = msg.data;
  for (size_t at = 10; at + 4 <= msg.size; ++at) {
    if (p[at - 10] == 0 && p[at - 9] == 1 && p[at - 8] == 0 && p[at - 7] == 1 && p[at - 2] == 0 && p[at - 1] == 4) {
      uint32_t addr;
      std::memcpy(&addr, p + at, 4);
      found.push_back(addr);
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

void check_fields(dns::Span msg, const dns::Answer& answer) {
  PROPERTY((answer.code == dns::ok) == !answer.addrs.empty());
  PROPERTY((answer.code == dns::malformed) == (answer.fault != dns::Fault::none));
  bool read_records = answer.code == dns::ok || answer.code == dns::no_address || answer.code == dns::malformed;
  if (!read_records) PROPERTY(answer.cnames == 0 && answer.ignored == 0 && answer.addrs.empty());
  if (!answer.addrs.empty()) {
    std::vector<uint32_t> shapes = a_record_shapes(msg);
    for (const in_addr& addr : answer.addrs) PROPERTY(std::binary_search(shapes.begin(), shapes.end(), addr.s_addr));
  }
  if (msg.size >= dns::header_size)
    PROPERTY(answer.addrs.size() <= static_cast<size_t>(msg.data[6] << 8 | msg.data[7]));
}

void check_pin(const std::vector<in_addr>& addrs) {
  dns::Pin strict = dns::pin_choose(addrs, false);
  dns::Pin lax = dns::pin_choose(addrs, true);
  if (addrs.empty()) {
    PROPERTY(strict.chosen == -1 && strict.refused == -1 && lax.chosen == -1 && lax.refused == -1);
    return;
  }
  PROPERTY(lax.chosen == 0 && lax.refused == -1);
  PROPERTY((strict.chosen == -1) != (strict.refused == -1));
  size_t stop = strict.refused >= 0 ? static_cast<size_t>(strict.refused) : addrs.size();
  for (size_t i = 0; i < stop; ++i) PROPERTY(!dns::is_special(ntohl(addrs[i].s_addr)));
  if (strict.refused >= 0) PROPERTY(dns::is_special(ntohl(addrs[stop].s_addr)));
  if (strict.chosen >= 0) PROPERTY(strict.chosen == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ExactInput input(data, size);
  dns::Span msg = input.span();
  dns::Answer answer = parse_mirrored(msg);
  check_fields(msg, answer);
  check_pin(answer.addrs);
  return 0;
}
