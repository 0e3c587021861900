#include "attempt.h"

#include <botan/tls_exceptn.h>
#include <botan/tls_server_info.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <new>

namespace tlsbotan {

namespace {

using tlsnb::make_outcome;

std::string iana_name(const std::string& botan_name) {
  return botan_name.rfind("TLS_", 0) == 0 ? botan_name : "TLS_" + botan_name;
}

// TLS v1.2 -> TLSv1.2, as OpenSSL names it.
std::string openssl_version_name(const Botan::TLS::Protocol_Version& v) {
  if (v == Botan::TLS::Protocol_Version::TLS_V12) return "TLSv1.2";
  return v.to_string();
}

}  // namespace

Outcome setup_outcome(SetupFailure what, const std::string& why) {
  const char* name = what == SetupFailure::session_init ? "Botan::TLS::Client could not be made"
                     : what == SetupFailure::context    ? "the run's configuration could not be made"
                                                        : "the saved session could not be offered";
  return contract::setup_outcome(static_cast<long>(what), name, why);
}

void AttemptCallbacks::tls_emit_data(const uint8_t data[], size_t size) { out.append(reinterpret_cast<const char*>(data), size); }

void AttemptCallbacks::tls_record_received(uint64_t, const uint8_t data[], size_t size) {
  app.append(reinterpret_cast<const char*>(data), size);
}

// A warning (no_renegotiation, user_canceled) changes nothing; close_notify and a fatal alert end
// the channel (Botan answers close_notify with its own).
void AttemptCallbacks::tls_alert(Botan::TLS::Alert alert) {
  if ((alert.is_fatal() || alert.type() == Botan::TLS::Alert::CLOSE_NOTIFY) && !peer_alert) peer_alert = alert.type();
}

bool AttemptCallbacks::tls_session_established(const Botan::TLS::Session& session) {
  version = openssl_version_name(session.version());
  cipher = iana_name(session.ciphersuite().to_string());
  master = session.master_secret();
  return options_.resume;  // kept by the session manager only when asked
}

// Botan's own default (Callbacks::tls_verify_cert_chain) with the lab's switches: no check for
// --no-verify, no hostname for --no-verify-name; the policy requires the leaf's revocation data
// (--crl), ocsp_all_intermediates every intermediate's too (--crl-all: Botan's one switch for
// both, named for OCSP, PKIX::merge_revocation_status).
void AttemptCallbacks::tls_verify_cert_chain(const std::vector<Botan::X509_Certificate>& chain,
                                             const std::vector<std::shared_ptr<const Botan::OCSP::Response>>& ocsp,
                                             const std::vector<Botan::Certificate_Store*>& trusted_roots,
                                             Botan::Usage_Type usage, const std::string& hostname,
                                             const Botan::TLS::Policy& policy) {
  if (!options_.verify) return;
  if (chain.empty()) throw Botan::Invalid_Argument("Certificate chain was empty");
  Botan::Path_Validation_Restrictions restrictions(policy.require_cert_revocation_info(), policy.minimum_signature_strength(),
                                                   options_.crl_all);
  Botan::Path_Validation_Result result =
      Botan::x509_path_validate(chain, restrictions, trusted_roots, options_.verify_name ? hostname : "", usage,
                                std::chrono::system_clock::now(), tls_verify_cert_chain_ocsp_timeout(), ocsp);
  if (result.successful_validation()) return;
  verify_failed = verify_outcome(result, chain.size(), options_.name_is_ip());
  throw Botan::TLS::TLS_Exception(Botan::TLS::Alert::BAD_CERTIFICATE,
                                  "Certificate validation failure: " + result.result_string());
}

Attempt::Attempt(uint64_t conn, Shared& shared) : AdapterAttempt(conn, shared) {}

void Attempt::release_session() {
  tls_.reset();  // the socket is the base's to close
  sessions_.reset();
  callbacks_.reset();
}

bool Attempt::open_session() {
  const Options& o = options();
  TlsConfig& tls = *run_.tls;
  callbacks_ = std::make_unique<AttemptCallbacks>(o);
  if (o.resume) sessions_ = std::make_unique<Botan::TLS::Session_Manager_In_Memory>(tls.rng());
  else sessions_ = std::make_unique<Botan::TLS::Session_Manager_Noop>();
  if (o.resume && !offer_session()) return false;
  try {
    // The name is the SNI and the name checked; the ClientHello is emitted here.
    tls_ = std::make_unique<Botan::TLS::Client>(*callbacks_, *sessions_, tls.credentials(), tls.policy(), tls.rng(),
                                                Botan::TLS::Server_Information(o.name, o.port),
                                                Botan::TLS::Protocol_Version::TLS_V12);
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    return fail(setup_outcome(SetupFailure::session_init, e.what())), false;
  }
  return true;
}

// --resume: a session saved by an earlier attempt, put in this attempt's session manager, which
// Botan asks for the server's (its master secret kept: a resumed handshake ends with the same).
bool Attempt::offer_session() {
  std::string saved;
  if (!run_.sessions->take(&saved)) return true;
  try {
    Botan::TLS::Session session(reinterpret_cast<const uint8_t*>(saved.data()), saved.size());
    offered_master_ = session.master_secret();
    sessions_->save(session);
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    return fail(setup_outcome(SetupFailure::session_data, e.what())), false;
  }
  return true;
}

bool Attempt::session_to_keep(std::string* data) {
  Botan::TLS::Session session;
  if (!sessions_ || !sessions_->load_from_server_info(Botan::TLS::Server_Information(options().name, options().port), session))
    return false;
  Botan::secure_vector<uint8_t> der = session.DER_encode();
  data->assign(reinterpret_cast<const char*>(der.data()), der.size());
  return !data->empty();
}

// What Botan emitted, sent while the socket takes it: 0 when all is out, EAGAIN while the socket
// is full, else the errno of the failed send.
int Attempt::send_emitted() {
  std::string& out = callbacks_->out;
  while (!out.empty()) {
    ssize_t n = send(fd(), out.data(), out.size(), MSG_NOSIGNAL);
    if (n > 0) {
      out.erase(0, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return EAGAIN;
    return n < 0 ? errno : EPIPE;
  }
  return 0;
}

std::optional<Attempt::Step> Attempt::pending_output(Stage stage) {
  int err = send_emitted();
  if (err == 0) return std::nullopt;
  if (err == EAGAIN) {
    set_want(EPOLLOUT);
    return Step::wait;
  }
  return fail(socket_outcome(stage, err, true));
}

// One recv, handed to Botan. Its TLS_Exception is an error it found (and sent an alert for).
Attempt::Step Attempt::read_some(Stage stage) {
  uint8_t buf[16384];
  ssize_t n = recv(fd(), buf, sizeof buf, 0);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
    set_want(EPOLLIN);
    return Step::wait;
  }
  if (n < 0 && errno == EINTR) return Step::again;
  if (n <= 0) return fail(socket_outcome(stage, n < 0 ? errno : 0, false));
  try {
    tls_->received_data(buf, static_cast<size_t>(n));
  } catch (const Botan::TLS::TLS_Exception& e) {
    if (callbacks_->verify_failed) return after_exception(*callbacks_->verify_failed);
    return after_exception(local_alert_outcome(stage, e.type(), e.what()));
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {  // Botan sent internal_error (decode_error for a Decoding_Error)
    return after_exception(local_alert_outcome(stage, Botan::TLS::Alert::INTERNAL_ERROR, e.what()));
  }
  return Step::again;
}

// The alert Botan queued goes out once, best effort, before the attempt ends.
Attempt::Step Attempt::after_exception(Outcome outcome) {
  (void)send_emitted();
  return fail(std::move(outcome));
}

Attempt::Step Attempt::step_handshake() {
  if (auto step = pending_output(Stage::handshake)) return *step;
  if (callbacks_->peer_alert) return fail(peer_alert_outcome(Stage::handshake, *callbacks_->peer_alert));
  if (tls_->is_active()) {
    resumed_ = !offered_master_.empty() && callbacks_->master == offered_master_;
    tls_version_ = callbacks_->version;
    cipher_ = callbacks_->cipher;
    return next_after_handshake();
  }
  return read_some(Stage::handshake);
}

// Holding: read (and drop) what arrives until the hold is over.
Attempt::Step Attempt::step_hold() {
  if (auto step = pending_output(Stage::read)) return *step;
  callbacks_->app.clear();
  if (callbacks_->peer_alert) return fail(peer_alert_outcome(Stage::read, *callbacks_->peer_alert));
  return read_some(Stage::read);
}

// The request is handed to Botan whole (it makes the records), then sent as the socket takes it.
Attempt::Step Attempt::step_send() {
  if (!request_queued_) {
    if (callbacks_->peer_alert) return fail(peer_alert_outcome(Stage::write, *callbacks_->peer_alert));
    tls_->send(reinterpret_cast<const uint8_t*>(request_left()), request_left_size());
    request_queued_ = true;
  }
  if (auto step = pending_output(Stage::write)) return *step;
  request_queued_ = false;
  sent(request_left_size());
  return Step::again;
}

Attempt::Step Attempt::step_read() {
  if (!callbacks_->app.empty()) {
    std::string data;
    data.swap(callbacks_->app);
    return take_response_bytes(reinterpret_cast<const uint8_t*>(data.data()), data.size());
  }
  if (auto step = pending_output(Stage::read)) return *step;
  if (callbacks_->peer_alert) return fail(peer_alert_outcome(Stage::read, *callbacks_->peer_alert));
  return read_some(Stage::read);
}

// close_notify, best effort: sent, the peer's is not awaited.
Attempt::Step Attempt::step_bye() {
  save_session();
  if (!bye_sent_) {
    bye_sent_ = true;
    if (!tls_->is_closed()) tls_->close();
  }
  if (send_emitted() == EAGAIN) {
    set_want(EPOLLOUT);
    return Step::wait;
  }
  // Sent, or the peer is gone: every response was complete.
  return fail(make_outcome(Stage::ok, 0, "ok"));
}

}  // namespace tlsbotan
