// What every attempt of a run shares on the Mbed TLS side: the entropy source and the DRBG, one
// mbedtls_ssl_config (TLS 1.2 only, VERIFY_REQUIRED set explicitly), the trust anchors, the CRLs,
// the client's own certificate and key. Made once, before the loop; freed after it.
#pragma once

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crl.h>
#include <mbedtls/x509_crt.h>

#include <memory>
#include <string>

#include "clients/contract/made.h"
#include "options.h"

namespace tlsmbed {

class TlsConfig {
 public:
  TlsConfig();
  ~TlsConfig();
  TlsConfig(const TlsConfig&) = delete;
  TlsConfig& operator=(const TlsConfig&) = delete;

  const mbedtls_ssl_config* conf() const { return &conf_; }
  const mbedtls_x509_crt* anchors() const { return &cacert_; }

 private:
  friend struct ConfigMaker;
  mbedtls_entropy_context entropy_;
  mbedtls_ctr_drbg_context drbg_;
  mbedtls_ssl_config conf_;
  mbedtls_x509_crt cacert_;
  mbedtls_x509_crl crl_;
  mbedtls_x509_crt own_cert_;
  mbedtls_pk_context own_key_;
};

using ConfigResult = contract::Made<TlsConfig>;  // the config, or the one line and whose it is to fix

ConfigResult make_config(const Options& o);

// "Mbed TLS 2.28.3"
std::string library_version();
// mbedtls_strerror's words for a code.
std::string mbed_text(int code);

}  // namespace tlsmbed
