// gaps/staple_not_verified: a client that asks for a staple gets it, and OpenSSL judges none
// of it: a response saying "revoked" leaves the handshake ok and the verify result OK, in the
// library and in `openssl s_client -status` ("Cert Status: revoked", "Verify return code: 0").
// Only a status callback of the caller's can refuse it.
#include <netinet/in.h>
#include <openssl/ocsp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include "gaplib.h"

namespace {

// The caller's own judge, reduced to the status: what a client must add.
int refuse_revoked(SSL* ssl, void*) { return gap::staple_status(ssl) == "revoked" ? 0 : 1; }

std::string connect_asking(SSL_CTX* cctx, SSL_CTX* sctx) {
  gap::Link l = gap::link(cctx, sctx);
  SSL_set_tlsext_status_type(l.client.get(), TLSEXT_STATUSTYPE_ocsp);
  std::string outcome = gap::handshake(l);
  if (outcome != "ok") return outcome;
  return "ok:verify=" + gap::verify_name(SSL_get_verify_result(l.client.get())) + ":staple=" +
         gap::staple_status(l.client.get());
}

// Serves one TLS connection on a loopback listener (in a child) to `openssl s_client -status`;
// "status=<Cert Status>:verify_code=<n>" from what s_client printed.
std::string s_client_status(SSL_CTX* sctx) {
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof sa;
  if (listener < 0 || bind(listener, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || listen(listener, 1) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&sa), &len) != 0)
    gap::die("no loopback listener");
  std::fflush(nullptr);
  pid_t child = fork();
  if (child == 0) {  // the server: one connection, bounded by an alarm
    alarm(10);
    int fd = accept(listener, nullptr, nullptr);
    SSL* s = SSL_new(sctx);
    SSL_set_fd(s, fd);
    char buf[256];
    if (SSL_accept(s) == 1)
      while (SSL_read(s, buf, sizeof buf) > 0) {
      }
    _exit(0);
  }
  close(listener);
  std::string cmd = "timeout 10 openssl s_client -connect 127.0.0.1:" + std::to_string(ntohs(sa.sin_port)) +
                    " -status -CAfile " + gap::cert_file("ca.pem") + " </dev/null 2>/dev/null";
  FILE* out = popen(cmd.c_str(), "r");
  std::string status = "none", code = "none";
  char line[512];
  while (out != nullptr && std::fgets(line, sizeof line, out) != nullptr) {
    std::string l(line);
    if (auto at = l.find("Cert Status: "); at != std::string::npos) status = l.substr(at + 13, l.find_first_of("\r\n", at) - at - 13);
    if (auto at = l.find("Verify return code: "); at != std::string::npos) code = l.substr(at + 20, l.find(' ', at + 20) - at - 20);
  }
  if (out != nullptr) pclose(out);
  kill(child, SIGTERM);
  waitpid(child, nullptr, 0);
  return "status=" + status + ":verify_code=" + code;
}

}  // namespace

int main(int argc, char** argv) {
  gap::init(argc, argv);
  gap::Ctx server = gap::server_ctx("revoked", "ocsp-revoked.ocsp");
  gap::Ctx plain = gap::client_ctx();
  gap::Ctx judging = gap::client_ctx();
  SSL_CTX_set_tlsext_status_cb(judging.get(), refuse_revoked);
  gap::Observation obs;
  obs.add("library", connect_asking(plain.get(), server.get()));
  obs.add("library+status_callback", connect_asking(judging.get(), server.get()));
  obs.add("s_client_-status", s_client_status(server.get()));
  return obs.print();
}
