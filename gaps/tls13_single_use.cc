// gaps/tls13_single_use: a TLS 1.3 session (one ticket) is meant for one resumption
// (RFC 8446 appendix C.4). Observed: what the client's saved session says after one use,
// and whether offering it again resumes, against servers with stateless tickets (OpenSSL's
// default), stateful ones (SSL_OP_NO_TICKET) and anti-replay (early data enabled). OpenSSL
// 3.0's client keeps the session resumable: single use is the client's own policy.
#include "gaplib.h"

namespace {

std::string resumable(SSL_SESSION* s) { return SSL_SESSION_is_resumable(s) ? "resumable" : "not_resumable"; }

// One connection offering `session`; reads the new tickets and closes cleanly.
std::string offer(SSL_CTX* cctx, SSL_CTX* sctx, SSL_SESSION* session) {
  gap::Link l = gap::link(cctx, sctx);
  SSL_set_session(l.client.get(), session);
  std::string outcome = gap::handshake(l);
  if (outcome != "ok") return outcome;
  gap::client_read_once(l);
  SSL_shutdown(l.client.get());
  return SSL_session_reused(l.client.get()) ? "reused" : "full";
}

void observe(SSL_CTX* cctx, SSL_CTX* sctx, const std::string& label, gap::Observation& obs) {
  gap::Link l = gap::link(cctx, sctx);
  if (gap::handshake(l) != "ok") gap::die("handshake failed");
  gap::client_read_once(l);  // gaps/tls13_ticket_after_handshake: the tickets
  gap::Session saved(SSL_get1_session(l.client.get()));
  SSL_shutdown(l.client.get());
  obs.add(label + ".before_use", resumable(saved.get()));
  obs.add(label + ".first_offer", offer(cctx, sctx, saved.get()));
  obs.add(label + ".after_one_use", resumable(saved.get()));
  obs.add(label + ".second_offer", offer(cctx, sctx, saved.get()));
}

}  // namespace

int main(int argc, char** argv) {
  gap::init(argc, argv);
  gap::Ctx cctx = gap::client_ctx();
  SSL_CTX_set_min_proto_version(cctx.get(), TLS1_3_VERSION);
  gap::Ctx stateless = gap::server_ctx();
  gap::Ctx stateful = gap::server_ctx();
  SSL_CTX_set_options(stateful.get(), SSL_OP_NO_TICKET);
  gap::Ctx anti_replay = gap::server_ctx();
  SSL_CTX_set_max_early_data(anti_replay.get(), 16384);  // early data on: anti-replay, stateful tickets
  gap::Observation obs;
  observe(cctx.get(), stateless.get(), "stateless_tickets", obs);
  observe(cctx.get(), stateful.get(), "stateful_tickets", obs);
  observe(cctx.get(), anti_replay.get(), "early_data_anti_replay", obs);
  return obs.print();
}
