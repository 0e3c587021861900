// gaps/revoked_accepted_by_default: OpenSSL checks no revocation unless asked. A leaf its
// issuer's CRL lists as revoked verifies by default, and still does with that CRL in the
// trust store; only X509_V_FLAG_CRL_CHECK makes it CERT_REVOKED.
#include <openssl/x509_vfy.h>

#include "gaplib.h"

namespace {

// Adds the CRL file to the context's store; dies when it cannot.
void add_crl(SSL_CTX* ctx, const std::string& name) {
  X509_LOOKUP* lookup = X509_STORE_add_lookup(SSL_CTX_get_cert_store(ctx), X509_LOOKUP_file());
  if (lookup == nullptr || X509_load_crl_file(lookup, gap::cert_file(name).c_str(), X509_FILETYPE_PEM) < 1)
    gap::die("cannot load " + name);
}

std::string connect(SSL_CTX* cctx, SSL_CTX* sctx) {
  gap::Link l = gap::link(cctx, sctx);
  std::string outcome = gap::handshake(l);
  if (outcome == "ok") outcome += ":verify=" + gap::verify_name(SSL_get_verify_result(l.client.get()));
  return outcome;
}

}  // namespace

int main(int argc, char** argv) {
  gap::init(argc, argv);
  gap::Ctx revoked = gap::server_ctx("revoked");
  gap::Ctx plain = gap::client_ctx();
  gap::Ctx with_crl = gap::client_ctx();
  add_crl(with_crl.get(), "ca.crl");
  gap::Ctx checking = gap::client_ctx();
  add_crl(checking.get(), "ca.crl");
  X509_VERIFY_PARAM_set_flags(SSL_CTX_get0_param(checking.get()), X509_V_FLAG_CRL_CHECK);
  gap::Observation obs;
  obs.add("default", connect(plain.get(), revoked.get()));
  obs.add("crl_in_store", connect(with_crl.get(), revoked.get()));
  obs.add("crl_in_store+CRL_CHECK", connect(checking.get(), revoked.get()));
  return obs.print();
}
