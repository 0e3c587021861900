// The X.509 engine an attempt hands BearSSL's SSL engine (br_ssl_engine_set_x509): a br_x509_class
// around br_x509_minimal that keeps the peer's chain as sent (for the outcome's detail: which
// certificate was out of its validity, whether the top one is self-issued) and carries two of the
// contract's switches, neither of which BearSSL has:
//   --no-verify-name  the minimal engine is started with no server name (start_chain(NULL)), so it
//                     matches none; the SNI still goes out (br_ssl_client_reset got the name);
//   --no-verify       the minimal engine is not run: the leaf's key (br_x509_decoder) is handed over.
#pragma once

#include <bearssl.h>

#include <string>
#include <vector>

namespace tlsbear {

struct ChainCheck {
  const br_x509_class* vtable;  // first: BearSSL calls through a pointer to it
  br_x509_minimal_context* minimal = nullptr;
  bool verify = true;
  bool match_name = true;
  const br_x509_trust_anchor* anchors = nullptr;  // the minimal engine's, for the outcome's detail
  size_t anchor_count = 0;
  const std::vector<std::string>* anchor_pins = nullptr;  // each anchor's SPKI SHA-256 (base64), by index
  const std::vector<std::string>* pins = nullptr;         // --pin-sha256 (none: no check)

  // What the peer sent, certificate by certificate (at most max_kept bytes in all).
  static constexpr size_t max_kept = 256 * 1024;
  std::vector<std::string> certs;
  size_t kept = 0;
  bool out_of_memory = false;  // a certificate could not be kept: the chain is refused

  // --no-verify: the leaf's key.
  br_x509_decoder_context leaf;
  const br_x509_pkey* leaf_key = nullptr;
};

// end_chain's code for a chain that verified but carries no pinned key: this adapter's own, in the
// X.509 range BearSSL leaves unused (BR_ERR_X509_NOT_TRUSTED is 62).
constexpr unsigned err_pin_mismatch = 63;

// The wrapper ready over `minimal` (initialised by br_ssl_client_init_full with these anchors).
void init_chain_check(ChainCheck* check, br_x509_minimal_context* minimal, const br_x509_trust_anchor* anchors,
                      size_t anchor_count, bool verify, bool match_name);

// RFC 7469's pin of a DER certificate: base64 of the SHA-256 of its SubjectPublicKeyInfo ("" when it
// does not parse).
std::string spki_pin(const std::string& der);

// About the chain as the peer sent it, for the details BearSSL's codes do not tell apart.
bool top_is_self_issued(const ChainCheck& check);                   // the last certificate's issuer is its subject
bool first_out_of_validity(const ChainCheck& check, bool* not_yet);  // from the leaf up: not yet valid, or expired
// The first certificate from the leaf up whose issuer is an anchor's subject: that anchor, or null.
// BearSSL met it and still found no trust: a CA anchor's key did not verify the signature, or the
// anchor is no CA (trusted only directly).
const br_x509_trust_anchor* issuing_anchor(const ChainCheck& check);

}  // namespace tlsbear
