#include "chain_check.h"

#include <cstring>
#include <ctime>
#include <new>

namespace tlsbear {

namespace {

ChainCheck* self(const br_x509_class** ctx) { return reinterpret_cast<ChainCheck*>(ctx); }
const ChainCheck* self(const br_x509_class* const* ctx) { return reinterpret_cast<const ChainCheck*>(ctx); }
const br_x509_class** inner(ChainCheck* c) { return &c->minimal->vtable; }

void start_chain(const br_x509_class** ctx, const char* server_name) {
  ChainCheck* c = self(ctx);
  c->certs.clear();
  c->kept = 0;
  c->out_of_memory = false;
  c->leaf_key = nullptr;
  if (c->verify) c->minimal->vtable->start_chain(inner(c), c->match_name ? server_name : nullptr);
}

void start_cert(const br_x509_class** ctx, uint32_t length) {
  ChainCheck* c = self(ctx);
  try {  // no exception may cross BearSSL's C frames
    c->certs.emplace_back();
    if (c->kept + length <= ChainCheck::max_kept) c->certs.back().reserve(length);
  } catch (const std::bad_alloc&) {
    c->out_of_memory = true;
  }
  if (c->verify) c->minimal->vtable->start_cert(inner(c), length);
}

void append(const br_x509_class** ctx, const unsigned char* buf, size_t len) {
  ChainCheck* c = self(ctx);
  if (!c->out_of_memory && !c->certs.empty() && c->kept + len <= ChainCheck::max_kept) {
    try {
      c->certs.back().append(reinterpret_cast<const char*>(buf), len);
      c->kept += len;
    } catch (const std::bad_alloc&) {
      c->out_of_memory = true;
    }
  }
  if (c->verify) c->minimal->vtable->append(inner(c), buf, len);
}

void end_cert(const br_x509_class** ctx) {
  ChainCheck* c = self(ctx);
  if (c->verify) c->minimal->vtable->end_cert(inner(c));
}

unsigned end_chain(const br_x509_class** ctx) {
  ChainCheck* c = self(ctx);
  if (c->verify) {
    unsigned err = c->minimal->vtable->end_chain(inner(c));
    return err == 0 && c->out_of_memory ? BR_ERR_X509_LIMIT_EXCEEDED : err;
  }
  if (c->certs.empty()) return BR_ERR_X509_EMPTY_CHAIN;
  br_x509_decoder_init(&c->leaf, nullptr, nullptr);
  br_x509_decoder_push(&c->leaf, c->certs[0].data(), c->certs[0].size());
  c->leaf_key = br_x509_decoder_get_pkey(&c->leaf);
  if (c->leaf_key == nullptr) return static_cast<unsigned>(br_x509_decoder_last_error(&c->leaf));
  return 0;
}

const br_x509_pkey* get_pkey(const br_x509_class* const* ctx, unsigned* usages) {
  const ChainCheck* c = self(ctx);
  if (c->verify) return c->minimal->vtable->get_pkey(&c->minimal->vtable, usages);
  if (usages != nullptr) *usages = BR_KEYTYPE_KEYX | BR_KEYTYPE_SIGN;
  return c->leaf_key;
}

const br_x509_class chain_check_class = {sizeof(ChainCheck), start_chain, start_cert, append, end_cert, end_chain, get_pkey};

// A DER element's header at p (len bytes left): its tag, the content's start and length. False when
// it does not fit.
bool der_element(const unsigned char* p, size_t len, unsigned* tag, const unsigned char** content, size_t* content_len,
                 size_t* whole) {
  if (len < 2) return false;
  *tag = p[0];
  size_t n = p[1], head = 2;
  if (n & 0x80) {
    size_t bytes = n & 0x7f;
    if (bytes == 0 || bytes > 4 || len < 2 + bytes) return false;
    n = 0;
    for (size_t i = 0; i < bytes; ++i) n = n << 8 | p[2 + i];
    head += bytes;
  }
  if (n > len - head) return false;
  *content = p + head;
  *content_len = n;
  *whole = head + n;
  return true;
}

// The issuer and subject Names of a DER certificate, as their encodings (RFC 5280 4.1: Certificate
// SEQUENCE { tbsCertificate SEQUENCE { [0] version OPTIONAL, serial, signature, issuer, validity,
// subject, ... } }). BearSSL's decoder hands out the subject only.
bool issuer_and_subject(const std::string& der, std::string* issuer, std::string* subject) {
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  unsigned tag = 0;
  const unsigned char* c = nullptr;
  size_t clen = 0, whole = 0;
  if (!der_element(p, der.size(), &tag, &c, &clen, &whole) || tag != 0x30) return false;
  if (!der_element(c, clen, &tag, &c, &clen, &whole) || tag != 0x30) return false;  // tbsCertificate
  const unsigned char* at = c;
  size_t left = clen;
  for (int field = 0; field < 6; ++field) {
    const unsigned char* content = nullptr;
    size_t content_len = 0;
    if (!der_element(at, left, &tag, &content, &content_len, &whole)) return false;
    if (field == 0 && tag != 0xa0) field = 1;  // no [0] version: v1
    if (field == 3) issuer->assign(reinterpret_cast<const char*>(at), whole);
    if (field == 5) subject->assign(reinterpret_cast<const char*>(at), whole);
    at += whole;
    left -= whole;
  }
  return true;
}

}  // namespace

void init_chain_check(ChainCheck* check, br_x509_minimal_context* minimal, const br_x509_trust_anchor* anchors,
                      size_t anchor_count, bool verify, bool match_name) {
  check->vtable = &chain_check_class;
  check->minimal = minimal;
  check->anchors = anchors;
  check->anchor_count = anchor_count;
  check->verify = verify;
  check->match_name = match_name;
}

bool top_is_self_issued(const ChainCheck& check) {
  if (check.certs.empty()) return false;
  std::string issuer, subject;
  return issuer_and_subject(check.certs.back(), &issuer, &subject) && issuer == subject;
}

const br_x509_trust_anchor* issuing_anchor(const ChainCheck& check) {
  for (const std::string& der : check.certs) {
    std::string issuer, subject;
    if (!issuer_and_subject(der, &issuer, &subject)) continue;
    for (size_t i = 0; i < check.anchor_count; ++i) {
      const br_x509_trust_anchor& ta = check.anchors[i];
      if (ta.dn.len == issuer.size() && std::memcmp(ta.dn.data, issuer.data(), issuer.size()) == 0) return &ta;
    }
  }
  return nullptr;
}

bool first_out_of_validity(const ChainCheck& check, bool* not_yet) {
  // BearSSL's time: days since 1 January of year 0 (proleptic Gregorian), seconds in the day.
  std::time_t now = std::time(nullptr);
  uint64_t days = static_cast<uint64_t>(now) / 86400 + 719528;
  uint64_t secs = static_cast<uint64_t>(now) % 86400;
  for (const std::string& der : check.certs) {
    br_x509_decoder_context dc;
    br_x509_decoder_init(&dc, nullptr, nullptr);
    br_x509_decoder_push(&dc, der.data(), der.size());
    if (br_x509_decoder_get_pkey(&dc) == nullptr) continue;
    auto before = [&](uint32_t d, uint32_t s) { return days < d || (days == d && secs < s); };
    auto after = [&](uint32_t d, uint32_t s) { return days > d || (days == d && secs > s); };
    if (before(dc.notbefore_days, dc.notbefore_seconds)) return *not_yet = true, true;
    if (after(dc.notafter_days, dc.notafter_seconds)) return *not_yet = false, true;
  }
  return false;
}

}  // namespace tlsbear
