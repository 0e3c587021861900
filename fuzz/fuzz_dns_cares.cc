// Differential: our parser against c-ares' ares_parse_a_reply (libc-ares 1.18.1), an
// independent parser of the same answers. Property: accept/reject (ok, no address,
// malformed) and the list of A records agree, except where the two are documented to
// differ (fuzz/README.md, "Differences with c-ares"): each filter below names its entry.
#include <ares.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "dns_message.h"
#include "exact_input.h"
#include "mirror_query.h"
#include "property.h"

namespace {

constexpr int kCaresMaxJumps = 50;  // c-ares 1.18.1 rejects a name with more pointers (MAX_INDIRS)

// How c-ares sees one name: it follows any pointer inside the message, forward or not.
struct NameShape {
  bool read = false;  // c-ares can read it at all (within its own limits or ours)
  int jumps = 0;
  bool root_quirk = false;     // first label is one NUL octet: c-ares takes it for the root, 3 octets long
  bool hostname_bytes = true;  // every label octet in [A-Za-z0-9-_/], what c-ares wants in a CNAME target
};

bool cares_hostname_byte(uint8_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '/';
}

NameShape shape_at(dns::Span msg, size_t pos) {
  NameShape shape;
  bool first = true;
  while (pos < msg.size && shape.jumps <= dns::max_jumps) {
    uint8_t octet = msg.data[pos];
    if (octet == 0) {
      shape.read = true;
      return shape;
    }
    if ((octet & 0xC0) == 0xC0) {
      if (pos + 1 >= msg.size) return shape;
      pos = static_cast<size_t>(octet & 0x3F) << 8 | msg.data[pos + 1];
      ++shape.jumps;
      continue;
    }
    if ((octet & 0xC0) != 0 || pos + 1 + octet >= msg.size) return shape;
    if (first && octet == 1 && msg.data[pos + 1] == 0) shape.root_quirk = true;
    for (size_t i = 1; i <= octet; ++i) shape.hostname_bytes &= cares_hostname_byte(msg.data[pos + i]);
    first = false;
    pos += 1 + octet;
  }
  return shape;
}

// What in this message c-ares treats differently, found by walking it the way we do.
struct Quirks {
  bool unrelated_cname = false;     // D2: an IN CNAME of a name outside our chain
  bool root_quirk = false;          // D5
  bool over_cares_jumps = false;    // D4: a name with more than 50 pointers
  bool cname_not_hostname = false;  // D4: a CNAME target with a byte c-ares refuses

