// gaps/seclevel_openssl_verify: a TLS client on Debian runs at security level 2, which
// refuses an RSA-1024 leaf (80-bit) and a SHA-1 signature. `openssl verify` does
// not apply the TLS security level (its -auth_level defaults to none), so it says OK for
// both and is no oracle for what a client will accept.
#include <sys/wait.h>

#include <cstdio>

#include "gaplib.h"

namespace {

std::string connect_to(SSL_CTX* cctx, const std::string& cert) {
  gap::Ctx sctx = gap::server_ctx(cert);
  return gap::handshake_for(cctx, sctx.get(), "hooks.test");
}

// `openssl verify [extra] -CAfile ca.pem NAME.pem`: "OK", or the X509_V_ERR name it reports.
std::string openssl_verify(const std::string& cert, const std::string& extra) {
  std::string cmd = "openssl verify " + extra + " -CAfile '" + gap::cert_file("ca.pem") + "' '" +
                    gap::cert_file(cert + ".pem") + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) gap::die("cannot run openssl verify");
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) out += buf;
  int status = pclose(p);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && out.find(": OK") != std::string::npos) return "OK";
  long code = -1;
  size_t at = out.find("error ");
  if (at != std::string::npos) code = std::strtol(out.c_str() + at + 6, nullptr, 10);
  return code >= 0 ? gap::verify_name(code) : "unparsed";
}

}  // namespace

int main(int argc, char** argv) {
  gap::init(argc, argv);
  gap::Ctx cctx = gap::client_ctx();
  gap::Observation obs;
  obs.add("default_level", std::to_string(SSL_CTX_get_security_level(cctx.get())));
  for (int level : {-1, 1, 0}) {
    std::string prefix = "tls";
    if (level >= 0) {
      SSL_CTX_set_security_level(cctx.get(), level);
      prefix += "@level" + std::to_string(level);
    }
    obs.add(prefix + ".rsa1024", connect_to(cctx.get(), "leaf-rsa1024"));
    obs.add(prefix + ".sha1", connect_to(cctx.get(), "leaf-sha1"));
  }
  obs.add("openssl_verify.rsa1024", openssl_verify("leaf-rsa1024", ""));
  obs.add("openssl_verify.sha1", openssl_verify("leaf-sha1", ""));
  obs.add("openssl_verify_auth_level2.rsa1024", openssl_verify("leaf-rsa1024", "-auth_level 2"));
  obs.add("openssl_verify_auth_level2.sha1", openssl_verify("leaf-sha1", "-auth_level 2"));
  return obs.print();
}
