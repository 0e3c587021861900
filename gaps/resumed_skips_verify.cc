// gaps/resumed_skips_verify: a resumed handshake carries no certificate, so nothing is
// verified: a session saved for hooks.test and offered for other.test connects, with
// SSL_set1_host("other.test") set and a verify result of OK. Hence the client's session
// cache key includes the name, the port and the trust configuration.
#include "gaplib.h"

namespace {

// A verified connection for `name` to the hooks.test server, optionally offering `session`.
std::string connect_for(SSL_CTX* cctx, SSL_CTX* sctx, const char* name, SSL_SESSION* session,
                        gap::Session* keep = nullptr) {
  gap::Link l = gap::link(cctx, sctx);
  SSL* c = l.client.get();
  SSL_set_tlsext_host_name(c, name);
  SSL_set1_host(c, name);
  if (session) SSL_set_session(c, session);
  std::string outcome = gap::handshake(l);
  if (outcome != "ok") return outcome;
  gap::client_read_once(l);  // gaps/tls13_ticket_after_handshake
  if (keep) keep->reset(SSL_get1_session(c));
  SSL_shutdown(c);           // gaps/free_without_shutdown
  return std::string(SSL_session_reused(c) ? "ok,reused" : "ok,full") +
         ",verify=" + gap::verify_name(SSL_get_verify_result(c));
}

void observe(SSL_CTX* cctx, SSL_CTX* sctx, const std::string& label, gap::Observation& obs) {
  gap::Session hooks_session;
  obs.add(label + ".hooks.test", connect_for(cctx, sctx, "hooks.test", nullptr, &hooks_session));
  obs.add(label + ".other.test_fresh", connect_for(cctx, sctx, "other.test", nullptr));
  obs.add(label + ".other.test_offering_hooks_session", connect_for(cctx, sctx, "other.test", hooks_session.get()));
}

}  // namespace

int main(int argc, char** argv) {
  gap::init(argc, argv);
  gap::Ctx sctx = gap::server_ctx();  // serves hooks.test only
  gap::Observation obs;
  for (int version : {TLS1_3_VERSION, TLS1_2_VERSION}) {
    gap::Ctx cctx = gap::client_ctx();
    SSL_CTX_set_min_proto_version(cctx.get(), version);
    SSL_CTX_set_max_proto_version(cctx.get(), version);
    observe(cctx.get(), sctx.get(), version == TLS1_3_VERSION ? "tls13" : "tls12", obs);
  }
  return obs.print();
}