  void note(const NameShape& shape) {
    root_quirk |= shape.root_quirk;
    over_cares_jumps |= shape.jumps > kCaresMaxJumps;
  }
};

Quirks find_quirks(dns::Span msg) {
  Quirks quirks;
  size_t pos = dns::header_size;
  dns::Name name, current = mirror_query(msg).name;  // our chain starts at the name we asked
  quirks.note(shape_at(msg, pos));
  if (dns::read_name(msg, pos, name, pos) != dns::Fault::none || msg.size - pos < 4) return quirks;
  pos += 4;
  uint16_t ancount = static_cast<uint16_t>(msg.data[6] << 8 | msg.data[7]);
  for (uint16_t i = 0; i < ancount; ++i) {
    quirks.note(shape_at(msg, pos));
    dns::Name owner;
    if (dns::read_name(msg, pos, owner, pos) != dns::Fault::none || msg.size - pos < 10) return quirks;
    uint16_t type = static_cast<uint16_t>(msg.data[pos] << 8 | msg.data[pos + 1]);
    uint16_t rclass = static_cast<uint16_t>(msg.data[pos + 2] << 8 | msg.data[pos + 3]);
    size_t rdlength = static_cast<size_t>(msg.data[pos + 8] << 8 | msg.data[pos + 9]);
    size_t rdata = pos + 10;
    if (msg.size - rdata < rdlength) return quirks;
    pos = rdata + rdlength;
    if (type != dns::type_cname || rclass != dns::class_in) continue;
    if (!dns::same_name(owner, current)) quirks.unrelated_cname = true;  // its target is read by c-ares only
    NameShape target_shape = shape_at(msg, rdata);
    quirks.note(target_shape);
    quirks.cname_not_hostname |= !target_shape.hostname_bytes;
    size_t end = 0;
    if (dns::read_name(msg, rdata, current, end) != dns::Fault::none) return quirks;
  }
  return quirks;
}

// Faults where we refuse what c-ares 1.18.1 accepts (D3).
bool stricter_than_cares(dns::Fault fault) {
  switch (fault) {
    case dns::Fault::pointer_forward:
    case dns::Fault::pointer_outside:
    case dns::Fault::name_too_long:
    case dns::Fault::a_rdlength:
    case dns::Fault::cname_rdata:
    case dns::Fault::cname_loop:
    case dns::Fault::cname_chain_too_long:
      return true;
    default:
      return false;
  }
}

struct Tally {
  long agreed = 0, header = 0, question = 0, unrelated_cname = 0, root_quirk = 0, cares_stricter = 0;
  long ours_stricter[static_cast<int>(dns::Fault::aaaa_rdlength) + 1] = {0};
  ~Tally() {
    std::string stricter;
    for (int f = 0; f <= static_cast<int>(dns::Fault::aaaa_rdlength); ++f) {
      if (ours_stricter[f] == 0) continue;
      stricter += (stricter.empty() ? "" : ", ") + std::string(dns::fault_name(static_cast<dns::Fault>(f))) + " " +
                  std::to_string(ours_stricter[f]);
    }
    std::fprintf(stderr,
                 "differential: %ld agreed; not compared: %ld header (D1), %ld question type/class (D1); differed "
                 "as documented: %ld unrelated CNAME (D2), stricter here (D3): [%s], %ld stricter in c-ares (D4), "
                 "%ld root quirk (D5)\n",
                 agreed, header, question, unrelated_cname, stricter.c_str(), cares_stricter, root_quirk);
  }
};
Tally tally;

bool decided_by_header(int code) {
  switch (code) {
    case dns::id_mismatch:  // (the mirror query makes this one impossible)
    case dns::not_a_response:
    case dns::opcode_mismatch:
    case dns::truncated:
    case dns::formerr:
    case dns::servfail:
    case dns::nxdomain:
    case dns::notimp:
    case dns::refused:
    case dns::rcode_other:
      return true;
    default:
      return false;
  }
}

const char* verdict_of(int code) {
  if (code == dns::ok || code == dns::no_address || code == dns::malformed) return dns::dns_error_name(code);
  return "malformed";  // question_mismatch for a QDCOUNT other than 1: c-ares says EBADRESP
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ExactInput input(data, size);
  dns::Span msg = input.span();
  dns::Answer ours = parse_mirrored(msg);

  // D1: ares_parse_a_reply reads no header flag (ares_process checks id, TC and RCODE
  // before it) and not the question's type or class.
  if (decided_by_header(ours.code)) return ++tally.header, 0;
  if (ours.code == dns::question_mismatch && msg.data[4] == 0 && msg.data[5] == 1) return ++tally.question, 0;

  std::vector<ares_addrttl> ttls(msg.size / 15 + 1);
  int count = static_cast<int>(ttls.size());
  int status = ares_parse_a_reply(msg.data, static_cast<int>(msg.size), nullptr, ttls.data(), &count);
  std::string theirs = status == ARES_SUCCESS && count > 0                ? "ok"
                       : status == ARES_SUCCESS || status == ARES_ENODATA ? "no_address"
                                                                          : "malformed";
  std::string mine = verdict_of(ours.code);

  std::vector<uint32_t> our_addrs, their_addrs;
  for (const in_addr& a : ours.addrs) our_addrs.push_back(a.s_addr);
  for (int i = 0; status == ARES_SUCCESS && i < count; ++i)
    their_addrs.push_back(ttls[static_cast<size_t>(i)].ipaddr.s_addr);
  if (mine == theirs && our_addrs == their_addrs) return ++tally.agreed, 0;

  // They differ: each documented difference that explains it is a filter.
  Quirks quirks = find_quirks(msg);
  // D2: c-ares follows (and reads the target of) any CNAME, whoever owns it; we follow our chain only.
  if (quirks.unrelated_cname) return ++tally.unrelated_cname, 0;
  // D5: c-ares reads a first label of one NUL octet as the root name, 3 octets long.
  if (quirks.root_quirk) return ++tally.root_quirk, 0;
  // D3: forward or header pointers, names over 255, A records not 4 octets, CNAMEs that do
  // not fill their RDATA, CNAME loops and chains over 16: we refuse, c-ares accepts.
  if (mine == "malformed" && theirs != "malformed" && stricter_than_cares(ours.fault)) {
    return ++tally.ours_stricter[static_cast<int>(ours.fault)], 0;
  }
  // D4: over 50 pointers in a name, a CNAME target outside [A-Za-z0-9-_/]: c-ares refuses.
  if (theirs == "malformed" && mine != "malformed" && (quirks.over_cares_jumps || quirks.cname_not_hostname)) {
    return ++tally.cares_stricter, 0;
  }
  std::fprintf(stderr, "ours: %s; c-ares: %s (%s), %d addresses\n", dns::describe(ours).c_str(), theirs.c_str(),
               ares_strerror(status), status == ARES_SUCCESS ? count : 0);
  PROPERTY(mine == theirs);
  PROPERTY(our_addrs == their_addrs);
  return 0;
}
