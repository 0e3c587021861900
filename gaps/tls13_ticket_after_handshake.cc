// gaps/tls13_ticket_after_handshake: in TLS 1.3 the server's tickets come after the
// handshake, so a session saved the moment SSL_connect returns 1 has no ticket and is not
// resumable; the first SSL_read is what reads the tickets. TLS 1.2 is the control: its
// session is complete when the handshake is.
#include "gaplib.h"

namespace {

std::string resumable(SSL_SESSION* s) { return s && SSL_SESSION_is_resumable(s) ? "resumable" : "not_resumable"; }

// A new connection that offers `session`: "reused" or "full".
std::string offer(SSL_CTX* cctx, SSL_CTX* sctx, SSL_SESSION* session) {
  gap::Link l = gap::link(cctx, sctx);
  SSL_set_session(l.client.get(), session);
  std::string outcome = gap::handshake(l);
  if (outcome != "ok") return outcome;
  SSL_shutdown(l.client.get());  // gaps/free_without_shutdown: TLS 1.2 shares `session` with this SSL
  return SSL_session_reused(l.client.get()) ? "reused" : "full";
}

void observe(SSL_CTX* cctx, SSL_CTX* sctx, const std::string& label, gap::Observation& obs) {
  gap::Link l = gap::link(cctx, sctx);
  if (gap::handshake(l) != "ok") gap::die("handshake failed");
  gap::Session at_handshake(SSL_get1_session(l.client.get()));
  obs.add(label + ".first_read", gap::client_read_once(l));
  gap::Session after_read(SSL_get1_session(l.client.get()));
  SSL_shutdown(l.client.get());  // gaps/free_without_shutdown: keep the session usable
  obs.add(label + ".saved_at_handshake", resumable(at_handshake.get()));
  obs.add(label + ".saved_after_first_read", resumable(after_read.get()));
  obs.add(label + ".offer_saved_at_handshake", offer(cctx, sctx, at_handshake.get()));
  obs.add(label + ".offer_saved_after_first_read", offer(cctx, sctx, after_read.get()));
}

}  // namespace

int main(int argc, char** argv) {
  gap::init(argc, argv);
  gap::Ctx sctx = gap::server_ctx();
  gap::Ctx tls13 = gap::client_ctx();
  SSL_CTX_set_min_proto_version(tls13.get(), TLS1_3_VERSION);
  gap::Ctx tls12 = gap::client_ctx();
  SSL_CTX_set_max_proto_version(tls12.get(), TLS1_2_VERSION);
  gap::Observation obs;
  observe(tls13.get(), sctx.get(), "tls13", obs);
  observe(tls12.get(), sctx.get(), "tls12", obs);
  return obs.print();
}
