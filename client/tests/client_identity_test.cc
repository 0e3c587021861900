// client_identity.h: the client certificate and key loaded once, each refusal told apart in one line:
// a key that does not decode, a key of another certificate, a certificate that does not decode.
#include "client_identity.h"

#include <gtest/gtest.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "openssl_ptr.h"

namespace tlsnb {
namespace {

std::string scratch(const std::string& name) { return ::testing::TempDir() + "client_identity_test_" + name; }

EVP_PKEY* new_key() { return EVP_EC_gen("P-256"); }

// KEY and a self-signed certificate of it, as PEM files: scratch(NAME).pem and .key.
void write_identity(const std::string& name, EVP_PKEY* key) {
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_NAME_add_entry_by_txt(X509_get_subject_name(cert), "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("client"), -1, -1, 0);
  X509_set_issuer_name(cert, X509_get_subject_name(cert));
  X509_set_pubkey(cert, key);
  X509_sign(cert, key, EVP_sha256());
  FILE* f = std::fopen((scratch(name) + ".pem").c_str(), "w");
  PEM_write_X509(f, cert);
  std::fclose(f);
  f = std::fopen((scratch(name) + ".key").c_str(), "w");
  PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(f);
  X509_free(cert);
}

class ClientIdentity : public ::testing::Test {
 protected:
  void SetUp() override {
    EVP_PKEY* mine = new_key();
    EVP_PKEY* other = new_key();
    write_identity("mine", mine);
    write_identity("other", other);
    EVP_PKEY_free(mine);
    EVP_PKEY_free(other);
    std::ofstream(scratch("undecodable.key")) << "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";
    std::ofstream(scratch("undecodable.pem")) << "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
  }
  IdentityResult load(const std::string& cert, const std::string& key) {
    return load_client_identity(ctx_.get(), scratch(cert), scratch(key));
  }
  SslCtxPtr ctx_{SSL_CTX_new(TLS_client_method())};
};

TEST_F(ClientIdentity, ACertificateAndItsKeyLoad) {
  IdentityResult r = load("mine.pem", "mine.key");
  EXPECT_EQ("", r.error);
}

TEST_F(ClientIdentity, AnotherCertificatesKeyIsAMismatch) {
  IdentityResult r = load("mine.pem", "other.key");
  EXPECT_TRUE(r.config_error);
  EXPECT_EQ("--key: '" + scratch("other.key") + "' does not match the certificate of --cert '" + scratch("mine.pem") + "'",
            r.error);
}

TEST_F(ClientIdentity, AKeyThatDoesNotDecodeIsSaidSoNotAMismatch) {
  IdentityResult r = load("mine.pem", "undecodable.key");
  EXPECT_TRUE(r.config_error);
  EXPECT_EQ("--key: '" + scratch("undecodable.key") + "' holds a key that does not decode", r.error);
}

TEST_F(ClientIdentity, ACertificateThatDoesNotDecodeIsSaidSo) {
  IdentityResult r = load("undecodable.pem", "mine.key");
  EXPECT_TRUE(r.config_error);
  EXPECT_EQ("--cert: '" + scratch("undecodable.pem") + "' holds a certificate that does not decode", r.error);
}

}  // namespace
}  // namespace tlsnb
