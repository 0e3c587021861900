// One attempt on NSS: the library's half of contract::AttemptBase (clients/contract). The socket,
// the connect, epoll, the timers and the response reader are the base's; here the SSL layer over
// NSPR's import of the program's socket, the handshake and record I/O. PR_WOULD_BLOCK_ERROR leaves
// the state as it is, the SSL layer's poll method says which readiness to wait for, and the same
// call is made again.
#pragma once

#include <prio.h>
#include <ssl.h>

#include <cstdint>
#include <string>

#include "clients/contract/attempt_base.h"
#include "options.h"
#include "tls_config.h"

namespace tlsnss {

using tlsnb::Outcome;
using tlsnb::Stage;

// What could not be made (stage setup); 3, 7 and 8 are clients/contract's BaseSetup.
enum class SetupFailure : long { session_init = 1, hostname = 6, context = 9, session_data = 10 };
Outcome setup_outcome(SetupFailure what, const std::string& why = "");

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

  bool configure();
  bool offer_session();
  Step after_error(Stage stage, PRInt16 waiting_for);
  void handshake_done();
  Step closed();
  static void alert_received(const PRFileDesc* fd, void* self, const SSLAlert* alert);
  static SECStatus keep_token(PRFileDesc* fd, const PRUint8* token, unsigned len, void* self);

  PRFileDesc* ssl_ = nullptr;  // the SSL layer over socket_layer's over the base's socket
  bool close_notify_received_ = false;
  std::string token_;          // --resume: the latest resumption token NSS handed over
};

}  // namespace tlsnss
