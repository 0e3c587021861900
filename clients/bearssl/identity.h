// --cert/--key: the client's certificate chain and private key, decoded once (br_pem_decoder,
// br_x509_decoder, br_skey_decoder) and checked to belong together, then handed to each attempt's
// engine (br_ssl_client_set_single_rsa / _ec), which sends them when the server asks.
#pragma once

#include <bearssl.h>

#include <string>
#include <vector>

namespace tlsbear {

class Identity {
 public:
  // "" or the one line (the user's to fix: exit 2).
  std::string load(const std::string& cert_path, const std::string& key_path);
  bool present() const { return !chain_.empty(); }
  void apply(br_ssl_client_context* cc) const;

 private:
  std::string key_matches(const std::string& cert_path, const std::string& key_path);

  std::vector<std::string> ders_;          // the chain's certificates (stable once loaded)
  std::vector<br_x509_certificate> chain_;  // pointing into ders_
  br_skey_decoder_context key_;             // holds the decoded key's bytes
};

}  // namespace tlsbear
