#include "tls_config.h"

#include <botan/certstor_system.h>
#include <botan/data_src.h>
#include <botan/pkcs8.h>
#include <botan/version.h>
#include <botan/x509_crl.h>
#include <botan/x509_dn.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace tlsbotan {

namespace {

// The PEM blocks of `label` in a file, each whole ("-----BEGIN label-----" to its END line).
std::vector<std::string> pem_blocks(const std::string& path, const std::string& label) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str(), begin = "-----BEGIN " + label + "-----", end = "-----END " + label + "-----";
  std::vector<std::string> blocks;
  for (size_t at = all.find(begin); at != std::string::npos; at = all.find(begin, at + begin.size())) {
    size_t stop = all.find(end, at);
    if (stop == std::string::npos) {
      blocks.push_back(all.substr(at));  // unterminated: left to Botan to refuse
      break;
    }
    blocks.push_back(all.substr(at, stop + end.size() - at));
  }
  return blocks;
}

template <class T>
T decoded(const std::string& pem) {
  Botan::DataSource_Memory source(pem);
  return T(source);
}

}  // namespace

std::string library_version() {
  return "Botan " + Botan::short_version_string();
}

std::vector<Botan::Certificate_Store*> Credentials::trusted_certificate_authorities(const std::string&, const std::string&) {
  return stores_;
}

std::vector<Botan::X509_Certificate> Credentials::find_cert_chain(const std::vector<std::string>& cert_key_types,
                                                                  const std::vector<Botan::X509_DN>& acceptable_cas,
                                                                  const std::string&, const std::string&) {
  if (own_chain_.empty() || !own_key_) return {};
  if (std::find(cert_key_types.begin(), cert_key_types.end(), own_key_->algo_name()) == cert_key_types.end())
    return {};  // the server asked for no key type this client's key is
  if (acceptable_cas.empty()) return own_chain_;
  for (const Botan::X509_Certificate& cert : own_chain_)
    if (std::find(acceptable_cas.begin(), acceptable_cas.end(), cert.issuer_dn()) != acceptable_cas.end()) return own_chain_;
  return {};  // the server names other CAs: the certificate is kept to itself, as tlsnb does
}

Botan::Private_Key* Credentials::private_key_for(const Botan::X509_Certificate& cert, const std::string&, const std::string&) {
  if (own_key_ && !own_chain_.empty() && cert == own_chain_.front()) return own_key_.get();
  return nullptr;
}

// The steps of make_config, each one failure line (the user's to fix: exit 2).
struct ConfigMaker {
  const Options& o;
  TlsConfig& c;

  std::string trust() {
    Credentials& cr = c.credentials_;
    if (!o.cafile.empty()) {
      if (std::string p = contract::cafile_problem(o.cafile); !p.empty()) return p;
      for (const std::string& pem : pem_blocks(o.cafile, "CERTIFICATE")) {
        try {
          cr.anchors_.add_certificate(decoded<Botan::X509_Certificate>(pem));
        } catch (const std::exception& e) {
          return "--cafile: '" + o.cafile + "': a certificate that does not decode (" + e.what() + ")";
        }
      }
      cr.stores_.push_back(&cr.anchors_);
    }
    if (o.cafile.empty() || o.system_trust) {
      try {
        cr.system_ = std::make_unique<Botan::System_Certificate_Store>();
      } catch (const std::exception& e) {
        return std::string("the system store could not be loaded: ") + e.what();
      }
      cr.stores_.push_back(cr.system_.get());
    }
    return "";
  }

  std::string crls() {
    Credentials& cr = c.credentials_;
    for (const std::string& path : o.crls) {
      if (std::string p = contract::file_problem(path); !p.empty()) return "--crl: " + p;
      std::vector<std::string> blocks = pem_blocks(path, "X509 CRL");
      if (blocks.empty()) return "--crl: no PEM CRL in '" + path + "'";
      for (const std::string& pem : blocks) {
        try {
          cr.anchors_.add_crl(decoded<Botan::X509_CRL>(pem));
        } catch (const std::exception& e) {
          return "--crl: '" + path + "': a CRL that does not decode (" + e.what() + ")";
        }
      }
    }
    if (!o.crls.empty() && o.cafile.empty()) cr.stores_.push_back(&cr.anchors_);  // the CRLs' store
    return "";
  }

  std::string identity() {
    Credentials& cr = c.credentials_;
    if (std::string p = contract::identity_files_problem(o); !p.empty()) return p;
    for (const std::string& pem : pem_blocks(o.client_cert, "CERTIFICATE")) {
      try {
        cr.own_chain_.push_back(decoded<Botan::X509_Certificate>(pem));
      } catch (const std::exception& e) {
        return "--cert: '" + o.client_cert + "': a certificate that does not decode (" + e.what() + ")";
      }
    }
    if (cr.own_chain_.empty()) return "--cert: no PEM certificate could be loaded from '" + o.client_cert + "'";
    try {
      Botan::DataSource_Stream source(o.client_key);
      cr.own_key_ = Botan::PKCS8::load_key(source);
    } catch (const std::exception& e) {
      return "--key: no PEM private key could be loaded from '" + o.client_key + "' (" + e.what() + ")";
    }
    if (cr.own_key_->public_key_bits() != cr.own_chain_.front().load_subject_public_key()->public_key_bits())
      return "--key: '" + o.client_key + "' does not match the certificate of --cert '" + o.client_cert + "'";
    return "";
  }
};

ConfigResult make_config(const Options& o) {
  std::unique_ptr<TlsConfig> config;
  try {
    config = std::make_unique<TlsConfig>(o);
  } catch (const std::exception& e) {  // the RNG could not be seeded
    return ConfigResult::failed(std::string("Botan's AutoSeeded_RNG: ") + e.what(), false);
  }
  ConfigMaker make{o, *config};
  if (o.verify) {
    if (std::string why = make.trust(); !why.empty()) return ConfigResult::failed(why, true);
    if (std::string why = make.crls(); !why.empty()) return ConfigResult::failed(why, true);
  }
  if (!o.client_cert.empty())
    if (std::string why = make.identity(); !why.empty()) return ConfigResult::failed(why, true);
  return ConfigResult::of(std::move(config));
}

}  // namespace tlsbotan
