#include "peer_chain.h"

#include <cstring>
#include <ctime>

namespace tlsgnu {

namespace {

bool is_ca(gnutls_x509_crt_t crt, int* pathlen) {
  unsigned int critical = 0, ca = 0;
  *pathlen = -1;
  return gnutls_x509_crt_get_basic_constraints(crt, &critical, &ca, pathlen) >= 0 && ca != 0;
}

bool self_issued(gnutls_x509_crt_t crt) { return gnutls_x509_crt_check_issuer(crt, crt) == 1; }

// Name constraints of a CA: 0 none, 47 with permitted subtrees, 48 with excluded subtrees only.
long name_constraints_kind(gnutls_x509_crt_t crt) {
  gnutls_x509_name_constraints_t nc = nullptr;
  if (gnutls_x509_name_constraints_init(&nc) < 0) return 0;
  long kind = 0;
  unsigned int critical = 0, type = 0;
  gnutls_datum_t name{nullptr, 0};
  if (gnutls_x509_crt_get_name_constraints(crt, nc, 0, &critical) >= 0) {
    if (gnutls_x509_name_constraints_get_permitted(nc, 0, &type, &name) >= 0) kind = 47;
    else if (gnutls_x509_name_constraints_get_excluded(nc, 0, &type, &name) >= 0) kind = 48;
  }
  gnutls_x509_name_constraints_deinit(nc);
  return kind;
}

}  // namespace

PeerChain::PeerChain(gnutls_session_t session, gnutls_certificate_credentials_t credentials) {
  unsigned int n = 0;
  const gnutls_datum_t* sent = gnutls_certificate_get_peers(session, &n);
  for (unsigned int i = 0; sent != nullptr && i < n; ++i) {
    gnutls_x509_crt_t crt = nullptr;
    if (gnutls_x509_crt_init(&crt) < 0) break;
    if (gnutls_x509_crt_import(crt, &sent[i], GNUTLS_X509_FMT_DER) < 0) {
      gnutls_x509_crt_deinit(crt);
      break;
    }
    certs_.push_back(crt);
  }
  if (certs_.size() != n || certs_.empty()) return;  // the path is only walked over all of them
  std::vector<bool> used(certs_.size(), false);
  path_.push_back(certs_[0]);
  used[0] = true;
  for (;;) {
    gnutls_x509_crt_t last = path_.back();
    if (self_issued(last)) {
      ends_self_issued_ = true;
      return;
    }
    bool found = false;
    for (size_t i = 0; i < certs_.size() && !found; ++i) {
      if (used[i] || gnutls_x509_crt_check_issuer(last, certs_[i]) != 1) continue;
      used[i] = true;
      path_.push_back(certs_[i]);
      found = true;
    }
    if (!found) break;
  }
  gnutls_x509_trust_list_t trust = nullptr;
  if (credentials != nullptr) gnutls_certificate_get_trust_list(credentials, &trust);
  if (trust != nullptr && gnutls_x509_trust_list_get_issuer(trust, path_.back(), &anchor_, GNUTLS_TL_GET_COPY) < 0)
    anchor_ = nullptr;
}

PeerChain::~PeerChain() {
  for (gnutls_x509_crt_t crt : certs_) gnutls_x509_crt_deinit(crt);
  if (anchor_ != nullptr) gnutls_x509_crt_deinit(anchor_);
}

std::vector<gnutls_x509_crt_t> PeerChain::full() const {
  std::vector<gnutls_x509_crt_t> all = path_;
  if (anchor_ != nullptr) all.push_back(anchor_);
  return all;
}

int PeerChain::time_error_depth(bool expired) const {
  std::vector<gnutls_x509_crt_t> all = full();
  time_t now = std::time(nullptr);
  for (int depth = static_cast<int>(all.size()) - 1; depth >= 0; --depth) {  // internal_verify: top down
    gnutls_x509_crt_t crt = all[static_cast<size_t>(depth)];
    if (expired ? gnutls_x509_crt_get_expiration_time(crt) < now : gnutls_x509_crt_get_activation_time(crt) > now)
      return depth;
  }
  return -1;
}

int PeerChain::first_weak(bool* key) const {
  std::vector<gnutls_x509_crt_t> all = full();
  for (size_t depth = 0; depth < all.size(); ++depth) {
    gnutls_x509_crt_t crt = all[depth];
    unsigned int bits = 0;
    int pk = gnutls_x509_crt_get_pk_algorithm(crt, &bits);
    if (pk > 0 && bits > 0 &&
        gnutls_pk_bits_to_sec_param(static_cast<gnutls_pk_algorithm_t>(pk), bits) < GNUTLS_SEC_PARAM_MEDIUM) {
      *key = true;
      return static_cast<int>(depth);
    }
    int sign = gnutls_x509_crt_get_signature_algorithm(crt);
    if (!self_issued(crt) && sign > 0 &&
        gnutls_sign_is_secure2(static_cast<gnutls_sign_algorithm_t>(sign), GNUTLS_SIGN_FLAG_SECURE_FOR_CERTS) == 0) {
      *key = false;
      return static_cast<int>(depth);
    }
  }
  return -1;
}

int PeerChain::not_ca_depth() const {
  std::vector<gnutls_x509_crt_t> all = full();
  int pathlen = -1;
  for (size_t depth = 1; depth < all.size(); ++depth)
    if (!is_ca(all[depth], &pathlen)) return static_cast<int>(depth);
  return -1;
}

int PeerChain::purpose_depth() const {
  for (size_t depth = 0; depth < path_.size(); ++depth) {
    bool any = false, server = false;
    for (unsigned int i = 0;; ++i) {
      char oid[128];
      size_t size = sizeof oid;
      unsigned int critical = 0;
      if (gnutls_x509_crt_get_key_purpose_oid(path_[depth], i, oid, &size, &critical) < 0) break;
      any = true;
      if (std::strcmp(oid, GNUTLS_KP_TLS_WWW_SERVER) == 0 || std::strcmp(oid, GNUTLS_KP_ANY) == 0) server = true;
    }
    if (any && !server) return static_cast<int>(depth);
  }
  return -1;
}

long PeerChain::constraint_problem(int* depth) const {
  std::vector<gnutls_x509_crt_t> all = full();
  for (size_t d = 1; d < all.size(); ++d) {  // check_extensions, leaf up: a CA that may not sign, a path too long
    unsigned int usage = 0, critical = 0;
    if (gnutls_x509_crt_get_key_usage(all[d], &usage, &critical) >= 0 && !(usage & GNUTLS_KEY_KEY_CERT_SIGN)) {
      *depth = static_cast<int>(d);
      return 79;
    }
    int pathlen = -1;
    if (is_ca(all[d], &pathlen) && pathlen >= 0 && static_cast<int>(d) - 1 > pathlen) {
      *depth = static_cast<int>(d);
      return 25;
    }
  }
  for (size_t d = 1; d < all.size(); ++d) {  // then check_name_constraints; the leaf is depth 0 there
    if (long kind = name_constraints_kind(all[d])) {
      *depth = 0;
      return kind;
    }
  }
  return 0;
}

}  // namespace tlsgnu
