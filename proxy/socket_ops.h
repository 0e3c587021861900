// The socket calls the proxy makes, each returning its errno as a value (0: done).
#pragma once

#include <netinet/in.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "client/descriptor.h"

namespace tlsproxy {

using tlsnb::Descriptor;  // the client's owner: one descriptor type in the tree

// A descriptor just made, or why not.
struct Opened {
  Descriptor fd;
  int err = 0;
};

// What one read or write moved: n > 0 bytes; n == 0 end of file (reads); n < 0 with err.
struct Moved {
  ssize_t n = 0;
  int err = 0;
  bool would_block() const;
};

Opened listen_on(const sockaddr_in& addr);
uint16_t local_port(int fd);
// The next pending connection (err EAGAIN when none), non-blocking, TCP_NODELAY on.
Opened accept_one(int listener);
// A non-blocking connect started toward ADDR (err 0 also while it is in progress).
Opened dial(const sockaddr_in& addr);
// SO_ERROR: the result of a connect, or the error a socket holds.
int pending_error(int fd);

Moved read_some(int fd, char* buf, size_t len);
Moved write_some(int fd, const char* buf, size_t len);
// Bytes written to FD that its peer has not yet acknowledged (SIOCOUTQ), -1 when unknown.
int unacked_bytes(int fd);
// SO_LINGER {1, 0} then close: the peer gets an RST, whatever is unsent is dropped.
void reset_and_close(Descriptor& fd);
void shut_write(int fd);

}  // namespace tlsproxy
