// The response parser, then the judge, on any message.
// Properties:
//  - the code and the fields agree (ok has addresses, malformed names a fault, nothing else does);
//  - every address kept was written in the message as an A IN record (TYPE 1, CLASS 1, any TTL,
//    RDLENGTH 4, then the four octets), found by a plain scan independent of the parser's walk;
//  - pin_choose: a refused answer names a special address and no special address stands before
//    it; a chosen one has no special address at all; --allow-private always chooses the first;
//  - parsing is a function of the octets: a second parse describes the same answer.
#include <arpa/inet.h>

#include <cstring>

#include "dns_judge.h"
#include "dns_message.h"
#include "exact_input.h"
#include "mirror_query.h"
#include "property.h"

namespace {

bool written_as_a_record(dns::Span msg, in_addr addr) {
  static const uint8_t kTypeClass[] = {0, 1, 0, 1};
  static const uint8_t kRdlength[] = {0, 4};
  for (size_t at = 10; at + 4 <= msg.size; ++at) {
    if (std::memcmp(msg.data + at, &addr.s_addr, 4) == 0 && std::memcmp(msg.data + at - 2, kRdlength, 2) == 0 &&
        std::memcmp(msg.data + at - 10, kTypeClass, 4) == 0) {
      return true;
    }
  }
  return false;
}

void check_fields(dns::Span msg, const dns::Answer& answer) {
  PROPERTY((answer.code == dns::ok) == !answer.addrs.empty());
  PROPERTY((answer.code == dns::malformed) == (answer.fault != dns::Fault::none));
  bool read_records = answer.code == dns::ok || answer.code == dns::no_address || answer.code == dns::malformed;
  if (!read_records) PROPERTY(answer.cnames == 0 && answer.ignored == 0 && answer.addrs.empty());
  for (const in_addr& addr : answer.addrs) PROPERTY(written_as_a_record(msg, addr));
  if (msg.size >= dns::header_size) PROPERTY(answer.addrs.size() <= static_cast<size_t>(msg.data[6] << 8 | msg.data[7]));
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
  dns::Query asked = mirror_query(msg);
  dns::Answer answer = dns::parse_response(msg, asked);
  check_fields(msg, answer);
  check_pin(answer.addrs);
  PROPERTY(dns::describe(answer) == dns::describe(dns::parse_response(msg, asked)));
  return 0;
}
