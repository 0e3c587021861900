// A DNS query for one name, and the parser of its response (RFC 1035 4.1).
// The parser reads a Span exactly as long as the message and never past it; it checks
// the answer against the query it answers and keeps only the A records of the name,
// or of its CNAME chain followed in answer order.
#pragma once

#include <netinet/in.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dns_error.h"
#include "dns_name.h"

namespace dns {

constexpr uint16_t type_a = 1;
constexpr uint16_t type_cname = 5;
constexpr uint16_t type_aaaa = 28;
constexpr uint16_t class_in = 1;
constexpr int max_cnames = 16;  // CNAMEs followed from the question's name

// What was asked: the answer is checked against it. `message` is ready to send
// (a UDP datagram as is; over TCP, frame() it: dns_stream.h).
struct Query {
  int code = bad_name;  // ok, or bad_name: then nothing else is set
  uint16_t id = 0;
  uint16_t qtype = type_a;
  Name name;
  std::vector<uint8_t> message;
};

// A standard query (RD set) for `name` (text, see name_from_text) of type `qtype`, class IN.
Query build_query(uint16_t id, std::string_view name, uint16_t qtype = type_a);

struct Answer {
  int code = malformed;        // ok or a negative dns::Error
  Fault fault = Fault::none;   // why, when code is malformed
  uint8_t rcode = 0;           // as received (0 when the header did not parse)
  bool tc = false;             // the TC bit as received
  std::vector<in_addr> addrs;  // the A records of the name, in answer order (a query of type A)
  std::vector<in6_addr> addrs6;  // the AAAA records of the name, in answer order (a query of type AAAA)
  uint32_t min_ttl = 0;        // over the CNAMEs followed and the A records kept
  int cnames = 0;              // CNAMEs followed
  int ignored = 0;             // answer records for another name, type or class
};

// Checks, in this order: the query was made (else bad_name); the header is whole; the id, QR and opcode are the query's;
// exactly one question, equal to the query's (name without regard to case, type, class IN);
// TC clear; RCODE 0; then every answer record parses (the authority and additional
// sections are not read). ok needs at least one record of the asked type (A or AAAA) for
// the name or its chain; records of the other address type are ignored.
Answer parse_response(Span msg, const Query& asked);

// One canonical line for an Answer: "ok [1.2.3.4 5.6.7.8] ttl=60 cnames=1 ignored=2",
// "nxdomain", "malformed(pointer_forward)". Tests compare it whole.
std::string describe(const Answer& answer);

}  // namespace dns
