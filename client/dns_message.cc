#include "dns_message.h"

#include <arpa/inet.h>

#include <cstring>

namespace dns {

namespace {

constexpr uint16_t kFlagQr = 0x8000;
constexpr uint16_t kFlagTc = 0x0200;
constexpr uint16_t kFlagRd = 0x0100;
constexpr size_t kQuestionTail = 4;       // QTYPE, QCLASS
constexpr size_t kRecordFixed = 10;       // TYPE, CLASS, TTL, RDLENGTH
constexpr uint32_t kTtlMax = 0x7fffffff;  // RFC 2181 8: a TTL with the top bit set means 0

// The caller has checked that the octets are inside the message.
uint16_t u16_at(Span msg, size_t at) { return static_cast<uint16_t>(msg.data[at] << 8 | msg.data[at + 1]); }

uint32_t u32_at(Span msg, size_t at) { return static_cast<uint32_t>(u16_at(msg, at)) << 16 | u16_at(msg, at + 2); }

void put_u16(std::vector<uint8_t>& out, uint16_t value) {
  out.push_back(static_cast<uint8_t>(value >> 8));
  out.push_back(static_cast<uint8_t>(value));
}

int rcode_code(uint8_t rcode) {
  switch (rcode) {
    case 0:
      return ok;
    case 1:
      return formerr;
    case 2:
      return servfail;
    case 3:
      return nxdomain;
    case 4:
      return notimp;
    case 5:
      return refused;
    default:
      return rcode_other;
  }
}

struct Record {
  Name owner;
  uint16_t type = 0;
  uint16_t rclass = 0;
  uint32_t ttl = 0;
  size_t rdata = 0;  // offset of the RDATA
  size_t rdlength = 0;
};

// Reads the record at `pos` and moves `pos` past it.
Fault read_record(Span msg, size_t& pos, Record& rr) {
  Fault fault = read_name(msg, pos, rr.owner, pos);
  if (fault != Fault::none) return fault;
  if (msg.size - pos < kRecordFixed) return Fault::record_past_end;
  rr.type = u16_at(msg, pos);
  rr.rclass = u16_at(msg, pos + 2);
  rr.ttl = u32_at(msg, pos + 4);
  if (rr.ttl > kTtlMax) rr.ttl = 0;
  rr.rdlength = u16_at(msg, pos + 8);
  rr.rdata = pos + kRecordFixed;
  if (msg.size - rr.rdata < rr.rdlength) return Fault::rdata_past_end;
  pos = rr.rdata + rr.rdlength;
  return Fault::none;
}

// The question's name, then each CNAME target followed, in answer order.
class Chain {
 public:
  explicit Chain(const Name& question) : names_{question} {}

  const Name& current() const { return names_[count_ - 1]; }

  Fault follow(const Name& target) {
    for (int i = 0; i < count_; ++i) {
      if (same_name(names_[i], target)) return Fault::cname_loop;
    }
    if (count_ > max_cnames) return Fault::cname_chain_too_long;
    names_[count_++] = target;
    return Fault::none;
  }

 private:
  Name names_[max_cnames + 1];
  int count_ = 1;
};

// Walks the answer section, keeping what belongs to the chain.
class AnswerReader {
 public:
  AnswerReader(Span msg, const Query& asked, Answer& answer)
      : msg_(msg), chain_(asked.name), answer_(answer), qtype_(asked.qtype) {}

  void read(size_t pos, uint16_t count) {
    for (uint16_t i = 0; i < count; ++i) {
      Record rr;
      Fault fault = read_record(msg_, pos, rr);
      if (fault == Fault::none) fault = keep(rr);
      if (fault != Fault::none) {
        answer_.code = malformed;
        answer_.fault = fault;
        answer_.addrs.clear();
        answer_.addrs6.clear();
        return;
      }
    }
    answer_.code = answer_.addrs.empty() && answer_.addrs6.empty() ? no_address : ok;
    answer_.min_ttl = kept_any_ ? min_ttl_ : 0;
  }

 private:
  Fault keep(const Record& rr) {
    if (rr.rclass != class_in) return ignore();
    if (rr.type == type_a && qtype_ == type_a) return keep_a(rr);
    if (rr.type == type_aaaa && qtype_ == type_aaaa) return keep_aaaa(rr);
    if (rr.type == type_cname && same_name(rr.owner, chain_.current())) return keep_cname(rr);
    return ignore();
  }

  Fault keep_a(const Record& rr) {
    // An A record of the wrong size is a broken message, whoever it is for.
    if (rr.rdlength != 4) return Fault::a_rdlength;
    if (!same_name(rr.owner, chain_.current())) return ignore();
    in_addr addr;
    std::memcpy(&addr.s_addr, msg_.data + rr.rdata, 4);
    answer_.addrs.push_back(addr);
    note_ttl(rr.ttl);
    return Fault::none;
  }

  Fault keep_aaaa(const Record& rr) {
    if (rr.rdlength != 16) return Fault::aaaa_rdlength;
    if (!same_name(rr.owner, chain_.current())) return ignore();
    in6_addr addr;
    std::memcpy(addr.s6_addr, msg_.data + rr.rdata, 16);
    answer_.addrs6.push_back(addr);
    note_ttl(rr.ttl);
    return Fault::none;
  }

