#include "attempt.h"

#include <gnutls/ocsp.h>
#include <sys/epoll.h>

#include <cerrno>
#include <cstring>

#include "error_map.h"

namespace tlsgnu {

namespace {

constexpr int max_nonfatal = 16;  // warning alerts or renegotiation requests retried per attempt

bool peer_error(int err) {  // the peer's doing: no alert of ours would be read
  return err == GNUTLS_E_FATAL_ALERT_RECEIVED || err == GNUTLS_E_PREMATURE_TERMINATION ||
         err == GNUTLS_E_PULL_ERROR || err == GNUTLS_E_PUSH_ERROR || err == GNUTLS_E_SESSION_EOF;
}

}  // namespace

void Attempt::release_session() {
  if (io_.session == nullptr) return;
  gnutls_deinit(io_.session);
  io_.session = nullptr;
}

bool Attempt::open_session() {
  const Options& o = options();
  TlsConfig& tls = *run_.tls;
  io_.fd = fd();
  int r = gnutls_init(&io_.session, GNUTLS_CLIENT | GNUTLS_NONBLOCK);
  if (r < 0) {
    io_.session = nullptr;
    return fail(setup_outcome(SetupFailure::session_init, gnutls_strerror(r))), false;
  }
  if ((r = gnutls_priority_set(io_.session, tls.priority())) < 0)
    return fail(setup_outcome(SetupFailure::priority, gnutls_strerror(r))), false;
  if ((r = gnutls_credentials_set(io_.session, GNUTLS_CRD_CERTIFICATE, tls.credentials())) < 0)
    return fail(setup_outcome(SetupFailure::credentials, gnutls_strerror(r))), false;
  // No SNI for an IP literal (RFC 6066); the name is checked by the library during the handshake.
  if (!o.name_is_ip() &&
      (r = gnutls_server_name_set(io_.session, GNUTLS_NAME_DNS, o.name.data(), o.name.size())) < 0)
    return fail(setup_outcome(SetupFailure::sni, gnutls_strerror(r))), false;
  if (o.verify) gnutls_session_set_verify_cert2(io_.session, tls.verify_data(), tls.verify_elements(), 0);
  gnutls_handshake_set_timeout(io_.session, 0);  // the attempt's deadline is the only clock
  attach_socket_io(&io_, o.transport);
  std::string saved;
  if (o.resume && run_.sessions->take(&saved) &&
      (r = gnutls_session_set_data(io_.session, saved.data(), saved.size())) < 0)
    return fail(setup_outcome(SetupFailure::session_data, gnutls_strerror(r))), false;
  return true;
}

Attempt::Step Attempt::step_handshake() {
  int r = gnutls_handshake(io_.session);
  int call_errno = errno;
  if (r != GNUTLS_E_SUCCESS) return after_error(r, Stage::handshake, call_errno);
  handshake_done();
  if (staple_missing()) {
    // RFC 6066's bad_certificate_status_response (113), which GnuTLS names no constant for; one try
    gnutls_alert_send(io_.session, GNUTLS_AL_FATAL, static_cast<gnutls_alert_description_t>(113));
    Outcome o = make_outcome(Stage::handshake, x509::ocsp_verify_needed,
                             "--ocsp-staple require: the server stapled no OCSP response GnuTLS verified");
    o.verify_depth = 0;
    return fail(o);
  }
  return next_after_handshake();
}

// --ocsp-staple require: GnuTLS asked for a staple and judged any that came (a bad or revoked one
// fails the handshake itself); what it does not do is fail when none came. A resumed session
// carries no staple and needs none: it was saved by an attempt whose full handshake passed this
// check (save_session runs at the close), as tlsnb's rule (client/README.md).
bool Attempt::staple_missing() const {
  const Options& o = options();
  return o.verify && o.ocsp_staple == "require" && !resumed_ &&
         gnutls_ocsp_status_request_is_checked(io_.session, 0) == 0;
}

void Attempt::handshake_done() {
  resumed_ = gnutls_session_is_resumed(io_.session) != 0;
  switch (gnutls_protocol_get_version(io_.session)) {
    case GNUTLS_TLS1_2: tls_version_ = "TLSv1.2"; break;
    case GNUTLS_TLS1_3: tls_version_ = "TLSv1.3"; break;
    default: tls_version_ = gnutls_protocol_get_name(gnutls_protocol_get_version(io_.session)); break;
  }
  if (const char* suite = gnutls_ciphersuite_get(io_.session)) cipher_ = suite;
}

// Holding: read (and drop) what arrives, TLS 1.3 session tickets among it, until the hold is over.
Attempt::Step Attempt::step_hold() {
  uint8_t buf[4096];
  ssize_t n = gnutls_record_recv(io_.session, buf, sizeof buf);
  int call_errno = errno;
  if (n > 0) return Step::again;
  if (n == 0) return fail(make_outcome(Stage::read, details::early_close_notify, "peer sent close_notify before the end"));
  return after_error(n, Stage::read, call_errno);
}

Attempt::Step Attempt::step_send() {
  // After GNUTLS_E_AGAIN the same buffer and length are offered again, as GnuTLS requires.
  ssize_t n = gnutls_record_send(io_.session, request_left(), request_left_size());
  int call_errno = errno;
  if (n < 0) return after_error(n, Stage::write, call_errno);
  sent(static_cast<size_t>(n));  // one record's worth at most per call
  return Step::again;
}

Attempt::Step Attempt::step_read() {
  uint8_t buf[16384];
  ssize_t n = gnutls_record_recv(io_.session, buf, sizeof buf);
  int call_errno = errno;
  if (n == 0) return fail(make_outcome(Stage::read, details::early_close_notify, "peer sent close_notify before the end"));
  if (n < 0) return after_error(n, Stage::read, call_errno);
  return take_response_bytes(buf, static_cast<size_t>(n));
}

// For --resume: TLS 1.2's session at once; TLS 1.3's once a ticket came.
bool Attempt::session_to_keep(std::string* data) {
  bool tls13 = gnutls_protocol_get_version(io_.session) == GNUTLS_TLS1_3;
  if (tls13 && !(gnutls_session_get_flags(io_.session) & GNUTLS_SFLAGS_SESSION_TICKET)) return false;
  gnutls_datum_t saved{nullptr, 0};
  if (gnutls_session_get_data2(io_.session, &saved) < 0) return false;
  data->assign(reinterpret_cast<const char*>(saved.data), saved.size);
  gnutls_free(saved.data);
  return true;
}

// close_notify, best effort: sent (GNUTLS_SHUT_WR), the peer's is not awaited.
Attempt::Step Attempt::step_bye() {
  save_session();
  int r = gnutls_bye(io_.session, GNUTLS_SHUT_WR);
  if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED) {
    set_want(gnutls_record_get_direction(io_.session) == 1 ? EPOLLOUT : EPOLLIN);
    return r == GNUTLS_E_INTERRUPTED ? Step::again : Step::wait;
  }
  return fail(make_outcome(Stage::ok, 0, "ok"));  // sent, or the peer is gone: every response was complete
}

