// One attempt on BearSSL: the library's half of contract::AttemptBase (clients/contract). The
// socket, the connect, epoll, the timers and the response reader are the base's; here BearSSL's
// engine, which does no I/O: move_records sends what br_ssl_engine_sendrec_buf holds and feeds
// br_ssl_engine_recvrec_buf from the socket until the engine offers what the step needs
// (BR_SSL_SENDAPP, BR_SSL_RECVAPP), or says which readiness to wait for, or is closed.
#pragma once

#include <bearssl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "chain_check.h"
#include "clients/contract/attempt_base.h"
#include "options.h"
#include "trust_anchors.h"

namespace tlsbear {

using tlsnb::Outcome;
using tlsnb::Stage;

// What could not be made (stage setup); 3, 7 and 8 are clients/contract's BaseSetup.
enum class SetupFailure : long { engine_reset = 1, context = 9, session_data = 10 };
Outcome setup_outcome(SetupFailure what, const std::string& why = "");

// Everything BearSSL needs for one connection, in the caller's memory: the client context, the
// minimal X.509 engine, this adapter's wrapper of it and the full-duplex record buffer.
struct Engine {
  br_ssl_client_context cc;
  br_x509_minimal_context xc;
  ChainCheck check;
  unsigned char buf[BR_SSL_BUFSIZE_BIDI];
};

class Attempt : public contract::AdapterAttempt<TlsConfig> {
 public:
  Attempt(uint64_t conn, Shared& shared) : AdapterAttempt(conn, shared) {}
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

  br_ssl_engine_context* eng() { return &e_->cc.eng; }
  void offer_session();
  int send_records();
  std::optional<Step> move_records(unsigned want, Stage stage);
  Step closed(Stage stage);
  Step send_failed(Stage stage, int err);
  Step io_failed(Stage stage, int err, const char* what);
  void handshake_done();

  std::unique_ptr<Engine> e_;
  unsigned char offered_master_[48] = {};
  bool offered_ = false;
  bool closing_ = false;  // br_ssl_engine_close called
};

}  // namespace tlsbear
