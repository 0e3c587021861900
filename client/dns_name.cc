#include "dns_name.h"

#include <cstring>

namespace dns {

namespace {

constexpr uint8_t kPointer = 0xC0;  // the two top bits of a length octet (RFC 1035 4.1.4)
constexpr uint8_t kKindMask = 0xC0;

bool is_host_byte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

// Wire length octets are at most 63, below every letter (65 and up): folding them is harmless.
uint8_t fold(uint8_t c) { return (c >= 'A' && c <= 'Z') ? static_cast<uint8_t>(c + ('a' - 'A')) : c; }

// Appends one label (its length octet and its bytes) read at msg[pos].
Fault append_label(Span msg, size_t pos, Name& out) {
  size_t label = msg.data[pos];
  if (pos + 1 + label > msg.size) return Fault::name_past_end;
  if (out.size + 1 + label > max_name) return Fault::name_too_long;
  std::memcpy(out.wire + out.size, msg.data + pos, 1 + label);
  out.size += 1 + label;
  return Fault::none;
}

}  // namespace

Fault read_name(Span msg, size_t offset, Name& out, size_t& next) {
  out.size = 0;
  size_t pos = offset;
  size_t tail_start = offset;  // where the name, or the tail a pointer led to, begins
  int jumps = 0;
  bool jumped = false;
  for (;;) {
    if (pos >= msg.size) return Fault::name_past_end;
    uint8_t octet = msg.data[pos];
    if ((octet & kKindMask) == kPointer) {
      if (pos + 1 >= msg.size) return Fault::name_past_end;
      size_t target = (static_cast<size_t>(octet & ~kKindMask) << 8) | msg.data[pos + 1];
      if (!jumped) next = pos + 2;
      jumped = true;
      if (target < header_size || target >= msg.size) return Fault::pointer_outside;
      if (target >= tail_start) return Fault::pointer_forward;
      if (++jumps > max_jumps) return Fault::too_many_jumps;
      pos = tail_start = target;
      continue;
    }
    if ((octet & kKindMask) != 0) return Fault::label_reserved;
    Fault fault = append_label(msg, pos, out);
    if (fault != Fault::none) return fault;
    pos += 1 + octet;
    if (octet == 0) {
      if (!jumped) next = pos;
      return Fault::none;
    }
  }
}

bool name_from_text(std::string_view text, Name& out) {
  if (!text.empty() && text.back() == '.') text.remove_suffix(1);
  if (text.empty()) return false;
  out.size = 0;
  for (;;) {
    size_t dot = text.find('.');
    std::string_view label = text.substr(0, dot);
    if (label.empty() || label.size() > max_label) return false;
    if (out.size + 1 + label.size() + 1 > max_name) return false;  // + the root label
    for (char c : label) {
      if (!is_host_byte(c)) return false;
    }
    out.wire[out.size++] = static_cast<uint8_t>(label.size());
    std::memcpy(out.wire + out.size, label.data(), label.size());
    out.size += label.size();
    if (dot == std::string_view::npos) break;
    text.remove_prefix(dot + 1);
  }
  out.wire[out.size++] = 0;
  return true;
}

bool same_name(const Name& a, const Name& b) {
  if (a.size != b.size) return false;
  if (std::memcmp(a.wire, b.wire, a.size) == 0) return true;  // the usual case, and the cheap one
  for (size_t i = 0; i < a.size; ++i) {
    if (fold(a.wire[i]) != fold(b.wire[i])) return false;
  }
  return true;
}

std::string name_to_text(const Name& name) {
  if (name.size <= 1) return ".";
  std::string text;
  size_t pos = 0;
  while (pos < name.size && name.wire[pos] != 0) {
    size_t label = name.wire[pos++];
    if (!text.empty()) text += '.';
    for (size_t i = 0; i < label && pos < name.size; ++i, ++pos) {
      uint8_t c = name.wire[pos];
      if (c == '.' || c == '\\') {
        text += '\\';
        text += static_cast<char>(c);
      } else if (c < 0x21 || c > 0x7e) {
        char escaped[5] = {'\\', static_cast<char>('0' + c / 100), static_cast<char>('0' + c / 10 % 10),
                           static_cast<char>('0' + c % 10), 0};
        text += escaped;
      } else {
        text += static_cast<char>(c);
      }
    }
  }
  return text;
}

}  // namespace dns
