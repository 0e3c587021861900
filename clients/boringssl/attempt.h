// One attempt on BoringSSL: the library's half of contract::AttemptBase (clients/contract). The
// socket, the connect, epoll, the timers and the response reader are the base's; here the SSL
// object, the handshake and record I/O. SSL_ERROR_WANT_READ / _WANT_WRITE leave the state as it
// is, say which readiness to wait for, and the same call is made again.
#pragma once

#include <openssl/ssl.h>

#include <cstdint>
#include <string>

#include "clients/contract/attempt_base.h"
#include "options.h"
#include "tls_config.h"

namespace tlsboring {

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

  bool attach_transport();
  bool name_the_peer();
  bool offer_session();
  bool waits(int ssl_error);
  Step after_error(int result, Stage stage);
  void handshake_done();

  SSL* ssl_ = nullptr;
  SocketIo io_;        // the bio transport's state
  SessionSink kept_;   // --resume: the latest session BoringSSL handed over
};

}  // namespace tlsboring
