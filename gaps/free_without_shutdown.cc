// gaps/free_without_shutdown: SSL_free on a connection that neither sent close_notify nor
// was marked shut down treats the session as bad (ssl_clear_bad_session) and marks it not
// resumable, even in a copy saved earlier with SSL_get1_session. A client that drops
// connections on error or deadline loses its sessions unless it marks them first.
#include "gaplib.h"

namespace {

enum class Ending { free_only, ssl_shutdown, set_sent_shutdown };

// A full connection whose session is saved after the tickets arrive, then ended as told.
std::string saved_then(SSL_CTX* cctx, SSL_CTX* sctx, Ending ending) {
  gap::Session saved;
  {
    gap::Link l = gap::link(cctx, sctx);
    if (gap::handshake(l) != "ok") gap::die("handshake failed");
    gap::client_read_once(l);  // gaps/tls13_ticket_after_handshake
    saved.reset(SSL_get1_session(l.client.get()));
    if (!SSL_SESSION_is_resumable(saved.get())) return "not_resumable_before_free";
    if (ending == Ending::ssl_shutdown) SSL_shutdown(l.client.get());
    if (ending == Ending::set_sent_shutdown) SSL_set_shutdown(l.client.get(), SSL_SENT_SHUTDOWN);
  }  // SSL_free here
  std::string state = SSL_SESSION_is_resumable(saved.get()) ? "resumable" : "not_resumable";
  gap::Link next = gap::link(cctx, sctx);
  SSL_set_session(next.client.get(), saved.get());
  if (gap::handshake(next) != "ok") return state + ",handshake_failed";
  return state + (SSL_session_reused(next.client.get()) ? ",reused" : ",full");
}

}  // namespace

int main(int argc, char** argv) {
  gap::init(argc, argv);
  gap::Ctx sctx = gap::server_ctx();
  gap::Observation obs;
  for (int version : {TLS1_3_VERSION, TLS1_2_VERSION}) {
    gap::Ctx cctx = gap::client_ctx();
    SSL_CTX_set_min_proto_version(cctx.get(), version);
    SSL_CTX_set_max_proto_version(cctx.get(), version);
    std::string v = version == TLS1_3_VERSION ? "tls13" : "tls12";
    obs.add(v + ".SSL_free", saved_then(cctx.get(), sctx.get(), Ending::free_only));
    obs.add(v + ".SSL_shutdown+SSL_free", saved_then(cctx.get(), sctx.get(), Ending::ssl_shutdown));
    obs.add(v + ".SSL_set_shutdown+SSL_free", saved_then(cctx.get(), sctx.get(), Ending::set_sent_shutdown));
  }
  return obs.print();
}
