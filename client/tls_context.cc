#include "tls_context.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "client_identity.h"
#include "ocsp_staple.h"
#include "pem_load.h"
#include "pins.h"

namespace tlsnb {

namespace {

SSL* ssl_of(X509_STORE_CTX* store) {
  return static_cast<SSL*>(X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
}

int verify_callback(int ok, X509_STORE_CTX* store) {
  if (ok) return ok;
  if (SSL* ssl = ssl_of(store))
    record_verify_error(ssl, X509_STORE_CTX_get_error(store), X509_STORE_CTX_get_error_depth(store));
  return ok;
}

struct CrlsFree {
  void operator()(STACK_OF(X509_CRL) * crls) const { sk_X509_CRL_pop_free(crls, X509_CRL_free); }
};

// What the context's callbacks need beyond the RunConfig, owned by the SSL_CTX (freed with it).
struct ContextPolicy {
  std::vector<std::string> pins;
  StaplePolicy staple = StaplePolicy::off;
  std::unique_ptr<STACK_OF(X509_CRL), CrlsFree> crls;  // every CRL of --crl, null without one
};

void free_policy(void*, void* ptr, CRYPTO_EX_DATA*, int, long, void*) { delete static_cast<ContextPolicy*>(ptr); }

int policy_index() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, free_policy);
  return index;
}

const ContextPolicy& policy_of(SSL* ssl) {
  return *static_cast<ContextPolicy*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), policy_index()));
}

// The chain first (X509_verify_cert, our verify_callback inside), given every CRL of --crl (a
// store finds CRLs by the certificate's issuer name only, so an indirect CRL, whose issuer is
// another CA, is seen only this way: pkits 4.14.24), then the pins against every certificate of
// the verified chain: a chain that fails is never rescued by a pin.
int verify_chain(X509_STORE_CTX* store, void*) {
  SSL* ssl = ssl_of(store);
  if (ssl != nullptr && policy_of(ssl).crls) X509_STORE_CTX_set0_crls(store, policy_of(ssl).crls.get());
  int ok = X509_verify_cert(store);
  if (ok != 1 || ssl == nullptr || policy_of(ssl).pins.empty()) return ok;
  if (chain_matches_pin(X509_STORE_CTX_get0_chain(store), policy_of(ssl).pins)) return 1;
  X509_STORE_CTX_set_error(store, X509_V_ERR_APPLICATION_VERIFICATION);
  record_verify_error(ssl, X509_V_ERR_APPLICATION_VERIFICATION, 0);
  return 0;
}

int on_status(SSL* ssl, void*) { return judge_staple(ssl, policy_of(ssl).staple); }

int cache_index() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

int on_new_session(SSL* ssl, SSL_SESSION* session) {
  auto* cache = static_cast<SessionCache*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), cache_index()));
  auto* key = static_cast<std::string*>(SSL_get_ex_data(ssl, session_key_index()));
  if (cache == nullptr || key == nullptr) return 0;
  cache->store(*key, session);
  return 1;  // we keep the reference
}

// The CRLs of a PEM file holding at least one, added to INTO (pem_load.h: the allocation sweep
// with --crl found an out-of-memory inside the load told as a bad file, exit 2). Blocks of other
// kinds are passed over, as X509_load_crl_file does.
FileCheck load_crls(STACK_OF(X509_CRL) * into, const std::string& path, std::string* why) {
  FileCheck check = check_pem_file(path, {"-----BEGIN X509 CRL-----"}, "PEM CRL", why);
  if (check != FileCheck::usable) return check;
  ERR_clear_error();
  BioPtr file(BIO_new_file(path.c_str(), "r"));
  STACK_OF(X509_INFO)* blocks = file ? PEM_X509_INFO_read_bio(file.get(), nullptr, nullptr, nullptr) : nullptr;
  if (blocks == nullptr) return *why = refused_load(check = load_failure(), path, "CRL"), check;
  // check_pem_file saw a BEGIN line of a CRL, and a block that does not decode fails the read above:
  // the file holds at least one CRL here.
  for (int i = 0; i < sk_X509_INFO_num(blocks) && check == FileCheck::usable; ++i) {
    X509_INFO* block = sk_X509_INFO_value(blocks, i);
    if (block->crl == nullptr) continue;
    if (sk_X509_CRL_push(into, block->crl) <= 0) check = FileCheck::no_memory;
    else block->crl = nullptr;  // the stack owns it now
  }
  sk_X509_INFO_pop_free(blocks, X509_INFO_free);
  if (check != FileCheck::usable) *why = refused_load(check, path, "CRL");
  return check;
}

