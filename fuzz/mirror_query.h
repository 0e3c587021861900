// The query a fuzzed message answers: its own id and its own question name, type A.
// A message built from random octets then gets past the id and question checks and into
// its records, where the parsing is.
#pragma once

#include "dns_message.h"

inline dns::Query mirror_query(dns::Span msg) {
  dns::Query query;
  query.code = dns::ok;
  query.qtype = dns::type_a;
  if (msg.size >= 2) query.id = static_cast<uint16_t>(msg.data[0] << 8 | msg.data[1]);
  size_t next = 0;
  if (msg.size < dns::header_size || dns::read_name(msg, dns::header_size, query.name, next) != dns::Fault::none) {
    dns::name_from_text("example.com", query.name);
  }
  return query;
}

// The parser's answer to msg, read as the response to the query it mirrors.
inline dns::Answer parse_mirrored(dns::Span msg) { return dns::parse_response(msg, mirror_query(msg)); }
