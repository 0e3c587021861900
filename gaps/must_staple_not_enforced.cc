// gaps/must_staple_not_enforced: a leaf with the TLS Feature extension status_request
// (must-staple, RFC 7633) and a server that staples nothing: OpenSSL completes the handshake
// with verify OK, whether or not the client asked for a staple. Enforcing it is the caller's
// (tlsnb: --ocsp-staple check makes a must-staple leaf require one; matrix must-staple-none).
#include <openssl/x509v3.h>

#include "gaplib.h"

namespace {

// The caller's enforcement, reduced to its core: a must-staple leaf needs a staple.
int require_for_must_staple(SSL* ssl, void*) {
  X509* leaf = SSL_get0_peer_certificate(ssl);
  bool must = leaf != nullptr && X509_get_ext_by_NID(leaf, NID_tlsfeature, -1) >= 0;
  return must && gap::staple_status(ssl) == "none" ? 0 : 1;
}

std::string connect(SSL_CTX* cctx, SSL_CTX* sctx, bool ask) {
  gap::Link l = gap::link(cctx, sctx);
  if (ask) SSL_set_tlsext_status_type(l.client.get(), TLSEXT_STATUSTYPE_ocsp);
  std::string outcome = gap::handshake(l);
  if (outcome != "ok") return outcome;
  X509* leaf = SSL_get0_peer_certificate(l.client.get());
  return std::string("ok:verify=") + gap::verify_name(SSL_get_verify_result(l.client.get())) +
         ":tls_feature=" + (X509_get_ext_by_NID(leaf, NID_tlsfeature, -1) >= 0 ? "yes" : "no") +
         ":staple=" + gap::staple_status(l.client.get());
}

}  // namespace

int main(int argc, char** argv) {
  gap::init(argc, argv);
  gap::Ctx server = gap::server_ctx("leaf-muststaple");
  gap::Ctx plain = gap::client_ctx();
  gap::Ctx enforcing = gap::client_ctx();
  SSL_CTX_set_tlsext_status_cb(enforcing.get(), require_for_must_staple);
  gap::Observation obs;
  obs.add("not_asking", connect(plain.get(), server.get(), false));
  obs.add("asking", connect(plain.get(), server.get(), true));
  obs.add("asking+status_callback", connect(enforcing.get(), server.get(), true));
  return obs.print();
}
