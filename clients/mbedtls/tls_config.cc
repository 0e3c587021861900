#include "tls_config.h"

#include <mbedtls/error.h>
#include <mbedtls/version.h>

#include <cstring>

namespace tlsmbed {

namespace {

constexpr const char* system_bundle = "/etc/ssl/certs/ca-certificates.crt";  // Debian's ca-certificates

bool out_of_memory(int r) {
  return r == MBEDTLS_ERR_X509_ALLOC_FAILED || r == MBEDTLS_ERR_PK_ALLOC_FAILED || r == MBEDTLS_ERR_SSL_ALLOC_FAILED;
}

}  // namespace

std::string mbed_text(int code) {
  char buf[200];
  mbedtls_strerror(code, buf, sizeof buf);
  return buf;
}

std::string library_version() {
  char v[18] = "";
  mbedtls_version_get_string(v);
  return std::string("Mbed TLS ") + v;
}

TlsConfig::TlsConfig() {
  mbedtls_entropy_init(&entropy_);
  mbedtls_ctr_drbg_init(&drbg_);
  mbedtls_ssl_config_init(&conf_);
  mbedtls_x509_crt_init(&cacert_);
  mbedtls_x509_crl_init(&crl_);
  mbedtls_x509_crt_init(&own_cert_);
  mbedtls_pk_init(&own_key_);
}

TlsConfig::~TlsConfig() {
  mbedtls_pk_free(&own_key_);
  mbedtls_x509_crt_free(&own_cert_);
  mbedtls_x509_crl_free(&crl_);
  mbedtls_x509_crt_free(&cacert_);
  mbedtls_ssl_config_free(&conf_);
  mbedtls_ctr_drbg_free(&drbg_);
  mbedtls_entropy_free(&entropy_);
}

// The steps of make_config, each one failure line.
struct ConfigMaker {
  const Options& o;
  TlsConfig& c;

  std::string trust(bool* config_error) {
    *config_error = true;
    if (!o.cafile.empty()) {
      if (std::string p = contract::cafile_problem(o.cafile); !p.empty()) return p;
      int r = mbedtls_x509_crt_parse_file(&c.cacert_, o.cafile.c_str());
      *config_error = !out_of_memory(r);
      if (r < 0) return "--cafile: '" + o.cafile + "': " + mbed_text(r);
      if (c.cacert_.version == 0) return "--cafile: no PEM certificate in '" + o.cafile + "'";
    }
    if (o.cafile.empty() || o.system_trust) {
      int r = mbedtls_x509_crt_parse_file(&c.cacert_, system_bundle);
      *config_error = !out_of_memory(r);
      if (r < 0) return std::string("the system bundle ") + system_bundle + " could not be loaded: " + mbed_text(r);
    }
    return "";
  }

  std::string crls(bool* config_error) {
    *config_error = true;
    for (const std::string& path : o.crls) {
      if (std::string p = contract::file_problem(path); !p.empty()) return "--crl: " + p;
      int r = mbedtls_x509_crl_parse_file(&c.crl_, path.c_str());
      *config_error = !out_of_memory(r);
      if (r != 0) return "--crl: no PEM CRL could be loaded from '" + path + "' (" + mbed_text(r) + ")";
    }
    return "";
  }

  std::string identity(bool* config_error) {
    *config_error = true;
    if (std::string p = contract::identity_files_problem(o); !p.empty()) return p;
    int r = mbedtls_x509_crt_parse_file(&c.own_cert_, o.client_cert.c_str());
    *config_error = !out_of_memory(r);
    if (r != 0 || c.own_cert_.version == 0) return "--cert: no PEM certificate could be loaded from '" + o.client_cert + "'";
    r = mbedtls_pk_parse_keyfile(&c.own_key_, o.client_key.c_str(), nullptr);
    *config_error = !out_of_memory(r);
    if (r != 0) return "--key: no PEM private key could be loaded from '" + o.client_key + "' (" + mbed_text(r) + ")";
    r = mbedtls_pk_check_pair(&c.own_cert_.pk, &c.own_key_);
    if (r != 0) return "--key: '" + o.client_key + "' does not match the certificate of --cert '" + o.client_cert + "'";
    r = mbedtls_ssl_conf_own_cert(&c.conf_, &c.own_cert_, &c.own_key_);
    *config_error = false;
    if (r != 0) return "mbedtls_ssl_conf_own_cert: " + mbed_text(r);
    return "";
  }

  void anchors() { mbedtls_ssl_conf_ca_chain(&c.conf_, &c.cacert_, o.crls.empty() ? nullptr : &c.crl_); }

  std::string base(bool* config_error) {
    *config_error = false;
    const char* personal = "tlsnb-mbedtls";
    int r = mbedtls_ctr_drbg_seed(&c.drbg_, mbedtls_entropy_func, &c.entropy_,
                                  reinterpret_cast<const unsigned char*>(personal), std::strlen(personal));
    if (r != 0) return "mbedtls_ctr_drbg_seed: " + mbed_text(r);
    r = mbedtls_ssl_config_defaults(&c.conf_, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
    if (r != 0) return "mbedtls_ssl_config_defaults: " + mbed_text(r);
    mbedtls_ssl_conf_rng(&c.conf_, mbedtls_ctr_drbg_random, &c.drbg_);
    // TLS 1.2 only: 2.28 has nothing above it, and nothing below is the contract's.
    mbedtls_ssl_conf_min_version(&c.conf_, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
    mbedtls_ssl_conf_max_version(&c.conf_, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
    // The client default is already VERIFY_REQUIRED; said here so that no reader has to know it.
    mbedtls_ssl_conf_authmode(&c.conf_, o.verify ? MBEDTLS_SSL_VERIFY_REQUIRED : MBEDTLS_SSL_VERIFY_NONE);
    return "";
  }
};

ConfigResult make_config(const Options& o) {
  auto config = std::make_unique<TlsConfig>();
  ConfigMaker make{o, *config};
  bool config_error = false;
  if (std::string why = make.base(&config_error); !why.empty()) return ConfigResult::failed(why, config_error);
  if (o.verify) {
    if (std::string why = make.trust(&config_error); !why.empty()) return ConfigResult::failed(why, config_error);
    if (std::string why = make.crls(&config_error); !why.empty()) return ConfigResult::failed(why, config_error);
    make.anchors();
  }
  if (!o.client_cert.empty())
    if (std::string why = make.identity(&config_error); !why.empty()) return ConfigResult::failed(why, config_error);
  return ConfigResult::of(std::move(config));
}

}  // namespace tlsmbed
