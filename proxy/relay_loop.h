// The proxy's one thread: epoll over the listener, a signalfd and every connection's two
// sockets; the timer heap's earliest entry is epoll_wait's timeout.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "client/deadline_queue.h"
#include "connection.h"
#include "client/descriptor.h"
#include "options.h"
#include "tally.h"

namespace tlsproxy {

class RelayLoop {
 public:
  // SIGTERM and SIGINT must already be blocked (main does it before READY, so none is lost).
  RelayLoop(const Options& options, Descriptor listener, Tally& tally);
  // "" when it could start, else why not.
  std::string open();
  // Relays until SIGTERM or SIGINT, then closes every connection; "" or the error that stopped it.
  std::string run();

 private:
  void accept_pending(int64_t now);
  void on_socket(uint64_t token, uint32_t events, int64_t now);
  void fire_timers(int64_t now);
  void reap();
  void stop_all();

  const Options& options_;
  Tally& tally_;
  Descriptor listener_;
  Descriptor epoll_;
  Descriptor signals_;
  tlsnb::DeadlineQueue timers_;
  Shared shared_;
  std::map<long, std::unique_ptr<Connection>> live_;
  long next_index_ = 0;
  bool stopping_ = false;
};

}  // namespace tlsproxy