// After a GnuTLS call returned `result` < 0 in `stage`.
Attempt::Step Attempt::after_error(long result, Stage stage, int call_errno) {
  int err = static_cast<int>(result);
  if (err == GNUTLS_E_AGAIN || err == GNUTLS_E_INTERRUPTED) {
    set_want(gnutls_record_get_direction(io_.session) == 1 ? EPOLLOUT : EPOLLIN);
    return err == GNUTLS_E_INTERRUPTED ? Step::again : Step::wait;
  }
  // A warning alert, a renegotiation request (ignored: refusing it is allowed): call again.
  if (gnutls_error_is_fatal(err) == 0 && ++nonfatal_ <= max_nonfatal) return Step::again;
  int saved_errno = options().transport == Transport::bio ? io_.last_errno : call_errno;
  if (err != GNUTLS_E_PULL_ERROR && err != GNUTLS_E_PUSH_ERROR) saved_errno = 0;
  if (stage == Stage::handshake && !peer_error(err)) send_alert_for(err);
  if (err == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR)
    return fail(verify_outcome(io_.session, run_.tls->credentials(), err,
                               gnutls_session_get_verify_cert_status(io_.session),
                               options().name_is_ip()));
  return fail(gnutls_outcome(stage, io_.session, err, saved_errno));
}

// GnuTLS does not send the alert for a handshake it failed itself; the caller is to
// (gnutls_alert_send_appropriate). One try: if the socket would block, the alert is dropped.
void Attempt::send_alert_for(int err) {
  gnutls_alert_send_appropriate(io_.session, err);
}

}  // namespace tlsgnu
