// gaps/no_sni: SSL_set1_host sets the name to check, not the name to send. Without
// SSL_set_tlsext_host_name no SNI goes out, and a server that picks its certificate by SNI
// serves its default (here other.test), which then fails the check.
#include "gaplib.h"

namespace {

// A server whose default certificate is other.test and which switches to hooks.test's
// when the client names it; it records the name it was sent.
struct SniServer {
  gap::Ctx fallback = gap::server_ctx("wronghost");
  gap::Ctx hooks = gap::server_ctx("leaf-ecdsa");
  std::string seen;
};

int on_servername(SSL* ssl, int*, void* arg) {
  auto* srv = static_cast<SniServer*>(arg);
  const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
  srv->seen = name ? name : "none";
  if (name && std::string(name) == "hooks.test") SSL_set_SSL_CTX(ssl, srv->hooks.get());
  return SSL_TLSEXT_ERR_OK;
}

void connect(SSL_CTX* cctx, SniServer& srv, bool send_sni, const std::string& label, gap::Observation& obs) {
  srv.seen = "callback_not_called";
  gap::Link l = gap::link(cctx, srv.fallback.get());
  SSL_set1_host(l.client.get(), "hooks.test");
  if (send_sni) SSL_set_tlsext_host_name(l.client.get(), "hooks.test");
  std::string outcome = gap::handshake(l);
  obs.add(label + ".server_saw", srv.seen);
  obs.add(label + ".outcome", outcome);
}

}  // namespace

int main(int argc, char** argv) {
  gap::init(argc, argv);
  gap::Ctx cctx = gap::client_ctx();
  SniServer srv;
  SSL_CTX_set_tlsext_servername_callback(srv.fallback.get(), on_servername);
  SSL_CTX_set_tlsext_servername_arg(srv.fallback.get(), &srv);
  gap::Observation obs;
  connect(cctx.get(), srv, false, "set1_host_only", obs);
  connect(cctx.get(), srv, true, "set1_host+host_name", obs);
  return obs.print();
}
