// gaps/no_set1_host: SNI only tells the server which name is wanted; OpenSSL checks the
// certificate's name only when told to (SSL_set1_host or X509_VERIFY_PARAM_set1_host).
// Without it a chain that verifies, issued for another name, is accepted.
#include <openssl/x509_vfy.h>

#include "gaplib.h"

namespace {

enum class NameCheck { none, set1_host, param_set1_host };

// Connects with SNI hooks.test to a server whose certificate names only other.test.
std::string connect_for_hooks(SSL_CTX* cctx, SSL_CTX* sctx, NameCheck check) {
  gap::Link l = gap::link(cctx, sctx);
  SSL* c = l.client.get();
  SSL_set_tlsext_host_name(c, "hooks.test");
  if (check == NameCheck::set1_host) SSL_set1_host(c, "hooks.test");
  if (check == NameCheck::param_set1_host) X509_VERIFY_PARAM_set1_host(SSL_get0_param(c), "hooks.test", 0);
  std::string outcome = gap::handshake(l);
  if (outcome == "ok") outcome += ":verify=" + gap::verify_name(SSL_get_verify_result(c));
  return outcome;
}

}  // namespace

int main(int argc, char** argv) {
  gap::init(argc, argv);
  gap::Ctx cctx = gap::client_ctx();
  gap::Ctx other = gap::server_ctx("wronghost");
  gap::Observation obs;
  obs.add("sni_only", connect_for_hooks(cctx.get(), other.get(), NameCheck::none));
  obs.add("SSL_set1_host", connect_for_hooks(cctx.get(), other.get(), NameCheck::set1_host));
  obs.add("X509_VERIFY_PARAM_set1_host", connect_for_hooks(cctx.get(), other.get(), NameCheck::param_set1_host));
  return obs.print();
}
