// Differential: our parser against c-ares' ares_parse_a_reply (libc-ares 1.18), an
// independent parser of the same answers. Accept/reject and the A records must agree.
// WORK IN PROGRESS: no filters yet.
#include <ares.h>
#include <arpa/inet.h>

#include <string>
#include <vector>

#include "dns_message.h"
#include "exact_input.h"
#include "mirror_query.h"
#include "property.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ExactInput input(data, size);
  dns::Span msg = input.span();
  dns::Query asked = mirror_query(msg);
  dns::Answer ours = dns::parse_response(msg, asked);
  if (ours.code != dns::ok && ours.code != dns::no_address && ours.code != dns::malformed) return 0;

  std::vector<ares_addrttl> ttls(msg.size / 15 + 1);
  int count = static_cast<int>(ttls.size());
  int status = ares_parse_a_reply(msg.data, static_cast<int>(msg.size), nullptr, ttls.data(), &count);
  std::vector<uint32_t> theirs;
  if (status == ARES_SUCCESS) {
    for (int i = 0; i < count; ++i) theirs.push_back(ttls[i].ipaddr.s_addr);
  }
  std::vector<uint32_t> mine;
  for (const in_addr& a : ours.addrs) mine.push_back(a.s_addr);
  const char* verdict = status == ARES_SUCCESS && count > 0 ? "ok"
                        : status == ARES_SUCCESS || status == ARES_ENODATA ? "no_address"
                        : "malformed";
  if (std::string(verdict) != dns::dns_error_name(ours.code) || mine != theirs) {
    fprintf(stderr, "ours: %s; c-ares: status %d (%s), %d addresses\n", dns::describe(ours).c_str(), status,
            ares_strerror(status), count);
  }
  PROPERTY(std::string(verdict) == dns::dns_error_name(ours.code));
  PROPERTY(mine == theirs);
  return 0;
}