ContextResult fail(std::string why, bool config_error) {
  ContextResult result;
  if (drain_error_queue().memory) config_error = false;
  result.error = std::move(why);
  result.config_error = config_error;
  return result;
}

// The chain's checks beyond trust: CRLs (gaps/revoked_accepted_by_default: without them a revoked
// leaf passes), certificate policies, the staple's judge, the pins: each only when asked, each
// owned by the context.
FileCheck set_chain_checks(SSL_CTX* ctx, const RunConfig& o, ContextPolicy* policy, std::string* why) {
  X509_VERIFY_PARAM* param = SSL_CTX_get0_param(ctx);
  if (!o.crls.empty()) {
    policy->crls.reset(sk_X509_CRL_new_null());
    if (!policy->crls) return *why = "--crl: the CRLs could not be held", FileCheck::no_memory;
  }
  for (const std::string& path : o.crls) {
    FileCheck check = load_crls(policy->crls.get(), path, why);
    if (check != FileCheck::usable) return *why = "--crl: " + *why, check;
  }
  // RFC 5280's CRLs whole: without EXTENDED_CRL_SUPPORT OpenSSL takes a delta CRL for a complete one
  // (a leaf revoked on its base CRL passed beside a newer delta: pkits 4.15.3) and refuses every CRL
  // signed by another key than the issuer's, indirect or partitioned by reasons (pkits 4.4.19, 4.5.4).
  if (!o.crls.empty() || o.crl_all)
    X509_VERIFY_PARAM_set_flags(param, X509_V_FLAG_CRL_CHECK | (o.crl_all ? X509_V_FLAG_CRL_CHECK_ALL : 0) |
                                           X509_V_FLAG_EXTENDED_CRL_SUPPORT | X509_V_FLAG_USE_DELTAS);
  if (o.checks_policies()) {
    X509_VERIFY_PARAM_set_flags(param, X509_V_FLAG_POLICY_CHECK | (o.explicit_policy ? X509_V_FLAG_EXPLICIT_POLICY : 0) |
                                           (o.inhibit_policy_mapping ? X509_V_FLAG_INHIBIT_MAP : 0) |
                                           (o.inhibit_any_policy ? X509_V_FLAG_INHIBIT_ANY : 0));
    // RFC 5280's initial-policy-set is {anyPolicy} unless given; OpenSSL's is empty, so that with
    // --explicit-policy alone every path failed NO_EXPLICIT_POLICY (pkits 4.8.1.1, 4.8.20).
    const std::vector<std::string> any_policy{"2.5.29.32.0"};
    for (const std::string& text : o.policies.empty() ? any_policy : o.policies) {
      ASN1_OBJECT* oid = OBJ_txt2obj(text.c_str(), 1);  // options.cc checked its form
      if (oid == nullptr || X509_VERIFY_PARAM_add0_policy(param, oid) != 1) {
        ASN1_OBJECT_free(oid);
        return *why = "--policy " + text + ": could not be set", FileCheck::no_memory;
      }
    }
  }
  if (o.staple != StaplePolicy::off) {
    SSL_CTX_set_tlsext_status_type(ctx, TLSEXT_STATUSTYPE_ocsp);
    SSL_CTX_set_tlsext_status_cb(ctx, on_status);
  }
  if (!o.pins.empty() || policy->crls) SSL_CTX_set_cert_verify_callback(ctx, verify_chain, nullptr);
  return FileCheck::usable;
}

}  // namespace

void record_verify_error(SSL* ssl, int error, int depth) {
  auto* record = static_cast<VerifyRecord*>(SSL_get_ex_data(ssl, verify_record_index()));
  if (record != nullptr && record->error == 0) {
    record->error = error;
    record->depth = depth;
  }
}

int verify_record_index() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

int session_key_index() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

std::string trust_fingerprint(const RunConfig& o) {
  std::string revocation = std::string(o.crl_all ? "crl-all" : "") + "|staple" + std::to_string(static_cast<int>(o.staple));
  for (const std::string& crl : o.crls) revocation += "|" + crl;
  for (const std::string& pin : o.pins) revocation += "|pin" + std::to_string(std::hash<std::string>{}(pin));
  for (const std::string& policy : o.policies) revocation += "|policy" + policy;
  revocation += std::string(o.explicit_policy ? "|explicit" : "") + (o.inhibit_policy_mapping ? "|no-map" : "") +
                (o.inhibit_any_policy ? "|no-any" : "");
  return std::string(o.verify ? "verify" : "noverify") + (o.verify_name ? "" : "-noname") + "|" + o.cafile + "|" + (o.system_trust ? "sys" : "") + "|" +
         (o.partial_chain ? "partial" : "") + "|" + std::to_string(o.verify_depth) + "|" + revocation + "|" +
         o.client_cert;
}

