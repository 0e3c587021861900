// What every attempt and lookup of one run shares: read-only during the run, except the
// session cache and the descriptor count.
#pragma once

#include <openssl/ssl.h>

#include <string>

#include "run_config.h"

namespace tlsnb {

class DeadlineQueue;
class SessionCache;

struct RunState {
  const RunConfig* config = nullptr;
  SSL_CTX* ctx = nullptr;
  SessionCache* sessions = nullptr;
  std::string session_key;   // (name, port, trust) for this run
  std::string request;       // one whole HTTP request (headers and body), sent K times
  int epoll_fd = -1;
  DeadlineQueue* timers = nullptr;  // tokens: encode_timer(conn, kind) (timer_token.h)
  long open_fds = 0;         // descriptors this process holds for attempts and lookups
  long peak_fds = 0;

  void fd_opened() {
    if (++open_fds > peak_fds) peak_fds = open_fds;
  }
  void fd_closed() { --open_fds; }
};

}  // namespace tlsnb
