// One attempt: connecting -> handshake -> (holding) -> sending <-> reading -> shutdown -> done,
// advanced by readiness, never blocking. Every path ends in one Outcome and frees its
// SSL, BIOs and descriptor (RAII: SslPtr, Descriptor).
#pragma once

#include <netinet/in.h>
#include <openssl/ssl.h>

#include <cstdint>
#include <memory>
#include <string>

#include "attempt_record.h"
#include "descriptor.h"
#include "dns_judge.h"
#include "http_response.h"
#include "openssl_ptr.h"
#include "outcome.h"
#include "run_state.h"
#include "ssl_failure.h"
#include "tls_context.h"
#include "transport.h"
#include "watcher.h"

namespace tlsnb {

class Attempt final : public Watcher {
 public:
  enum class State { waiting, resolving, connecting, handshake, holding, sending, reading, shutdown, done };

  Attempt(uint64_t conn, RunState& shared);
  ~Attempt() override;

  // Opens the socket and the SSL for `addr` (either family) and starts the TCP connect.
  void dial(const dns::Address& addr, int slot);
  // Happy Eyeballs (RFC 8305, the subset in client/README.md): before dial(), the address of the
  // other family to race; it is dialled when the first connect fails or on_fallback_timer()
  // runs first, the first to connect wins and the other socket is closed at once.
  void set_fallback(const dns::Address& addr);
  bool has_fallback() const { return fallback_ != nullptr; }
  void on_fallback_timer();
  // Starts on `fd`, a stream socket already connected to the peer (a socketpair, an accepted or
  // inherited socket), shown as `peer` in the report. The attempt owns `fd` from here.
  void adopt(int fd, const std::string& peer, int slot);
  void on_event(uint32_t events) override;
  void on_deadline();
  void on_hold_over();
  // Ends the attempt before it dialled (lookup failed, address refused).
  void finish(Outcome outcome);
  void set_state(State state) { state_ = state; }

  uint64_t conn() const { return conn_; }
  int slot() const { return slot_; }
  State state() const { return state_; }
  bool done() const { return state_ == State::done; }
  const Outcome& outcome() const { return outcome_; }
  const std::string& addr() const { return addr_text_; }
  double elapsed_ms() const;
  bool resumed() const { return resumed_; }
  const std::string& tls_version() const { return tls_version_; }
  const std::string& cipher() const { return cipher_; }
  int http_status() const { return http_status_; }
  long requests_done() const { return requests_done_; }
  // The finished attempt as a plain record, its strings moved out (nothing is allocated).
  AttemptRecord take_record();

 private:
  enum class Step { again, wait, over };

  void dial_to(const dns::Address& addr, int slot);
  class Fallback;
  void start_fallback();
  void on_fallback(uint32_t events);
  void fallback_failed(int err);
  void close_fallback();
  Step primary_failed(int err);
  void own_descriptor(int fd);
  Step advance_once();
  Step step_connect();
  Step step_handshake();
  Step step_hold();
  Step step_send();
  Step step_read();
  Step step_shutdown();
  // What an SSL call's result means: done (> 0), again, wait, or over (outcome set).
  Step after_ssl(int result, Stage stage, bool* done);
  // What the attempt saw around a failed SSL call (errno, the error queue, the verify record).
  SslFailure observed(Stage stage, int ssl_error, int saved_errno) const;
  Step fail(Outcome outcome);
  void handshake_done();
  Step next_after_handshake();
  bool open_ssl();
  void watch(uint32_t events);
  Stage running_stage() const;

  uint64_t conn_;
  RunState& shared_;
  State state_ = State::waiting;
  int slot_ = -1;
  double started_ms_;
  double ended_ms_ = 0;
  Descriptor fd_;
  SslPtr ssl_;
  std::unique_ptr<Transport> transport_;
  VerifyRecord verify_;
  uint32_t watching_ = 0;
  bool registered_ = false;
  uint32_t events_ = 0;
  int want_ = 0;
  bool hold_over_ = false;
  size_t sent_ = 0;
  long requests_done_ = 0;
  HttpResponse response_;
  int http_status_ = 0;
  bool resumed_ = false;
  std::string tls_version_;
  std::string cipher_;
  std::string addr_text_;
  Outcome outcome_;
  std::unique_ptr<Fallback> fallback_;  // kept to the end: an event of this batch may still name it
  bool primary_failed_ = false;
};

}  // namespace tlsnb
