#include "dns_error.h"

#include <cstddef>

namespace dns {

namespace {

struct CodeName {
  int code;
  const char* name;
};

constexpr CodeName kCodeNames[] = {
    {ok, "ok"},
    {formerr, "formerr"},
    {servfail, "servfail"},
    {nxdomain, "nxdomain"},
    {notimp, "notimp"},
    {refused, "refused"},
    {rcode_other, "rcode_other"},
    {malformed, "malformed"},
    {id_mismatch, "id_mismatch"},
    {not_a_response, "not_a_response"},
    {opcode_mismatch, "opcode_mismatch"},
    {question_mismatch, "question_mismatch"},
    {truncated, "truncated"},
    {no_address, "no_address"},
    {bad_name, "bad_name"},
    {frame_empty, "frame_empty"},
    {frame_cut, "frame_cut"},
    {no_server, "no_server"},
    {closed, "closed"},
    {io_error, "io_error"},
    {timeout, "timeout"},
};

// Indexed by Fault: the order of the enum.
constexpr const char* kFaultNames[] = {
    "none",           "header_short",  "name_past_end",        "label_reserved",  "pointer_outside", "pointer_forward",
    "too_many_jumps", "name_too_long", "question_past_end",    "record_past_end", "rdata_past_end",  "a_rdlength",
    "cname_rdata",    "cname_loop",    "cname_chain_too_long", "aaaa_rdlength",
};
static_assert(sizeof(kFaultNames) / sizeof(kFaultNames[0]) == static_cast<size_t>(Fault::aaaa_rdlength) + 1,
              "one name per Fault");

}  // namespace

const char* dns_error_name(int code) {
  for (const CodeName& entry : kCodeNames) {
    if (entry.code == code) return entry.name;
  }
  return "unknown";
}

const char* fault_name(Fault fault) {
  auto index = static_cast<size_t>(fault);
  if (index >= sizeof(kFaultNames) / sizeof(kFaultNames[0])) return "unknown";
  return kFaultNames[index];
}

}  // namespace dns
