// What every attempt of a run shares on the BearSSL side: the trust anchors, decoded once from
// --cafile (and Debian's bundle without it or with --system-trust) by br_pem_decoder +
// br_x509_decoder, as BearSSL's tools/ do (BearSSL has no system store and no PEM file loader).
// Made once, before the loop; each attempt's br_x509_minimal_context points at it.
#pragma once

#include <bearssl.h>

#include <deque>
#include <string>
#include <vector>

#include "clients/contract/made.h"
#include "identity.h"
#include "options.h"

namespace tlsbear {

class TlsConfig {
 public:
  const br_x509_trust_anchor* anchors() const { return anchors_.data(); }
  size_t anchor_count() const { return anchors_.size(); }
  const std::vector<std::string>& anchor_pins() const { return anchor_pins_; }  // by anchor, for --pin-sha256
  const Identity& identity() const { return identity_; }
  Identity& identity() { return identity_; }

  // Each CERTIFICATE block of a PEM file as a trust anchor: "" or what is wrong (one line).
  // `skip_undecodable`: a certificate BearSSL cannot decode is left out (the system bundle's).
  std::string add_pem_file(const std::string& path, bool skip_undecodable);

 private:
  std::string add_certificate(const std::string& der);
  unsigned char* keep(const void* data, size_t len);

  std::vector<br_x509_trust_anchor> anchors_;
  std::vector<std::string> anchor_pins_;
  std::deque<std::string> storage_;  // the anchors' DNs and keys (stable addresses)
  Identity identity_;                // --cert/--key
};

using ConfigResult = contract::Made<TlsConfig>;  // the config, or the one line and whose it is to fix

ConfigResult make_config(const Options& o);

// "BearSSL 0.6": BearSSL has no version call; Debian's libbearssl-dev 0.6.
std::string library_version();

// Every block of PEM text, its name ("CERTIFICATE", "EC PRIVATE KEY", ...) and its DER, in order;
// false when the PEM itself is broken (a block without its end).
struct PemBlock {
  std::string name;
  std::string der;
};
bool pem_blocks(const std::string& pem, std::vector<PemBlock>* blocks);

// A whole file into *text; false when it cannot be read.
bool read_file(const std::string& path, std::string* text);

}  // namespace tlsbear
