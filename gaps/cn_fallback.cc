// gaps/cn_fallback: OpenSSL still checks the subject CN when the subjectAltName holds no
// DNS name (here only an IP address), unless X509_CHECK_FLAG_NEVER_CHECK_SUBJECT is set.
// A DNS name in the SAN hides the CN (the control).
#include <openssl/x509v3.h>

#include "gaplib.h"

int main(int argc, char** argv) {
  gap::init(argc, argv);
  gap::Ctx cctx = gap::client_ctx();
  gap::Ctx cn_ip = gap::server_ctx("cn-right-san-ip");      // CN hooks.test, SAN IP:127.0.0.1
  gap::Ctx cn_dns = gap::server_ctx("cn-right-san-wrong");  // CN hooks.test, SAN DNS:other.test
  gap::Ctx cn_only = gap::server_ctx("cn-only");            // CN hooks.test, no SAN
  const unsigned never = X509_CHECK_FLAG_NEVER_CHECK_SUBJECT;
  gap::Observation obs;
  obs.add("cn+ip_san", gap::handshake_for(cctx.get(), cn_ip.get(), "hooks.test"));
  obs.add("cn+ip_san+NEVER_CHECK_SUBJECT", gap::handshake_for(cctx.get(), cn_ip.get(), "hooks.test", never));
  obs.add("cn_only", gap::handshake_for(cctx.get(), cn_only.get(), "hooks.test"));
  obs.add("cn_only+NEVER_CHECK_SUBJECT", gap::handshake_for(cctx.get(), cn_only.get(), "hooks.test", never));
  obs.add("cn+dns_san", gap::handshake_for(cctx.get(), cn_dns.get(), "hooks.test"));
  return obs.print();
}
