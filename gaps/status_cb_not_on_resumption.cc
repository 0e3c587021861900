// gaps/status_cb_not_on_resumption: the client's status callback, the only place a staple
// can be judged, runs on every full handshake. On a TLS 1.2 resumption it does not run at all;
// on a TLS 1.3 resumption it runs with no staple to judge (none is sent with a PSK). A client
// that judges staples must say what a resumed session means: tlsnb accepts it on the strength
// of the full handshake that made it (client/ocsp_staple.cc; client/tests/client.toml staple-resumed).
#include "gaplib.h"

namespace {

int calls = 0;
std::string seen;  // the staple status the last call saw
int count_call(SSL* ssl, void*) {
  ++calls;
  seen = gap::staple_status(ssl);
  return 1;
}

// A full handshake and a resumption at `version`: "full=<calls>,resumed=<yes|no>:<calls>".
std::string full_then_resumed(SSL_CTX* cctx, SSL_CTX* sctx, int version) {
  SSL_CTX_set_max_proto_version(cctx, version);
  calls = 0;
  gap::Link first = gap::link(cctx, sctx);
  SSL_set_tlsext_status_type(first.client.get(), TLSEXT_STATUSTYPE_ocsp);
  if (gap::handshake(first) != "ok") return "full_handshake_failed";
  gap::client_read_once(first);  // TLS 1.3: the tickets arrive after the handshake
  gap::Session session(SSL_get1_session(first.client.get()));
  int full_calls = calls;
  std::string full_seen = seen;
  calls = 0;
  gap::Link second = gap::link(cctx, sctx);
  SSL_set_tlsext_status_type(second.client.get(), TLSEXT_STATUSTYPE_ocsp);
  SSL_set_session(second.client.get(), session.get());
  if (gap::handshake(second) != "ok") return "resumption_failed";
  bool resumed = SSL_session_reused(second.client.get()) == 1;
  return "full=" + std::to_string(full_calls) + ":" + full_seen + ",resumed=" + (resumed ? "yes:" : "no:") +
         std::to_string(calls) + (calls > 0 ? ":" + seen : "");
}

}  // namespace

int main(int argc, char** argv) {
  gap::init(argc, argv);
  gap::Ctx server = gap::server_ctx("leaf-ecdsa", "ocsp-good.ocsp");
  gap::Ctx client = gap::client_ctx();
  SSL_CTX_set_session_cache_mode(client.get(), SSL_SESS_CACHE_CLIENT);
  SSL_CTX_set_tlsext_status_cb(client.get(), count_call);
  gap::Observation obs;
  obs.add("tls1.3", full_then_resumed(client.get(), server.get(), TLS1_3_VERSION));
  obs.add("tls1.2", full_then_resumed(client.get(), server.get(), TLS1_2_VERSION));
  return obs.print();
}
