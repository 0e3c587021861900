// The codes of a DNS lookup: the detail of a `lookup` outcome (stage 6, client/outcome.h).
// Names and numbers are stable API, so runs and clients compare (NXDOMAIN -103, no name server -200).
#pragma once

#include <cstdint>

namespace dns {

enum Error : int {
  ok = 0,

  // The server answered with an RCODE other than NOERROR: -100 - RCODE (RFC 1035 4.1.1).
  formerr = -101,
  servfail = -102,
  nxdomain = -103,
  notimp = -104,
  refused = -105,
  rcode_other = -106,  // RCODE 6 to 15; the raw value is in Answer::rcode

  // The answer cannot be used.
  malformed = -110,          // does not parse; Answer::fault says where
  id_mismatch = -111,        // not the id we sent
  not_a_response = -112,     // QR is 0
  opcode_mismatch = -113,    // not the opcode we sent
  question_mismatch = -114,  // not exactly one question, or not ours
  truncated = -115,          // TC set: the answer is incomplete (ask again over TCP)
  no_address = -116,         // parsed, NOERROR, and no A record for the name

  // The query cannot be made.
  bad_name = -120,  // empty label, label over 63, name over 255 octets, a byte outside [A-Za-z0-9_-]

  // DNS over TCP framing (RFC 1035 4.2.2).
  frame_empty = -121,  // a length prefix of 0
  frame_cut = -122,    // the stream ended inside a message

  // The resolver on the event loop.
  no_server = -200,  // nothing accepted the connection
  closed = -201,     // the server closed without a whole answer
  io_error = -202,   // send or receive failed
  timeout = -203,    // no answer before the deadline
};

// "nxdomain", "malformed", ...; "unknown" for a number that is not an Error.
const char* dns_error_name(int code);

// Why an answer is `malformed`: the first thing that did not parse.
enum class Fault : uint8_t {
  none,
  header_short,          // fewer than 12 octets
  name_past_end,         // a label, its length octet or a pointer runs past the message
  label_reserved,        // a length octet starting 01 or 10 (RFC 6891 retired 01; 10 unassigned)
  pointer_outside,       // a pointer into the header or past the end
  pointer_forward,       // a pointer not strictly before the start of the name it continues
  too_many_jumps,        // more than max_jumps pointers in one name
  name_too_long,         // more than 255 octets once expanded
  question_past_end,     // QTYPE/QCLASS cut
  record_past_end,       // TYPE/CLASS/TTL/RDLENGTH cut (ANCOUNT larger than the data)
  rdata_past_end,        // RDLENGTH past the end
  a_rdlength,            // an A record (class IN) whose RDLENGTH is not 4
  cname_rdata,           // a CNAME whose name does not fill its RDATA exactly
  cname_loop,            // a CNAME back to a name already in the chain
  cname_chain_too_long,  // more than max_cnames CNAMEs followed
  aaaa_rdlength,         // an AAAA record (class IN, asked for) whose RDLENGTH is not 16
};

const char* fault_name(Fault fault);

}  // namespace dns