ContextResult make_context(const RunConfig& o, SessionCache* cache) {
  if (!o.cafile.empty()) {
    std::string why;
    FileCheck check = check_pem_file(o.cafile, {"-----BEGIN CERTIFICATE-----"}, "PEM certificate", &why);
    if (check != FileCheck::usable) return fail("--cafile: " + why, check == FileCheck::unusable);
  }
  ERR_clear_error();
  SslCtxPtr ctx(SSL_CTX_new(TLS_client_method()));
  if (!ctx) return fail("SSL_CTX_new failed", false);
  if (!SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION) ||
      (o.tls_max != 0 && !SSL_CTX_set_max_proto_version(ctx.get(), o.tls_max)))
    return fail("protocol bounds could not be set", false);
  // gaps/partial_write_modes: one record at a time, and the buffer may move between retries.
  // RELEASE_BUFFERS: an idle connection gives its record buffers back (memory for allocations);
  // bench/allocs.py builds the variant that keeps them (TLSNB_KEEP_BUFFERS) to show the trade.
  SSL_CTX_set_mode(ctx.get(), SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
#ifndef TLSNB_KEEP_BUFFERS
  SSL_CTX_set_mode(ctx.get(), SSL_MODE_RELEASE_BUFFERS);
#endif
  // A server's HelloRequest is refused (a no_renegotiation warning): a TLS 1.2 renegotiation
  // would swap the peer's identity mid-connection unverified by any row; OpenSSL accepts it by
  // default (tests/attempt_inprocess_test.cc ServerRenegotiationIsRefused: ok/0 without this line).
  SSL_CTX_set_options(ctx.get(), SSL_OP_NO_RENEGOTIATION);
  if (o.verify) {
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, verify_callback);
    bool use_system = o.system_trust || o.cafile.empty();
    // The file was checked above: a load that fails now holds a block that does not decode
    // (the user's) or failed for want of memory (the run's): pem_load.h's load_failure says.
    if (!o.cafile.empty() && SSL_CTX_load_verify_file(ctx.get(), o.cafile.c_str()) != 1) {
      FileCheck check = load_failure();
      return fail("--cafile: " + refused_load(check, o.cafile, "certificate"), check == FileCheck::unusable);
    }
    if (use_system && SSL_CTX_set_default_verify_paths(ctx.get()) != 1)
      return fail("the system trust store could not be loaded", true);
    X509_VERIFY_PARAM* param = SSL_CTX_get0_param(ctx.get());
    // gaps/partial_wildcard: the library matches f*.hooks.test against foo.hooks.test; we do not.
    // gaps/cn_fallback: the library still reads the CN when no DNS SAN is present; we never do
    // (RFC 6125 6.4.4, CA/B Baseline Requirements: the SAN is the name).
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS | X509_CHECK_FLAG_NEVER_CHECK_SUBJECT);
    if (o.partial_chain) X509_VERIFY_PARAM_set_flags(param, X509_V_FLAG_PARTIAL_CHAIN);
    if (o.verify_depth >= 0) X509_VERIFY_PARAM_set_depth(param, o.verify_depth);
    // The callbacks' policy, owned by the context once attached: an attachment that fails (its
    // allocation: leaks/alloc_sweep.py found the leak) frees it here and fails the setup.
    auto policy = std::make_unique<ContextPolicy>(ContextPolicy{o.pins, o.staple, nullptr});
    if (SSL_CTX_set_ex_data(ctx.get(), policy_index(), policy.get()) != 1)
      return fail("the context's verification policy could not be attached", false);
    ContextPolicy* attached = policy.release();  // free_policy deletes it with the SSL_CTX
    std::string why;
    if (FileCheck check = set_chain_checks(ctx.get(), o, attached, &why); check != FileCheck::usable)
      return fail(why, check == FileCheck::unusable);
  } else {
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);
  }
  if (!o.client_cert.empty()) {
    IdentityResult identity = load_client_identity(ctx.get(), o.client_cert, o.client_key);
    if (!identity.error.empty()) return fail(identity.error, identity.config_error);
  }
  if (cache != nullptr) {
    SSL_CTX_set_ex_data(ctx.get(), cache_index(), cache);
    SSL_CTX_set_session_cache_mode(ctx.get(), SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(ctx.get(), on_new_session);
  }
  ContextResult result;
  result.ctx = std::move(ctx);
  return result;
}

}  // namespace tlsnb
