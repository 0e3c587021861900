#include "socket_io.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>

namespace tlsgnu {

namespace {

ssize_t failed(SocketIo* io) {
  int err = errno;
  io->last_errno = err;
  gnutls_transport_set_errno(io->session, err);
  return -1;
}

ssize_t push(gnutls_transport_ptr_t ptr, const giovec_t* iov, int iovcnt) {
  auto* io = static_cast<SocketIo*>(ptr);
  msghdr msg{};
  msg.msg_iov = const_cast<iovec*>(reinterpret_cast<const iovec*>(iov));
  msg.msg_iovlen = static_cast<size_t>(iovcnt);
  ssize_t n = sendmsg(io->fd, &msg, MSG_NOSIGNAL);
  return n < 0 ? failed(io) : n;
}

ssize_t pull(gnutls_transport_ptr_t ptr, void* data, size_t size) {
  auto* io = static_cast<SocketIo*>(ptr);
  ssize_t n = recv(io->fd, data, size, 0);
  return n < 0 ? failed(io) : n;
}

// GnuTLS asks whether data is waiting; the answer never waits, whatever `ms` says.
int pull_timeout(gnutls_transport_ptr_t ptr, unsigned int ms) {
  auto* io = static_cast<SocketIo*>(ptr);
  pollfd p{io->fd, POLLIN, 0};
  int r = poll(&p, 1, 0);
  if (r < 0) return static_cast<int>(failed(io));
  return r;
}

}  // namespace

void attach_socket_io(SocketIo* io, Transport transport) {
  if (transport == Transport::fd) {
    gnutls_transport_set_int(io->session, io->fd);
    return;
  }
  gnutls_transport_set_ptr(io->session, io);
  gnutls_transport_set_vec_push_function(io->session, push);
  gnutls_transport_set_pull_function(io->session, pull);
  gnutls_transport_set_pull_timeout_function(io->session, pull_timeout);
}

}  // namespace tlsgnu
