#include "client_identity.h"

#include <openssl/err.h>
#include <openssl/x509.h>

#include "pem_load.h"

namespace tlsnb {

namespace {

bool names_one_of(const STACK_OF(X509_NAME) * wanted, const X509_NAME* name) {
  for (int i = 0; i < sk_X509_NAME_num(wanted); ++i)
    if (X509_NAME_cmp(sk_X509_NAME_value(wanted, i), name) == 0) return true;
  return false;
}

// Whether the request's CA names (TLS 1.2 certificate_authorities list, TLS 1.3 extension)
// admit our certificate: none named, or one of them issued a certificate of our chain.
bool request_admits(SSL* ssl) {
  const STACK_OF(X509_NAME)* wanted = SSL_get0_peer_CA_list(ssl);
  if (wanted == nullptr || sk_X509_NAME_num(wanted) == 0) return true;
  X509* leaf = SSL_get_certificate(ssl);
  if (leaf == nullptr) return false;
  if (names_one_of(wanted, X509_get_issuer_name(leaf))) return true;
  STACK_OF(X509)* chain = nullptr;
  SSL_get0_chain_certs(ssl, &chain);
  for (int i = 0; i < sk_X509_num(chain); ++i)
    if (names_one_of(wanted, X509_get_issuer_name(sk_X509_value(chain, i)))) return true;
  return false;
}

// OpenSSL's certificate callback: on a client, it runs when a CertificateRequest arrives.
int on_certificate_request(SSL* ssl, void*) {
  if (!request_admits(ssl)) SSL_certs_clear(ssl);  // an empty Certificate: the server decides
  return 1;
}

std::string mismatch(const std::string& cert, const std::string& key) {
  return "--key: '" + key + "' does not match the certificate of --cert '" + cert + "'";
}

IdentityResult failed(std::string why, FileCheck check) {
  ERR_clear_error();
  return {std::move(why), check == FileCheck::unusable};
}

}  // namespace

IdentityResult load_client_identity(SSL_CTX* ctx, const std::string& cert, const std::string& key) {
  std::string why;
  if (FileCheck check = check_pem_file(cert, {"-----BEGIN CERTIFICATE-----"}, "PEM certificate", &why);
      check != FileCheck::usable)
    return failed("--cert: " + why, check);
  if (FileCheck check = check_pem_file(key, {"-----BEGIN PRIVATE KEY-----", "-----BEGIN EC PRIVATE KEY-----",
                                             "-----BEGIN RSA PRIVATE KEY-----", "-----BEGIN DSA PRIVATE KEY-----"},
                                       "PEM private key (unencrypted)", &why);
      check != FileCheck::usable)
    return failed("--key: " + why, check);
  ERR_clear_error();
  if (SSL_CTX_use_certificate_chain_file(ctx, cert.c_str()) != 1) {
    FileCheck check = load_failure();
    return failed("--cert: " + refused_load(check, cert, "certificate"), check);
  }
  // A key that does not match the certificate (of its own type: one of another type loads, and
  // SSL_CTX_check_private_key says), a key that does not decode, or the run's want of memory.
  if (SSL_CTX_use_PrivateKey_file(ctx, key.c_str(), SSL_FILETYPE_PEM) != 1) {
    LoadErrors seen = drain_error_queue();
    FileCheck check = judged(seen);
    if (seen.key_mismatch && check == FileCheck::unusable) return failed(mismatch(cert, key), check);
    return failed("--key: " + refused_load(check, key, "key"), check);
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    if (drain_error_queue().memory) return failed("--key: '" + key + "' could not be checked", FileCheck::no_memory);
    return failed(mismatch(cert, key), FileCheck::unusable);
  }
  SSL_CTX_set_cert_cb(ctx, on_certificate_request, nullptr);
  return {};
}

}  // namespace tlsnb
