// Name decompression from a chosen offset. Input: a 2-octet offset, then the message.
// Properties:
//  - read_name agrees with a reference decoder written here another way (recursive, the
//    limits checked where the RFC states them): same fault, or the same name and `next`;
//  - a name read is well formed: labels of 1 to 63 octets, one root label at its end,
//    255 octets at most, and `next` lies after the offset, inside the message;
//  - a name of host-name bytes survives text and back (name_to_text, name_from_text).
#include <string>

#include "dns_name.h"
#include "exact_input.h"
#include "property.h"

namespace {

struct Reference {
  dns::Fault fault = dns::Fault::none;
  std::string wire;
  size_t next = 0;
};

// Reads the labels at `pos`; a pointer must land before `tail`, the start of this stretch.
dns::Fault reference_read(dns::Span msg, size_t pos, size_t tail, int jumps, Reference& ref, bool first) {
  if (pos >= msg.size) return dns::Fault::name_past_end;
  uint8_t octet = msg.data[pos];
  switch (octet >> 6) {
    case 3: {
      if (pos + 2 > msg.size) return dns::Fault::name_past_end;
      size_t target = (octet & 0x3Fu) * 256u + msg.data[pos + 1];
      if (first) ref.next = pos + 2;
      if (target < dns::header_size || target >= msg.size) return dns::Fault::pointer_outside;
      if (target >= tail) return dns::Fault::pointer_forward;
      if (jumps + 1 > dns::max_jumps) return dns::Fault::too_many_jumps;
      return reference_read(msg, target, target, jumps + 1, ref, false);
    }
    case 0: {
      if (pos + 1 + octet > msg.size) return dns::Fault::name_past_end;
      if (ref.wire.size() + 1 + octet > dns::max_name) return dns::Fault::name_too_long;
      ref.wire.append(reinterpret_cast<const char*>(msg.data + pos), 1 + octet);
      if (octet == 0) {
        if (first) ref.next = pos + 1;
        return dns::Fault::none;
      }
      return reference_read(msg, pos + 1 + octet, tail, jumps, ref, first);
    }
    default:
      return dns::Fault::label_reserved;
  }
}

void check_well_formed(const dns::Name& name) {
  PROPERTY(name.size >= 1 && name.size <= dns::max_name);
  size_t pos = 0;
  while (name.wire[pos] != 0) {
    PROPERTY(name.wire[pos] <= dns::max_label);
    pos += 1 + name.wire[pos];
    PROPERTY(pos < name.size);
  }
  PROPERTY(pos + 1 == name.size);
}

bool all_host_bytes(const dns::Name& name) {
  for (size_t pos = 0; name.wire[pos] != 0; pos += 1 + name.wire[pos]) {
    for (size_t i = 1; i <= name.wire[pos]; ++i) {
      uint8_t c = name.wire[pos + i];
      bool host = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
      if (!host) return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  ExactInput input(data + 2, size - 2);
  dns::Span msg = input.span();
  size_t offset = (static_cast<size_t>(data[0]) << 8 | data[1]) % (msg.size + 1);

  dns::Name name;
  size_t next = 0;
  dns::Fault fault = dns::read_name(msg, offset, name, next);
  Reference ref;
  ref.fault = reference_read(msg, offset, offset, 0, ref, true);
  PROPERTY(fault == ref.fault);
  if (fault != dns::Fault::none) return 0;

  PROPERTY(std::string(reinterpret_cast<const char*>(name.wire), name.size) == ref.wire);
  PROPERTY(next == ref.next);
  PROPERTY(next > offset && next <= msg.size);
  check_well_formed(name);
  if (name.size > 1 && all_host_bytes(name)) {
    dns::Name again;
    PROPERTY(dns::name_from_text(dns::name_to_text(name), again));
    PROPERTY(again.size == name.size && std::string(reinterpret_cast<const char*>(again.wire), again.size) == ref.wire);
  }
  return 0;
}
