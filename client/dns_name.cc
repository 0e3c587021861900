#include "dns_name.h"

#include <algorithm>
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

namespace {

enum class Refusal { none, empty, empty_label, long_label, long_name, byte };

// The first rule of name_from_text a text breaks, and where: the offset of the label, or of the byte, at fault.
struct TextCheck {
  Refusal refusal;
  size_t at;
};

// name_from_text's rules, in one place: the first one `text` breaks, or Refusal::none with `out` written.
TextCheck encode_text(std::string_view text, Name& out) {
  size_t at = 0;
  if (!text.empty() && text.back() == '.') text.remove_suffix(1);
  if (text.empty()) return {Refusal::empty, at};
  out.size = 0;
  for (;;) {
    size_t dot = text.find('.');
    std::string_view label = text.substr(0, dot);
    if (label.empty()) return {Refusal::empty_label, at};
    if (label.size() > max_label) return {Refusal::long_label, at};
    if (out.size + 1 + label.size() + 1 > max_name) return {Refusal::long_name, at};  // + the root label
    for (size_t i = 0; i < label.size(); ++i) {
      if (!is_host_byte(label[i])) return {Refusal::byte, at + i};
    }
    out.wire[out.size++] = static_cast<uint8_t>(label.size());
    std::memcpy(out.wire + out.size, label.data(), label.size());
    out.size += label.size();
    if (dot == std::string_view::npos) break;
    text.remove_prefix(dot + 1);
    at += dot + 1;
  }
  out.wire[out.size++] = 0;
  return {Refusal::none, at};
}

}  // namespace

bool name_from_text(std::string_view text, Name& out) { return encode_text(text, out).refusal == Refusal::none; }

std::string name_text_problem(std::string_view text) {
  Name scratch;
  const TextCheck check = encode_text(text, scratch);
  const std::string offset = " at offset " + std::to_string(check.at);
  const std::string host_bytes = offset + " (a host name holds letters, digits, '-' and '_')";
  switch (check.refusal) {
    case Refusal::none:
      return "";
    case Refusal::empty:
      return "no label (an empty name, or one dot: the root)";
    case Refusal::empty_label:
      return "an empty label" + offset + " (two dots in a row, or a leading dot)";
    case Refusal::long_label: {
      const size_t end = std::min(text.find('.', check.at), text.size());
      return "a label of " + std::to_string(end - check.at) + " characters" + offset + " (at most " +
             std::to_string(max_label) + ", RFC 1035 2.3.4)";
    }
    case Refusal::long_name: {  // counted without the trailing dot: the wire form less its first length and root
      const size_t length = text.size() - (text.back() == '.' ? 1 : 0);
      return std::to_string(length) + " characters (a DNS name holds at most " + std::to_string(max_name - 2) +
             ", RFC 1035 2.3.4)";
    }
    case Refusal::byte: {
      const auto c = static_cast<unsigned char>(text[check.at]);
      if (c >= 0x20 && c < 0x7f)
        return (c == ' ' ? std::string("a space") : "'" + std::string(1, text[check.at]) + "'") + host_bytes;
      const char hex[] = "0123456789abcdef";
      const std::string code = std::string("0x") + hex[c >> 4] + hex[c & 15];
      return (c < 0x80 ? "control character " : "non-ASCII byte ") + code + host_bytes;
    }
  }
  return "";
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
