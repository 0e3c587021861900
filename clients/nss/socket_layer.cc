#include "socket_layer.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <prerror.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace tlsnss {

namespace {

// The socket lives in the layer's `secret`, as a stub layer's private data does.
int socket_of(PRFileDesc* fd) { return static_cast<int>(reinterpret_cast<intptr_t>(fd->secret)); }

PRInt32 failed() {
  int e = errno;
  PRErrorCode code = e == EAGAIN || e == EWOULDBLOCK       ? PR_WOULD_BLOCK_ERROR
                     : e == ECONNRESET || e == EPIPE        ? PR_CONNECT_RESET_ERROR  // NSPR's own mapping of both
                     : e == ENOTCONN                        ? PR_NOT_CONNECTED_ERROR
                     : e == EINTR                           ? PR_PENDING_INTERRUPT_ERROR
                     : e == ENOMEM || e == ENOBUFS          ? PR_INSUFFICIENT_RESOURCES_ERROR
                                                            : PR_UNKNOWN_ERROR;
  PR_SetError(code, e);
  return -1;
}

PRInt32 PR_CALLBACK layer_recv(PRFileDesc* fd, void* buf, PRInt32 amount, PRIntn flags, PRIntervalTime) {
  ssize_t n = ::recv(socket_of(fd), buf, static_cast<size_t>(amount), flags == PR_MSG_PEEK ? MSG_PEEK : 0);
  return n >= 0 ? static_cast<PRInt32>(n) : failed();
}

PRInt32 PR_CALLBACK layer_send(PRFileDesc* fd, const void* buf, PRInt32 amount, PRIntn, PRIntervalTime) {
  ssize_t n = ::send(socket_of(fd), buf, static_cast<size_t>(amount), MSG_NOSIGNAL);
  return n >= 0 ? static_cast<PRInt32>(n) : failed();
}

PRInt32 PR_CALLBACK layer_read(PRFileDesc* fd, void* buf, PRInt32 amount) {
  return layer_recv(fd, buf, amount, 0, PR_INTERVAL_NO_WAIT);
}

PRInt32 PR_CALLBACK layer_write(PRFileDesc* fd, const void* buf, PRInt32 amount) {
  return layer_send(fd, buf, amount, 0, PR_INTERVAL_NO_WAIT);
}

PRStatus PR_CALLBACK layer_close(PRFileDesc* fd) {
  fd->secret = nullptr;  // the socket is the attempt's to close
  fd->dtor(fd);
  return PR_SUCCESS;
}

PRStatus PR_CALLBACK layer_shutdown(PRFileDesc* fd, PRIntn how) {
  return ::shutdown(socket_of(fd), how) == 0 ? PR_SUCCESS : (failed(), PR_FAILURE);
}

PRStatus address_of(int (*get)(int, sockaddr*, socklen_t*), PRFileDesc* fd, PRNetAddr* addr) {
  sockaddr_in sin{};
  socklen_t len = sizeof sin;
  if (get(socket_of(fd), reinterpret_cast<sockaddr*>(&sin), &len) != 0) return failed(), PR_FAILURE;
  std::memset(addr, 0, sizeof *addr);
  addr->inet.family = PR_AF_INET;
  addr->inet.port = sin.sin_port;
  addr->inet.ip = sin.sin_addr.s_addr;
  return PR_SUCCESS;
}

PRStatus PR_CALLBACK layer_peer(PRFileDesc* fd, PRNetAddr* addr) { return address_of(::getpeername, fd, addr); }
PRStatus PR_CALLBACK layer_name(PRFileDesc* fd, PRNetAddr* addr) { return address_of(::getsockname, fd, addr); }

PRStatus PR_CALLBACK layer_get_option(PRFileDesc*, PRSocketOptionData* data) {
  if (data->option == PR_SockOpt_Nonblocking) {
    data->value.non_blocking = PR_TRUE;  // the base made it so
    return PR_SUCCESS;
  }
  PR_SetError(PR_NOT_IMPLEMENTED_ERROR, 0);
  return PR_FAILURE;
}

PRStatus PR_CALLBACK layer_set_option(PRFileDesc* fd, const PRSocketOptionData* data) {
  if (data->option == PR_SockOpt_NoDelay) {
    int on = data->value.no_delay ? 1 : 0;
    return setsockopt(socket_of(fd), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) == 0 ? PR_SUCCESS
                                                                                       : (failed(), PR_FAILURE);
  }
  if (data->option == PR_SockOpt_Nonblocking && data->value.non_blocking) return PR_SUCCESS;
  PR_SetError(PR_NOT_IMPLEMENTED_ERROR, 0);
  return PR_FAILURE;
}

// The bottom of the stack: what the layers above ask for is what epoll is told to wait for.
PRInt16 PR_CALLBACK layer_poll(PRFileDesc*, PRInt16 in_flags, PRInt16* out_flags) {
  *out_flags = 0;
  return in_flags;
}

const PRIOMethods* methods() {
  static const PRIOMethods table = [] {
    PRIOMethods m = *PR_GetDefaultIOMethods();
    m.file_type = PR_DESC_SOCKET_TCP;
    m.close = layer_close;
    m.read = layer_read;
    m.write = layer_write;
    m.recv = layer_recv;
    m.send = layer_send;
    m.shutdown = layer_shutdown;
    m.getpeername = layer_peer;
    m.getsockname = layer_name;
    m.getsocketoption = layer_get_option;
    m.setsocketoption = layer_set_option;
    m.poll = layer_poll;
    return m;
  }();
  return &table;
}

}  // namespace

PRFileDesc* socket_layer(int socket_fd) {
  static const PRDescIdentity identity = PR_GetUniqueIdentity("tlsnb-nss socket");
  PRFileDesc* fd = PR_CreateIOLayerStub(identity, methods());
  if (fd != nullptr) fd->secret = reinterpret_cast<PRFilePrivate*>(static_cast<intptr_t>(socket_fd));
  return fd;
}

}  // namespace tlsnss
