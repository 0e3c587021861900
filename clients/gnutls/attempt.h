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
#include "socket_io.h"
#include "tls_config.h"

namespace tlsgnu {

class Attempt : public contract::AdapterAttempt<TlsConfig> {
 public:
  using AdapterAttempt::AdapterAttempt;
  ~Attempt() override { release_session(); }

 private:
  bool open_session() override;
  Step step_handshake() override;
  Step step_hold() override;
  Step step_send() override;
  Step step_read() override;
  Step step_bye() override;
  void release_session() override;
  bool session_to_keep(std::string* data) override;

  Step after_error(long result, Stage stage, int call_errno);
  bool staple_missing() const;
  void handshake_done();
  void send_alert_for(int err);

  SocketIo io_;
  int nonfatal_ = 0;  // non-fatal errors retried (warning alerts, a renegotiation request)
};

}  // namespace tlsgnu
