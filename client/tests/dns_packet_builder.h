// DNS messages for the tests, built field by field (after c-ares' test/dns-proto.h).
// Bytes writes raw octets (for damaged messages and hand-placed pointers); Packet writes
// a whole response with uncompressed names. Names are dotted text whose labels are taken
// byte for byte ("a\0b.example" has a NUL inside its first label); "" and "." are the root.
#pragma once

#include <arpa/inet.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dns_message.h"

namespace dns_test {

class Bytes {
 public:
  Bytes& u8(uint8_t value) {
    octets.push_back(value);
    return *this;
  }
  Bytes& u16(uint16_t value) { return u8(static_cast<uint8_t>(value >> 8)).u8(static_cast<uint8_t>(value)); }
  Bytes& u32(uint32_t value) { return u16(static_cast<uint16_t>(value >> 16)).u16(static_cast<uint16_t>(value)); }
  // One label: its length octet, then its bytes.
  Bytes& label(std::string_view text) {
    u8(static_cast<uint8_t>(text.size()));
    octets.insert(octets.end(), text.begin(), text.end());
    return *this;
  }
  // Labels of a dotted name, without the root label (so a pointer can end it).
  Bytes& labels(std::string_view dotted) {
    while (!dotted.empty() && dotted != ".") {
      size_t dot = dotted.find('.');
      label(dotted.substr(0, dot));
      if (dot == std::string_view::npos) break;
      dotted.remove_prefix(dot + 1);
    }
    return *this;
  }
  Bytes& name(std::string_view dotted) { return labels(dotted).u8(0); }
  Bytes& pointer(uint16_t offset) { return u16(static_cast<uint16_t>(0xC000 | offset)); }
  // A header: id, flags, then QDCOUNT, ANCOUNT, NSCOUNT, ARCOUNT.
  Bytes& header(uint16_t id, uint16_t flags, uint16_t qd, uint16_t an, uint16_t ns = 0, uint16_t ar = 0) {
    return u16(id).u16(flags).u16(qd).u16(an).u16(ns).u16(ar);
  }
  Bytes& question(std::string_view dotted, uint16_t type = dns::type_a) {
    return name(dotted).u16(type).u16(dns::class_in);
  }
  // TYPE, CLASS, TTL and RDLENGTH of a record whose owner name was just written.
  Bytes& fixed(uint16_t type, uint16_t rclass, uint32_t ttl, uint16_t rdlength) {
    return u16(type).u16(rclass).u32(ttl).u16(rdlength);
  }
  Bytes& addr(const char* dotted_quad) {
    in_addr a{};
    inet_pton(AF_INET, dotted_quad, &a);
    const auto* p = reinterpret_cast<const uint8_t*>(&a.s_addr);
    octets.insert(octets.end(), p, p + 4);
    return *this;
  }
  size_t size() const { return octets.size(); }

  std::vector<uint8_t> octets;
};

constexpr uint16_t kId = 0x1234;
constexpr uint16_t kResponse = 0x8180;  // QR, RD, RA, NOERROR

class Packet {
 public:
  Packet& id(uint16_t value) {
    id_ = value;
    return *this;
  }
  Packet& flags(uint16_t value) {
    flags_ = value;
    return *this;
  }
  Packet& rcode(int value) {
    flags_ = static_cast<uint16_t>((flags_ & ~0x000F) | value);
    return *this;
  }
  Packet& tc() {
    flags_ |= 0x0200;
    return *this;
  }
  Packet& question(std::string_view name, uint16_t type = dns::type_a) {
    questions_.question(name, type);
    ++qdcount_;
    return *this;
  }
  Packet& answer(std::string_view owner, uint16_t type, uint16_t rclass, uint32_t ttl, const Bytes& rdata) {
    answers_.name(owner).fixed(type, rclass, ttl, static_cast<uint16_t>(rdata.size()));
    answers_.octets.insert(answers_.octets.end(), rdata.octets.begin(), rdata.octets.end());
    ++ancount_;
    return *this;
  }
  Packet& a(std::string_view owner, const char* dotted_quad, uint32_t ttl = 300) {
    return answer(owner, dns::type_a, dns::class_in, ttl, Bytes().addr(dotted_quad));
  }
  Packet& cname(std::string_view owner, std::string_view target, uint32_t ttl = 300) {
    return answer(owner, dns::type_cname, dns::class_in, ttl, Bytes().name(target));
  }
  Packet& ancount(uint16_t value) {
    ancount_ = value;
    return *this;
  }
  std::vector<uint8_t> bytes() const {
    Bytes out;
    out.header(id_, flags_, qdcount_, ancount_);
    out.octets.insert(out.octets.end(), questions_.octets.begin(), questions_.octets.end());
    out.octets.insert(out.octets.end(), answers_.octets.begin(), answers_.octets.end());
    return out.octets;
  }

 private:
  uint16_t id_ = kId;
  uint16_t flags_ = kResponse;
  uint16_t qdcount_ = 0;
  uint16_t ancount_ = 0;
  Bytes questions_;
  Bytes answers_;
};

// A copy on the heap exactly as long as the message: ASan stops a read one octet past it.
class ExactCopy {
 public:
  explicit ExactCopy(const std::vector<uint8_t>& octets)
      : data_(new uint8_t[octets.size() ? octets.size() : 1]), size_(octets.size()) {
    std::copy(octets.begin(), octets.end(), data_.get());
  }
  dns::Span span() const { return {data_.get(), size_}; }

 private:
  std::unique_ptr<uint8_t[]> data_;
  size_t size_;
};

inline dns::Query ask(std::string_view name = "www.example.com", uint16_t id = kId) {
  return dns::build_query(id, name);
}

// The canonical line of the answer to `asked`.
inline std::string parse(const std::vector<uint8_t>& msg, const dns::Query& asked = ask()) {
  ExactCopy copy(msg);
  return dns::describe(dns::parse_response(copy.span(), asked));
}

}  // namespace dns_test
