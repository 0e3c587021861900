// Domain names on the wire: reading one (with compression pointers) out of a message,
// writing one from text, comparing two, printing one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "dns_error.h"

namespace dns {

// A received message, exactly as long as it is: nothing here reads past data + size.
struct Span {
  const uint8_t* data = nullptr;
  size_t size = 0;
};

constexpr size_t header_size = 12;
constexpr size_t max_name = 255;  // octets on the wire, root label included (RFC 1035 2.3.4)
constexpr size_t max_label = 63;
constexpr int max_jumps = 128;  // pointers followed in one name

// A name in uncompressed wire form: length-prefixed labels, then the root label (0).
struct Name {
  uint8_t wire[max_name] = {0};
  size_t size = 1;  // the root name: one zero octet
};

// Reads the name that starts at `offset` of `msg` into `out`.
// A compression pointer must land inside the message, after the header, and strictly
// before the start of the name (or name tail) it continues: every jump goes backwards,
// so no loop can be written, and max_jumps bounds the chain anyway.
// On success `next` is the offset just after the name as written at `offset`
// (after its first pointer, if it has one). Fault::none on success.
Fault read_name(Span msg, size_t offset, Name& out, size_t& next);

// "www.example.com" or "www.example.com." into wire form. False for an empty name,
// an empty label, a label over 63 octets, a name over 255 octets, or a byte outside
// letters, digits, '-' and '_' (a resolver asks for host names, nothing else).
bool name_from_text(std::string_view text, Name& out);

// Why name_from_text refuses `text`, in words (the first rule it breaks, and where: "300 characters (a
// DNS name holds at most 253, RFC 1035 2.3.4)", "control character 0x01 at offset 5 (...)"); "" when it
// takes it. The same rules, applied by the same code: the CLI's --name check (client/options.cc).
std::string name_text_problem(std::string_view text);

// Equal as DNS names: label by label, ASCII letters without regard to case (RFC 4343).
bool same_name(const Name& a, const Name& b);

// Presentation form: labels joined by '.', "." for the root; '.', '\\' and bytes outside
// printable ASCII escaped (\. \\ \DDD) so a NUL inside a label shows and cannot truncate.
std::string name_to_text(const Name& name);

}  // namespace dns
