#include "tls_config.h"

#include <arpa/inet.h>
#include <gnutls/x509.h>

#include <cstring>

#include "client/pem_file.h"

namespace tlsgnu {

namespace {

// Every file given is checked by the reference's check first (client/pem_file.h, tlsnb's words and
// exit codes): a readable, non-empty regular file, the user's to fix when not (exit 2); an open that
// failed for want of memory is the run's (setup/9). What it holds is GnuTLS's to say
// (gnutls_certificate_set_x509_trust_file counts the certificates).
using tlsnb::check_readable_file;
using tlsnb::FileCheck;

// Each --crl into the credentials (gnutls_certificate_set_x509_crl_file: the count of CRLs it read;
// a file with none, or with a certificate only, is the user's to fix).
std::string load_crls(gnutls_certificate_credentials_t credentials, const Options& o, bool* config_error) {
  for (const std::string& path : o.crls) {
    std::string why;
    FileCheck check = check_readable_file(path, &why);
    *config_error = check != FileCheck::no_memory;
    if (check != FileCheck::usable) return "--crl: " + why;
    int r = gnutls_certificate_set_x509_crl_file(credentials, path.c_str(), GNUTLS_X509_FMT_PEM);
    *config_error = r != GNUTLS_E_MEMORY_ERROR;
    if (r == GNUTLS_E_MEMORY_ERROR) return "--crl: out of memory";
    if (r <= 0) return "--crl: no PEM CRL could be loaded from '" + path + "'";
  }
  return "";
}

// --cert and --key (gnutls_certificate_set_x509_key_file), in tlsnb's words for each refusal.
std::string load_identity(gnutls_certificate_credentials_t credentials, const Options& o, bool* config_error) {
  const std::string& cert = o.client_cert;
  const std::string& key = o.client_key;
  std::string why;
  for (const std::string* path : {&cert, &key}) {
    FileCheck check = check_readable_file(*path, &why);
    *config_error = check != FileCheck::no_memory;
    if (check != FileCheck::usable) return (path == &cert ? "--cert: " : "--key: ") + why;
  }
  int r = gnutls_certificate_set_x509_key_file(credentials, cert.c_str(), key.c_str(), GNUTLS_X509_FMT_PEM);
  *config_error = r != GNUTLS_E_MEMORY_ERROR;
  if (r >= 0) return "";
  if (r == GNUTLS_E_MEMORY_ERROR) return "--cert: out of memory";
  if (r == GNUTLS_E_CERTIFICATE_KEY_MISMATCH)
    return "--key: '" + key + "' does not match the certificate of --cert '" + cert + "'";
  // GnuTLS reads the certificate first: a failure that names the key's decoding is the key's.
  gnutls_x509_crt_t probe = nullptr;
  gnutls_datum_t data{nullptr, 0};
  bool cert_loads = gnutls_load_file(cert.c_str(), &data) >= 0 && gnutls_x509_crt_init(&probe) >= 0 &&
                    gnutls_x509_crt_import(probe, &data, GNUTLS_X509_FMT_PEM) >= 0;
  if (probe != nullptr) gnutls_x509_crt_deinit(probe);
  gnutls_free(data.data);
  if (!cert_loads) return "--cert: no PEM certificate could be loaded from '" + cert + "'";
  return "--key: no PEM private key could be loaded from '" + key + "' (" + gnutls_strerror(r) + ")";
}

}  // namespace

std::string init_library() {
  int r = gnutls_global_init();
  return r < 0 ? std::string("gnutls_global_init: ") + gnutls_strerror(r) : "";
}

void cleanup_library() { gnutls_global_deinit(); }

TlsConfig::~TlsConfig() {
  if (priority_ != nullptr) gnutls_priority_deinit(priority_);
  if (credentials_ != nullptr) gnutls_certificate_free_credentials(credentials_);
}

std::string library_version() {
  const char* v = gnutls_check_version(nullptr);
  return std::string("GnuTLS ") + (v != nullptr ? v : "?");
}

ConfigResult make_config(const Options& o) {
  if (!o.cafile.empty()) {
    std::string why;
    FileCheck check = check_readable_file(o.cafile, &why);
    if (check != FileCheck::usable) return ConfigResult::failed("--cafile: " + why, check == FileCheck::unusable);
  }
  auto config = std::make_unique<TlsConfig>();
  int r = gnutls_certificate_allocate_credentials(&config->credentials_);
  if (r < 0) return ConfigResult::failed(std::string("gnutls_certificate_allocate_credentials: ") + gnutls_strerror(r), false);
  if (o.verify) {
    if (!o.cafile.empty()) {
      r = gnutls_certificate_set_x509_trust_file(config->credentials_, o.cafile.c_str(), GNUTLS_X509_FMT_PEM);
      if (r == GNUTLS_E_MEMORY_ERROR) return ConfigResult::failed("--cafile: out of memory", false);
      if (r < 0) return ConfigResult::failed("--cafile: '" + o.cafile + "': " + gnutls_strerror(r), true);
      if (r == 0) return ConfigResult::failed("--cafile: no PEM certificate in '" + o.cafile + "'", true);
    }
    if (o.cafile.empty() || o.system_trust) {
      r = gnutls_certificate_set_x509_system_trust(config->credentials_);
      if (r < 0) return ConfigResult::failed(std::string("the system trust store could not be loaded: ") + gnutls_strerror(r), true);
    }
    bool config_error = true;
    if (std::string why = load_crls(config->credentials_, o, &config_error); !why.empty())
      return ConfigResult::failed(why, config_error);
  }
  if (!o.client_cert.empty()) {
    bool config_error = true;
    if (std::string why = load_identity(config->credentials_, o, &config_error); !why.empty())
      return ConfigResult::failed(why, config_error);
  }
  config->priority_text_ = o.tls_max == 12 ? "NORMAL:-VERS-ALL:+VERS-TLS1.2" : "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2";
  const char* err_pos = nullptr;
  r = gnutls_priority_init(&config->priority_, config->priority_text_.c_str(), &err_pos);
  if (r < 0) {
    config->priority_ = nullptr;
    return ConfigResult::failed(std::string("gnutls_priority_init: ") + gnutls_strerror(r), r != GNUTLS_E_MEMORY_ERROR);
  }
  // Typed verification data: an IP literal is matched against IP SANs only, a name by RFC 6125;
  // --no-verify-name gives neither (GnuTLS then verifies the chain and the purpose, no name).
  config->purpose_ = GNUTLS_KP_TLS_WWW_SERVER;
  config->name_ = o.name;
  in_addr addr{};
  if (o.verify_name && inet_pton(AF_INET, o.name.c_str(), &addr) == 1) {
    std::memcpy(config->ip_, &addr.s_addr, 4);
    config->vdata_.push_back({GNUTLS_DT_IP_ADDRESS, config->ip_, 4});
  } else if (o.verify_name) {
    config->vdata_.push_back({GNUTLS_DT_DNS_HOSTNAME, reinterpret_cast<unsigned char*>(config->name_.data()), 0});
  }
  config->vdata_.push_back(
      {GNUTLS_DT_KEY_PURPOSE_OID, reinterpret_cast<unsigned char*>(config->purpose_.data()), 0});
  return ConfigResult::of(std::move(config));
}

}  // namespace tlsgnu
