// One attempt: connecting -> handshake -> (holding) -> sending <-> reading -> bye -> done,
// advanced by epoll readiness, never blocking. GNUTLS_E_AGAIN / GNUTLS_E_INTERRUPTED leave the
// state as it is, gnutls_record_get_direction() says which readiness to wait for, and the same
// call is made again. Every path ends in one Outcome, the session deinit'ed and the socket closed.
#pragma once

#include <gnutls/gnutls.h>

#include <cstdint>
#include <string>

#include "client/attempt_record.h"
#include "client/deadline_queue.h"
#include "client/http_response.h"
#include "options.h"
#include "outcome.h"
#include "session_store.h"
#include "socket_io.h"
#include "tls_config.h"

namespace tlsgnu {

// What every attempt shares: read-only during the run, except the session store and fd counts.
struct Shared {
  const Options* options = nullptr;
  TlsConfig* tls = nullptr;
  SessionStore* sessions = nullptr;
  std::string request;  // one whole HTTP request (headers and body), sent K times
  int epoll_fd = -1;
  tlsnb::DeadlineQueue* timers = nullptr;
  enum TimerKind : uint64_t { deadline_timer = 0, hold_timer = 1 };
  static uint64_t token(uint64_t conn, TimerKind kind) { return conn << 1 | kind; }
  long open_fds = 0;  // descriptors this process holds: the epoll set and the attempts' sockets
  long peak_fds = 0;
  void fd_opened() {
    if (++open_fds > peak_fds) peak_fds = open_fds;
  }
  void fd_closed() { --open_fds; }
};

class Attempt {
 public:
  enum class State { waiting, connecting, handshake, holding, sending, reading, bye, done };

  Attempt(uint64_t conn, Shared& shared);
  ~Attempt();
  Attempt(const Attempt&) = delete;
  Attempt& operator=(const Attempt&) = delete;

  // Opens the socket and the session and starts the TCP connect to --connect / TARGET.
  void start(uint32_t addr_host_order, int slot);
  void on_event(uint32_t events);
  void on_deadline();
  void on_hold_over();
  void finish(Outcome outcome);

  uint64_t conn() const { return conn_; }
  bool done() const { return state_ == State::done; }
  const Outcome& outcome() const { return outcome_; }
  bool resumed() const { return resumed_; }
  // The attempt as its line reports it (the contract's fields).
  tlsnb::AttemptRecord record() const;

 private:
  enum class Step { again, wait, over };

  bool open_session();
  void connect_to(uint32_t addr_host_order);
  Step advance();
  Step step_connect();
  Step step_handshake();
  Step step_hold();
  Step step_send();
  Step step_read();
  Step step_bye();
  Step after_error(long result, Stage stage, int call_errno);
  Step take_response_bytes(const uint8_t* data, size_t len);
  Step fail(Outcome outcome);
  bool staple_missing() const;
  void handshake_done();
  Step next_after_handshake();
  void save_session();
  void send_alert_for(int err);
  void watch(uint32_t events);
  void release();
  Stage running_stage() const;

  uint64_t conn_;
  Shared& shared_;
  State state_ = State::waiting;
  int slot_ = -1;
  double started_ms_;
  double ended_ms_ = 0;
  SocketIo io_;
  uint32_t watching_ = 0;
  bool registered_ = false;
  uint32_t events_ = 0;
  uint32_t want_ = 0;  // EPOLLIN or EPOLLOUT: what the last call waits for
  int nonfatal_ = 0;   // non-fatal errors retried (warning alerts, a renegotiation request)
  bool hold_over_ = false;
  bool session_saved_ = false;
  size_t sent_ = 0;
  long requests_done_ = 0;
  tlsnb::HttpResponse response_;
  std::string carry_;  // bytes read past the end of a response: the next one's
  int http_status_ = 0;
  bool resumed_ = false;
  std::string tls_version_;
  std::string cipher_;
  std::string addr_text_;
  Outcome outcome_;
};

}  // namespace tlsgnu
