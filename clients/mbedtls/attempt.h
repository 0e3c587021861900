// One attempt on Mbed TLS: the library's half of contract::AttemptBase (clients/contract). The
// socket, the connect, epoll, the timers and the response reader are the base's; here the
// mbedtls_ssl_context, the handshake and record I/O. MBEDTLS_ERR_SSL_WANT_READ / _WANT_WRITE
// leave the state as it is, say which readiness to wait for, and the same call is made again.
#pragma once

#include <mbedtls/net_sockets.h>
#include <mbedtls/ssl.h>

#include <cstdint>
#include <string>

#include "clients/contract/attempt_base.h"
#include "error_map.h"
#include "options.h"
#include "tls_config.h"

namespace tlsmbed {

using tlsnb::Outcome;
using tlsnb::Stage;

// What could not be made (stage setup); 3, 7 and 8 are clients/contract's BaseSetup.
enum class SetupFailure : long { session_init = 1, hostname = 6, context = 9, session_data = 10 };
Outcome setup_outcome(SetupFailure what, const std::string& why = "");

// --transport: bio, the program's send(MSG_NOSIGNAL)/recv; fd, Mbed TLS's mbedtls_net_send/recv.
struct SocketIo {
  mbedtls_net_context net{-1};
  int last_errno = 0;  // the errno of the last failed send or receive (0: none yet)
};

class Attempt : public contract::AdapterAttempt<TlsConfig> {
 public:
  Attempt(uint64_t conn, Shared& shared);
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

  bool offer_session();
  Step after_error(int err, Stage stage);
  void handshake_done();

  mbedtls_ssl_context ssl_;
  bool ssl_live_ = false;
  SocketIo io_;
  unsigned char offered_master_[48] = {};
  bool offered_ = false;
  int nonfatal_ = 0;  // WANT_READ after a refused renegotiation and the like, bounded
  ChainSeen seen_;    // what the verify callback saw of the peer's chain
};

}  // namespace tlsmbed
