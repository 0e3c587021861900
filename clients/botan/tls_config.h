// What every attempt of a run shares on the Botan side: the random generator, the TLS::Policy
// (TLS 1.2 only), the trust anchors and CRLs (a Certificate_Store_In_Memory of --cafile and
// --crl, Botan's System_Certificate_Store without --cafile or with --system-trust), the
// client's own chain and key, and the Credentials_Manager that hands them to Botan. Made once,
// before the loop.
#pragma once

#include <botan/auto_rng.h>
#include <botan/certstor.h>
#include <botan/credentials_manager.h>
#include <botan/pk_keys.h>
#include <botan/tls_policy.h>
#include <botan/x509cert.h>

#include <memory>
#include <string>
#include <vector>

#include "clients/contract/made.h"
#include "options.h"

namespace tlsbotan {

// Botan's default Policy, but for three of its defaults: TLS 1.2 alone (the default also allows 1.0
// and 1.1, which the contract's lowest, 1.2, excludes); revocation data required for the leaf only
// with --crl (Botan's default requires it always, and without a CRL or a stapled OCSP response for
// the leaf refuses every chain: NO_REVOCATION_DATA); no status_request. Everything else is Botan's.
class LabPolicy : public Botan::TLS::Policy {
 public:
  explicit LabPolicy(bool require_revocation) : require_revocation_(require_revocation) {}
  bool allow_tls10() const override { return false; }
  bool allow_tls11() const override { return false; }
  bool allow_tls12() const override { return true; }
  bool require_cert_revocation_info() const override { return require_revocation_; }
  // --ocsp-staple off (the contract's default, the only value here): no status_request sent.
  // Botan's default asks for a staple and refuses a chain a stapled response says is revoked.
  bool support_cert_status_message() const override { return false; }

 private:
  bool require_revocation_;
};

// The run's credentials: the trusted stores for the server's chain, the client's own pair.
class Credentials : public Botan::Credentials_Manager {
 public:
  std::vector<Botan::Certificate_Store*> trusted_certificate_authorities(const std::string& type,
                                                                         const std::string& context) override;
  // The client's chain when its key type is asked for and, where the server's request names CAs,
  // one of them issued a certificate of the chain (Botan's default find_cert_chain ignores the
  // names and offers the chain to any server that asks).
  std::vector<Botan::X509_Certificate> find_cert_chain(const std::vector<std::string>& cert_key_types,
                                                       const std::vector<Botan::X509_DN>& acceptable_cas,
                                                       const std::string& type, const std::string& context) override;
  Botan::Private_Key* private_key_for(const Botan::X509_Certificate& cert, const std::string& type,
                                      const std::string& context) override;

 private:
  friend struct ConfigMaker;
  Botan::Certificate_Store_In_Memory anchors_;       // --cafile's certificates, --crl's CRLs
  std::unique_ptr<Botan::Certificate_Store> system_;  // Botan's System_Certificate_Store, when asked
  std::vector<Botan::Certificate_Store*> stores_;
  std::vector<Botan::X509_Certificate> own_chain_;  // --cert, the leaf first
  std::unique_ptr<Botan::Private_Key> own_key_;     // --key
};

class TlsConfig {
 public:
  explicit TlsConfig(const Options& o) : policy_(!o.crls.empty() || o.crl_all) {}
  Botan::RandomNumberGenerator& rng() { return rng_; }
  const Botan::TLS::Policy& policy() const { return policy_; }
  Credentials& credentials() { return credentials_; }

 private:
  friend struct ConfigMaker;
  Botan::AutoSeeded_RNG rng_;
  LabPolicy policy_;
  Credentials credentials_;
};

using ConfigResult = contract::Made<TlsConfig>;  // the config, or the one line and whose it is to fix

ConfigResult make_config(const Options& o);

// "Botan 2.19.3"
std::string library_version();

}  // namespace tlsbotan
