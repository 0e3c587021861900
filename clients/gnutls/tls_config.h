// What every attempt of a run shares on the GnuTLS side: the library's global state, one
// certificate credential (the trust anchors), one priority cache, and the typed data the
// peer's certificate is verified against. Made once, before the loop; freed after it.
#pragma once

#include <gnutls/gnutls.h>

#include <memory>
#include <string>
#include <vector>

#include "clients/contract/made.h"
#include "options.h"

namespace tlsgnu {

// gnutls_global_init ("" when it worked, else the line) and gnutls_global_deinit: paired by
// contract::adapter_main (the library counts them).
std::string init_library();
void cleanup_library();

class TlsConfig {
 public:
  TlsConfig() = default;
  ~TlsConfig();
  TlsConfig(const TlsConfig&) = delete;
  TlsConfig& operator=(const TlsConfig&) = delete;

  gnutls_certificate_credentials_t credentials() const { return credentials_; }
  gnutls_priority_t priority() const { return priority_; }
  // The typed data for gnutls_session_set_verify_cert2: the name (DNS) or the address (raw
  // IPv4), and the TLS server purpose. GnuTLS keeps the pointer: it lives as long as this.
  gnutls_typed_vdata_st* verify_data() { return vdata_.data(); }
  unsigned verify_elements() const { return static_cast<unsigned>(vdata_.size()); }
  const std::string& priority_text() const { return priority_text_; }

 private:
  friend contract::Made<TlsConfig> make_config(const Options& o);
  gnutls_certificate_credentials_t credentials_ = nullptr;
  gnutls_priority_t priority_ = nullptr;
  std::string name_;                     // NUL-terminated, for GNUTLS_DT_DNS_HOSTNAME
  unsigned char ip_[4] = {0, 0, 0, 0};   // for GNUTLS_DT_IP_ADDRESS
  std::string purpose_;                  // GNUTLS_KP_TLS_WWW_SERVER
  std::vector<gnutls_typed_vdata_st> vdata_;
  std::string priority_text_;
};

using ConfigResult = contract::Made<TlsConfig>;  // the config, or the one line and whose it is to fix

ConfigResult make_config(const Options& o);

// "GnuTLS 3.7.9"
std::string library_version();

}  // namespace tlsgnu
