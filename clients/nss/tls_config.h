// What every attempt of a run shares on the NSS side: NSS_NoDB_Init / NSS_Shutdown paired (no
// database, so no system roots unless asked), the trust anchors (--cafile's certificates, temporary
// and trusted as SSL CAs; the builtin roots module for the system's), the CRLs in NSS's cache.
#pragma once

#include <cert.h>
#include <keyhi.h>
#include <nss.h>
#include <secitem.h>

#include <memory>
#include <string>
#include <vector>

#include "clients/contract/made.h"
#include "options.h"

namespace tlsnss {

// NSS_NoDB_Init ("" when it worked, else the line) and NSS_Shutdown: paired by
// contract::adapter_main.
std::string init_library();
void cleanup_library();

class TlsConfig {
 public:
  TlsConfig() = default;
  TlsConfig(const TlsConfig&) = delete;
  TlsConfig& operator=(const TlsConfig&) = delete;
  ~TlsConfig();  // the anchors destroyed and the CRLs uncached before NSS_Shutdown

  // --cert/--key: the certificate and key SSL_GetClientAuthDataHook hands NSS (nullptr: none given).
  CERTCertificate* client_cert() const { return client_cert_; }
  SECKEYPrivateKey* client_key() const { return client_key_; }

 private:
  friend contract::Made<TlsConfig> make_config(const Options& o);
  friend struct Maker;
  std::vector<CERTCertificate*> anchors_;
  std::vector<SECItem*> crls_;  // NSS's CRL cache keeps pointers into these until CERT_UncacheCRL
  std::vector<CERTCertificate*> client_chain_;  // --cert's certificates, temporary, the leaf first
  CERTCertificate* client_cert_ = nullptr;      // client_chain_'s first, not owned apart
  SECKEYPrivateKey* client_key_ = nullptr;
};

using ConfigResult = contract::Made<TlsConfig>;  // the config, or the one line and whose it is to fix

ConfigResult make_config(const Options& o);

// "NSS 3.87"
std::string library_version();
// NSPR's name and words for an error code: "SEC_ERROR_EXPIRED_CERTIFICATE: Peer's Certificate has expired."
std::string nss_text(long code);

}  // namespace tlsnss
