// gaps/partial_wildcard: a partial-label wildcard (f*.hooks.test) matches foo.hooks.test
// unless X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS is set. The issue's own example, f*.example,
// is observed too: OpenSSL takes a '*' as a wildcard only with two labels after it, so
// f*.example matches nothing but itself.
#include <openssl/x509v3.h>

#include "gaplib.h"

int main(int argc, char** argv) {
  gap::init(argc, argv);
  gap::Ctx cctx = gap::client_ctx();
  gap::Ctx partial = gap::server_ctx("wild-partial");  // SAN DNS:f*.hooks.test
  gap::Ctx full = gap::server_ctx("wild");             // SAN DNS:*.hooks.test (the control)
  // Not in the generated set; its second name shows the minted chain itself verifies.
  gap::Minted one_label = gap::mint_leaf({"f*.example", "minted.hooks.test"});
  gap::Ctx partial_tld = gap::server_ctx(one_label.cert.get(), one_label.key.get());
  const unsigned no_partial = X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS;
  gap::Observation obs;
  obs.add("f*.hooks.test", gap::handshake_for(cctx.get(), partial.get(), "foo.hooks.test"));
  obs.add("f*.hooks.test+NO_PARTIAL_WILDCARDS",
          gap::handshake_for(cctx.get(), partial.get(), "foo.hooks.test", no_partial));
  obs.add("*.hooks.test+NO_PARTIAL_WILDCARDS", gap::handshake_for(cctx.get(), full.get(), "foo.hooks.test", no_partial));
  obs.add("f*.example", gap::handshake_for(cctx.get(), partial_tld.get(), "foo.example"));
  obs.add("f*.example.control", gap::handshake_for(cctx.get(), partial_tld.get(), "minted.hooks.test"));
  return obs.print();
}
