// One attempt of a C++ client under test, the library-independent half: connecting -> handshake
// -> (holding) -> sending <-> reading -> bye -> done, advanced by epoll readiness, never blocking.
// The socket, the non-blocking connect, epoll interest, the deadline and hold timers, the
// response reader and the attempt's record are here; the TLS library's half (its session, the
// handshake, record I/O, its errors) is the subclass's: the step_* calls below. Every path ends
// in one Outcome, the session released and the socket closed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "client/attempt_record.h"
#include "client/deadline_queue.h"
#include "client/http_response.h"
#include "client/outcome.h"
#include "clients/contract/contract_options.h"
#include "clients/contract/session_store.h"

namespace contract {

using tlsnb::Outcome;
using tlsnb::Stage;

// What every attempt of a run shares with the loop: read-only but for the fd counts.
struct LoopShared {
  const Options* options = nullptr;
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

// The response reader's refusal as the lab's outcome (read/http_chunked, read/http_malformed), or
// none while the response is whole or still coming: for every adapter that feeds an HttpResponse.
std::optional<Outcome> refused_response(const tlsnb::HttpResponse& response);

// What a C++ adapter's attempts share: the loop's part, the adapter's one configuration (Config)
// and --resume's pool.
template <class Config>
struct AdapterShared : LoopShared {
  Config* tls = nullptr;
  SessionStore* sessions = nullptr;
};

// Stage setup, `detail` what could not be made: "WHAT", or "WHAT: WHY" (every adapter's words).
Outcome setup_outcome(long detail, const char* what, const std::string& why);

// The setup failures every adapter shares, with the same detail in each (stage setup).
enum class BaseSetup : long { socket = 3, epoll = 7, out_of_memory = 8 };
Outcome base_setup_outcome(BaseSetup what, const std::string& why = "");

class AttemptBase {
 public:
  enum class State { waiting, connecting, handshake, holding, sending, reading, bye, done };

  AttemptBase(uint64_t conn, LoopShared& shared);
  virtual ~AttemptBase();  // a subclass releases its session in its own destructor
  AttemptBase(const AttemptBase&) = delete;
  AttemptBase& operator=(const AttemptBase&) = delete;

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
  tlsnb::AttemptRecord record() const;

 protected:
  enum class Step { again, wait, over };

  // The library's half. open_session runs once the socket exists (false: it called fail).
  virtual bool open_session() = 0;
  virtual Step step_handshake() = 0;
  virtual Step step_hold() = 0;   // read and drop until hold_over()
  virtual Step step_send() = 0;   // request_left() to send; sent(n) when n bytes went out
  virtual Step step_read() = 0;   // bytes to take_response_bytes(); carried bytes come first
  virtual Step step_bye() = 0;
  virtual void release_session() = 0;

  Step fail(Outcome outcome);
  Step next_after_handshake();  // holding, sending or bye, as the options say
  Step take_response_bytes(const uint8_t* data, size_t len);
  bool take_carried(Step* step);  // bytes read past the previous response, handed over first
  void sent(size_t n);
  const char* request_left() const { return shared_.request.data() + sent_; }
  size_t request_left_size() const { return shared_.request.size() - sent_; }
  bool hold_over() const { return hold_over_; }
  void set_want(uint32_t events) { want_ = events; }
  void set_state(State s) { state_ = s; }
  const Options& options() const { return *shared_.options; }
  int fd() const { return fd_; }

  uint64_t conn_;
  LoopShared& shared_;
  bool resumed_ = false;
  std::string tls_version_;
  std::string cipher_;

 private:
  void connect_to(uint32_t addr_host_order);
  Step advance();
  Step step_connect();
  void watch(uint32_t events);
  void close_socket();
  Stage running_stage() const;

  State state_ = State::waiting;
  int slot_ = -1;
  int fd_ = -1;
  double started_ms_;
  double ended_ms_ = 0;
  uint32_t watching_ = 0;
  bool registered_ = false;
  uint32_t events_ = 0;
  uint32_t want_ = 0;  // EPOLLIN or EPOLLOUT: what the last call waits for
  bool hold_over_ = false;
  size_t sent_ = 0;
  long requests_done_ = 0;
  tlsnb::HttpResponse response_;
  std::string carry_;  // bytes read past the end of a response: the next one's
  int http_status_ = 0;
  std::string addr_text_;
  Outcome outcome_;
};

// A C++ adapter's attempt: AttemptBase with the run's shared parts at hand (run_: the adapter's
// configuration, --resume's pool), and --resume's rule for keeping a session: once, before the
// close_notify (save_session), in the form the library serializes it (session_to_keep).
template <class Config>
class AdapterAttempt : public AttemptBase {
 public:
  using Shared = AdapterShared<Config>;
  AdapterAttempt(uint64_t conn, Shared& shared) : AttemptBase(conn, shared), run_(shared) {}

 protected:
  // The session serialized into *data; false when there is none to keep (yet: a TLS 1.3 ticket).
  virtual bool session_to_keep(std::string* data) = 0;

  void save_session() {
    if (session_saved_ || !options().resume) return;
    session_saved_ = true;
    std::string data;
    if (session_to_keep(&data)) run_.sessions->store(std::move(data));
  }

  Shared& run_;

 private:
  bool session_saved_ = false;
};

}  // namespace contract
