#include "chain_check.h"

#include <cstring>
#include <ctime>
#include <new>

namespace tlsbear {

namespace {

bool pinned(const ChainCheck& c);

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
    if (err == 0 && c->out_of_memory) return BR_ERR_X509_LIMIT_EXCEEDED;
    return err == 0 && !pinned(*c) ? err_pin_mismatch : err;
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

// Fields of a DER certificate's tbsCertificate, as their encodings (RFC 5280 4.1: Certificate
// SEQUENCE { tbsCertificate SEQUENCE { [0] version OPTIONAL, serial, signature, issuer, validity,
// subject, subjectPublicKeyInfo, ... } }). BearSSL's decoder hands out the subject only.
struct TbsFields {
  std::string issuer, subject, spki;
};
bool tbs_fields(const std::string& der, TbsFields* f) {
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  unsigned tag = 0;
  const unsigned char* c = nullptr;
  size_t clen = 0, whole = 0;
  if (!der_element(p, der.size(), &tag, &c, &clen, &whole) || tag != 0x30) return false;
  if (!der_element(c, clen, &tag, &c, &clen, &whole) || tag != 0x30) return false;  // tbsCertificate
  const unsigned char* at = c;
  size_t left = clen;
  for (int field = 0; field < 7; ++field) {
    const unsigned char* content = nullptr;
    size_t content_len = 0;
    if (!der_element(at, left, &tag, &content, &content_len, &whole)) return false;
    if (field == 0 && tag != 0xa0) field = 1;  // no [0] version: v1
    std::string* into = field == 3 ? &f->issuer : field == 5 ? &f->subject : field == 6 ? &f->spki : nullptr;
    if (into != nullptr) into->assign(reinterpret_cast<const char*>(at), whole);
    at += whole;
    left -= whole;
  }
  return true;
}

std::string base64(const unsigned char* data, size_t len) {
  static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < len; i += 3) {
    uint32_t v = static_cast<uint32_t>(data[i]) << 16;
    if (i + 1 < len) v |= static_cast<uint32_t>(data[i + 1]) << 8;
    if (i + 2 < len) v |= data[i + 2];
    out += digits[v >> 18 & 63];
    out += digits[v >> 12 & 63];
    out += i + 1 < len ? digits[v >> 6 & 63] : '=';
    out += i + 2 < len ? digits[v & 63] : '=';
  }
  return out;
}

bool is_pinned(const ChainCheck& c, const std::string& pin) {
  for (const std::string& p : *c.pins)
    if (p == pin) return true;
  return false;
}

// RFC 7469 over what BearSSL verified: a certificate the peer sent, or an anchor whose subject is
// the issuer of one of them (BearSSL does not say which anchor ended the chain: one that issued
// any sent certificate is taken).
bool pinned(const ChainCheck& c) {
  if (c.pins == nullptr || c.pins->empty()) return true;
  for (const std::string& der : c.certs) {
    if (is_pinned(c, spki_pin(der))) return true;
    TbsFields f;
    if (!tbs_fields(der, &f)) continue;
    for (size_t i = 0; i < c.anchor_count && c.anchor_pins != nullptr && i < c.anchor_pins->size(); ++i) {
      const br_x509_trust_anchor& ta = c.anchors[i];
      if (ta.dn.len == f.issuer.size() && std::memcmp(ta.dn.data, f.issuer.data(), f.issuer.size()) == 0 &&
          is_pinned(c, (*c.anchor_pins)[i]))
        return true;
    }
  }
  return false;
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

std::string spki_pin(const std::string& der) {
  TbsFields f;
  if (!tbs_fields(der, &f)) return "";
  br_sha256_context sha;
  br_sha256_init(&sha);
  br_sha256_update(&sha, f.spki.data(), f.spki.size());
  unsigned char digest[br_sha256_SIZE];
  br_sha256_out(&sha, digest);
  return base64(digest, sizeof digest);
}

bool top_is_self_issued(const ChainCheck& check) {
  if (check.certs.empty()) return false;
  TbsFields f;
  return tbs_fields(check.certs.back(), &f) && f.issuer == f.subject;
}

const br_x509_trust_anchor* issuing_anchor(const ChainCheck& check) {
  for (const std::string& der : check.certs) {
    TbsFields f;
    if (!tbs_fields(der, &f)) continue;
    for (size_t i = 0; i < check.anchor_count; ++i) {
      const br_x509_trust_anchor& ta = check.anchors[i];
      if (ta.dn.len == f.issuer.size() && std::memcmp(ta.dn.data, f.issuer.data(), f.issuer.size()) == 0) return &ta;
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
