// gaps/socket_bio_sigpipe: OpenSSL's socket BIO writes with write(2), so writing to a
// peer that has gone raises SIGPIPE and kills a process with the default disposition;
// the memory-BIO path sends its ciphertext with send(MSG_NOSIGNAL) and gets EPIPE.
//
// Each variant runs in a forked child with SIGPIPE at its default: "killed:SIGPIPE" or
// "survived:<errno of the failing write>".
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>

#include <cerrno>

#include "gaplib.h"

namespace {

using gap::Ctx;

// Blocks until the peer's reset has arrived (POLLHUP/POLLERR), so the next write meets it.
void await_reset(int fd) {
  pollfd p = {fd, 0, 0};
  double end = gap::now_ms() + 2000;
  while (gap::now_ms() < end && !(p.revents & (POLLHUP | POLLERR))) poll(&p, 1, 50);
}

// Writes one byte of application data twice: the first write draws the reset from the
// closed peer, the second meets it. Returns the errno of a failed write, 0 if both worked.
int write_twice(const std::function<int()>& write_once, int fd) {
  if (write_once() < 0) return errno;
  await_reset(fd);
  if (write_once() < 0) return errno;
  return 0;
}

// OpenSSL's socket BIO (SSL_set_fd), as the fd transport uses it.
int socket_bio(SSL_CTX* cctx, SSL_CTX* sctx, bool ignore_sigpipe) {
  if (ignore_sigpipe) signal(SIGPIPE, SIG_IGN);
  auto [cfd, sfd] = gap::tcp_pair();
  gap::set_nonblocking(cfd.get());
  gap::set_nonblocking(sfd.get());
  gap::Ssl client(SSL_new(cctx)), server(SSL_new(sctx));
  SSL_set_fd(client.get(), cfd.get());
  SSL_set_fd(server.get(), sfd.get());
  SSL_set_connect_state(client.get());
  SSL_set_accept_state(server.get());
  if (!gap::handshake_both(client.get(), server.get(), cfd.get(), sfd.get())) return 100;
  server.reset();
  sfd.reset();  // the peer goes away
  return write_twice([&] {
    ERR_clear_error();
    errno = 0;
    return SSL_write(client.get(), "x", 1) > 0 ? 0 : -1;
  }, cfd.get());
}

// The memory-BIO transport: SSL_write into a memory BIO, then send() the ciphertext.
int memory_bio(SSL_CTX* cctx, SSL_CTX* sctx, int send_flags) {
  gap::Link l = gap::link(cctx, sctx);
  if (gap::handshake(l) != "ok") return 100;
  gap::Fd cfd, sfd;
  std::tie(cfd, sfd) = gap::tcp_pair();
  sfd.reset();  // the peer goes away
  BIO* out = SSL_get_wbio(l.client.get());
  return write_twice([&] {
    ERR_clear_error();
    if (SSL_write(l.client.get(), "x", 1) <= 0) return -1;
    char buf[256];
    int n = BIO_read(out, buf, sizeof buf);
    errno = 0;
    return send(cfd.get(), buf, static_cast<size_t>(n), send_flags) == n ? 0 : -1;
  }, cfd.get());
}

std::string fate(const std::function<int()>& body) {
  std::string status = gap::in_child(body);
  if (status.rfind("exit:", 0) != 0) return status;
  int code = std::stoi(status.substr(5));
  if (code == 0) return "survived:no_error";
  if (code >= 100) return "setup_failed";
  const char* name = strerrorname_np(code);
  return std::string("survived:") + (name ? name : std::to_string(code));
}

}  // namespace

int main(int argc, char** argv) {
  gap::init(argc, argv);
  Ctx cctx = gap::client_ctx();
  Ctx sctx = gap::server_ctx();
  gap::Observation obs;
  obs.add("socket_bio", fate([&] { return socket_bio(cctx.get(), sctx.get(), false); }));
  obs.add("socket_bio+SIG_IGN", fate([&] { return socket_bio(cctx.get(), sctx.get(), true); }));
  obs.add("memory_bio+send_MSG_NOSIGNAL", fate([&] { return memory_bio(cctx.get(), sctx.get(), MSG_NOSIGNAL); }));
  obs.add("memory_bio+send_flags_0", fate([&] { return memory_bio(cctx.get(), sctx.get(), 0); }));
  return obs.print();
}
