#include "socket_ops.h"

#include <arpa/inet.h>
#include <linux/sockios.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>

namespace tlsproxy {

namespace {

// Every socket sends each write as its own segment: a slicer's segments must leave apart.
void set_nodelay(int fd) {
  int on = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

}  // namespace

bool Moved::would_block() const { return n < 0 && (err == EAGAIN || err == EWOULDBLOCK); }

Opened listen_on(const sockaddr_in& addr) {
  Opened made;
  made.fd = Descriptor(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  int on = 1;
  if (!made.fd.open() || setsockopt(made.fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
      bind(made.fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(made.fd.get(), SOMAXCONN) != 0) {
    made.err = errno;
    made.fd.reset();
  }
  return made;
}

uint16_t local_port(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
  return ntohs(addr.sin_port);
}

Opened accept_one(int listener) {
  Opened made;
  made.fd = Descriptor(accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
  if (!made.fd.open()) made.err = errno;
  else set_nodelay(made.fd.get());
  return made;
}

Opened dial(const sockaddr_in& addr) {
  Opened made;
  made.fd = Descriptor(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!made.fd.open()) {
    made.err = errno;
    return made;
  }
  set_nodelay(made.fd.get());
  if (connect(made.fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 && errno != EINPROGRESS) {
    made.err = errno;
    made.fd.reset();
  }
  return made;
}

int pending_error(int fd) {
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
  return err;
}

Moved read_some(int fd, char* buf, size_t len) {
  Moved m;
  do m.n = recv(fd, buf, len, 0);
  while (m.n < 0 && errno == EINTR);
  if (m.n < 0) m.err = errno;
  return m;
}

Moved write_some(int fd, const char* buf, size_t len) {
  Moved m;
  do m.n = send(fd, buf, len, MSG_NOSIGNAL);  // a gone peer is an EPIPE value, never a signal
  while (m.n < 0 && errno == EINTR);
  if (m.n < 0) m.err = errno;
  return m;
}

int unacked_bytes(int fd) {
  int queued = 0;
  return ioctl(fd, SIOCOUTQ, &queued) == 0 ? queued : -1;
}

void reset_and_close(Descriptor& fd) {
  if (!fd.open()) return;
  linger hard{1, 0};
  setsockopt(fd.get(), SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
  fd.reset();
}

void shut_write(int fd) { shutdown(fd, SHUT_WR); }

}  // namespace tlsproxy