  Fault keep_cname(const Record& rr) {
    Name target;
    size_t end = 0;
    Fault fault = read_name(msg_, rr.rdata, target, end);
    if (fault != Fault::none) return fault;
    if (end != rr.rdata + rr.rdlength) return Fault::cname_rdata;
    fault = chain_.follow(target);
    if (fault != Fault::none) return fault;
    ++answer_.cnames;
    note_ttl(rr.ttl);
    return Fault::none;
  }

  Fault ignore() {
    ++answer_.ignored;
    return Fault::none;
  }

  void note_ttl(uint32_t ttl) {
    if (!kept_any_ || ttl < min_ttl_) min_ttl_ = ttl;
    kept_any_ = true;
  }

  Span msg_;
  Chain chain_;
  Answer& answer_;
  uint16_t qtype_;
  uint32_t min_ttl_ = 0;
  bool kept_any_ = false;
};

// The question section: one entry, the one we asked. Moves `pos` past it.
int check_question(Span msg, size_t& pos, const Query& asked, Fault& fault) {
  if (u16_at(msg, 4) != 1) return question_mismatch;
  Name name;
  fault = read_name(msg, pos, name, pos);
  if (fault != Fault::none) return malformed;
  if (msg.size - pos < kQuestionTail) {
    fault = Fault::question_past_end;
    return malformed;
  }
  uint16_t qtype = u16_at(msg, pos);
  uint16_t qclass = u16_at(msg, pos + 2);
  pos += kQuestionTail;
  if (!same_name(name, asked.name) || qtype != asked.qtype || qclass != class_in) return question_mismatch;
  return ok;
}

Answer with_code(Answer answer, int code, Fault fault = Fault::none) {
  answer.code = code;
  answer.fault = fault;
  return answer;
}

}  // namespace

Query build_query(uint16_t id, std::string_view name, uint16_t qtype) {
  Query query;
  if (!name_from_text(name, query.name)) return query;
  query.code = ok;
  query.id = id;
  query.qtype = qtype;
  std::vector<uint8_t>& out = query.message;
  put_u16(out, id);
  put_u16(out, kFlagRd);
  put_u16(out, 1);  // QDCOUNT
  put_u16(out, 0);  // ANCOUNT
  put_u16(out, 0);  // NSCOUNT
  put_u16(out, 0);  // ARCOUNT
  out.insert(out.end(), query.name.wire, query.name.wire + query.name.size);
  put_u16(out, qtype);
  put_u16(out, class_in);
  return query;
}

Answer parse_response(Span msg, const Query& asked) {
  Answer answer;
  if (asked.code != ok) return with_code(answer, bad_name);  // nothing was asked
  if (msg.size < header_size) return with_code(answer, malformed, Fault::header_short);
  uint16_t flags = u16_at(msg, 2);
  answer.rcode = static_cast<uint8_t>(flags & 0x0F);
  answer.tc = (flags & kFlagTc) != 0;
  if (u16_at(msg, 0) != asked.id) return with_code(answer, id_mismatch);
  if ((flags & kFlagQr) == 0) return with_code(answer, not_a_response);
  if (((flags >> 11) & 0x0F) != 0) return with_code(answer, opcode_mismatch);  // we send QUERY (0)
  size_t pos = header_size;
  Fault fault = Fault::none;
  int code = check_question(msg, pos, asked, fault);
  if (code != ok) return with_code(answer, code, fault);
  if (answer.tc) return with_code(answer, truncated);
  if (answer.rcode != 0) return with_code(answer, rcode_code(answer.rcode));
  AnswerReader(msg, asked, answer).read(pos, u16_at(msg, 6));
  return answer;
}

std::string describe(const Answer& answer) {
  std::string text = dns_error_name(answer.code);
  if (answer.code == malformed) return text + "(" + fault_name(answer.fault) + ")";
  if (answer.code == rcode_other) text += " rcode=" + std::to_string(answer.rcode);
  if (answer.code != ok && answer.code != no_address) return text;
  if (answer.code == ok) {
    text += " [";
    for (size_t i = 0; i < answer.addrs.size(); ++i) {
      char buf[INET_ADDRSTRLEN];
      if (i > 0) text += ' ';
      text += inet_ntop(AF_INET, &answer.addrs[i], buf, sizeof buf);
    }
    for (size_t i = 0; i < answer.addrs6.size(); ++i) {
      char buf[INET6_ADDRSTRLEN];
      if (i > 0 || !answer.addrs.empty()) text += ' ';
      text += inet_ntop(AF_INET6, &answer.addrs6[i], buf, sizeof buf);
    }
    text += "] ttl=" + std::to_string(answer.min_ttl);
  }
  if (answer.cnames > 0) text += " cnames=" + std::to_string(answer.cnames);
  if (answer.ignored > 0) text += " ignored=" + std::to_string(answer.ignored);
  return text;
}

}  // namespace dns
