// gaps/cn_and_partial_wildcard: two legacy name rules OpenSSL still applies by default.
// The subject CN is checked when the subjectAltName holds no DNS name (only IP addresses
// here), unless X509_CHECK_FLAG_NEVER_CHECK_SUBJECT; a partial-label wildcard (f*.hooks.test)
// matches foo.hooks.test unless X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS. The literal
// example, f*.example, is observed too: a wildcard needs two labels after it.
#include <openssl/x509v3.h>

#include "gaplib.h"

namespace {

// A verified handshake for `host` against a server of `sctx`, with the host flags given.
std::string check(SSL_CTX* cctx, SSL_CTX* sctx, const char* host, unsigned flags) {
  gap::Link l = gap::link(cctx, sctx);
  SSL_set_hostflags(l.client.get(), flags);
  SSL_set1_host(l.client.get(), host);
  SSL_set_tlsext_host_name(l.client.get(), host);
  return gap::handshake(l);
}

}  // namespace

int main(int argc, char** argv) {
  gap::init(argc, argv);
  gap::Ctx cctx = gap::client_ctx();
  gap::Ctx cn_ip = gap::server_ctx("cn-right-san-ip");        // CN hooks.test, SAN IP:127.0.0.1
  gap::Ctx cn_dns = gap::server_ctx("cn-right-san-wrong");    // CN hooks.test, SAN DNS:other.test
  gap::Ctx partial = gap::server_ctx("wild-partial");         // SAN DNS:f*.hooks.test
  gap::Minted one_label = gap::mint({"", {"f*.example"}, {}}); // not in the generated set
  gap::Ctx partial_tld = gap::server_ctx(one_label.cert.get(), one_label.key.get());

  gap::Observation obs;
  obs.add("cn+ip_san", check(cctx.get(), cn_ip.get(), "hooks.test", 0));
  obs.add("cn+ip_san+NEVER_CHECK_SUBJECT",
          check(cctx.get(), cn_ip.get(), "hooks.test", X509_CHECK_FLAG_NEVER_CHECK_SUBJECT));
  obs.add("cn+dns_san", check(cctx.get(), cn_dns.get(), "hooks.test", 0));
  obs.add("f*.hooks.test", check(cctx.get(), partial.get(), "foo.hooks.test", 0));
  obs.add("f*.hooks.test+NO_PARTIAL_WILDCARDS",
          check(cctx.get(), partial.get(), "foo.hooks.test", X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS));
  obs.add("f*.example", check(cctx.get(), partial_tld.get(), "foo.example", 0));
  return obs.print();
}
