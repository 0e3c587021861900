// One attempt on GnuTLS: the library's half of contract::AttemptBase (clients/contract). The
// socket, the connect, epoll, the timers and the response reader are the base's; here the session,
// the handshake and record I/O. GNUTLS_E_AGAIN / GNUTLS_E_INTERRUPTED leave the state as it is,
// gnutls_record_get_direction() says which readiness to wait for, and the same call is made again.
#pragma once

#include <gnutls/gnutls.h>

#include <cstdint>
#include <string>

#include "clients/contract/attempt_base.h"
#include "options.h"
#include "outcome.h"
#include "clients/contract/session_store.h"
#include "socket_io.h"
#include "tls_config.h"

namespace tlsgnu {

// What every attempt shares: the loop's part (clients/contract), the configuration, the sessions.
using Shared = contract::AdapterShared<TlsConfig>;

class Attempt : public contract::AttemptBase {
 public:
  Attempt(uint64_t conn, Shared& shared) : AttemptBase(conn, shared), tls_(shared) {}
  ~Attempt() override { release_session(); }

 private:
  bool open_session() override;
  Step step_handshake() override;
  Step step_hold() override;
  Step step_send() override;
  Step step_read() override;
  Step step_bye() override;
  void release_session() override;

  Step after_error(long result, Stage stage, int call_errno);
  bool staple_missing() const;
  void handshake_done();
  void save_session();
  void send_alert_for(int err);

  Shared& tls_;
  SocketIo io_;
  int nonfatal_ = 0;  // non-fatal errors retried (warning alerts, a renegotiation request)
  bool session_saved_ = false;
};

}  // namespace tlsgnu
