// gaps/trantor_shutdown: Trantor's old shutdown() closed the socket at once: application
// data still in its send queue was lost and no close_notify was sent, so the peer saw a
// truncated stream. A shutdown that first flushes the queue, then sends close_notify,
// then closes, delivers every byte and ends cleanly.
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <tuple>

#include "gaplib.h"

namespace {

constexpr size_t kTotal = 1 << 20;  // far more than the two socket buffers hold

struct Conn {
  gap::Fd cfd, sfd;
  gap::Ssl client, server;
};

// A handshaken connection over loopback with small buffers, so a write fills them fast.
Conn open_conn(SSL_CTX* cctx, SSL_CTX* sctx) {
  Conn k;
  std::tie(k.cfd, k.sfd) = gap::tcp_pair([](int listener, int client) {
    int small = 16384;
    setsockopt(listener, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    setsockopt(client, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
  });
  gap::set_nonblocking(k.cfd.get());
  gap::set_nonblocking(k.sfd.get());
  k.client.reset(SSL_new(cctx));
  k.server.reset(SSL_new(sctx));
  SSL_set_fd(k.client.get(), k.cfd.get());
  SSL_set_fd(k.server.get(), k.sfd.get());
  SSL_set_connect_state(k.client.get());
  SSL_set_accept_state(k.server.get());
  if (!gap::handshake_both(k.client.get(), k.server.get(), k.cfd.get(), k.sfd.get())) gap::die("handshake failed");
  return k;
}

// SSL_write from the application's queue while the socket takes it; returns the new offset.
size_t write_while_writable(SSL* c, const std::string& queue, size_t from) {
  while (from < queue.size()) {
    ERR_clear_error();
    int n = SSL_write(c, queue.data() + from, static_cast<int>(std::min<size_t>(16384, queue.size() - from)));
    if (n <= 0) break;
    from += static_cast<size_t>(n);
  }
  return from;
}

void read_available(SSL* s, size_t* received) {
  size_t before;
  do {
    before = *received;
    gap::read_some(s, received);
  } while (*received != before);
}

std::string received(const gap::Drained& d) {
  return std::string(d.bytes == kTotal ? "all" : "partial") + "," + d.end;
}

// Trantor's old shutdown(): the socket is closed with the queue still holding data.
std::string close_now(SSL_CTX* cctx, SSL_CTX* sctx) {
  Conn k = open_conn(cctx, sctx);
  std::string queue(kTotal, 't');
  size_t sent = write_while_writable(k.client.get(), queue, 0);
  gap::figure("close_now.queued_at_close", std::to_string(kTotal - sent));
  k.client.reset();
  k.cfd.reset();
  gap::Drained d = gap::read_to_end(k.server.get(), k.sfd.get());
  gap::figure("close_now.received", std::to_string(d.bytes));
  return received(d);
}

// Flush the queue (the peer reads meanwhile), then close_notify, then close.
std::string flush_then_close(SSL_CTX* cctx, SSL_CTX* sctx) {
  Conn k = open_conn(cctx, sctx);
  std::string queue(kTotal, 't');
  size_t sent = 0, got = 0;
  bool notified = false;
  for (double end = gap::now_ms() + 5000; !notified && gap::now_ms() < end;) {
    sent = write_while_writable(k.client.get(), queue, sent);
    if (sent == kTotal) {
      ERR_clear_error();
      notified = SSL_shutdown(k.client.get()) >= 0;  // < 0: the socket is full, retry
    }
    read_available(k.server.get(), &got);
    pollfd p[2] = {{k.cfd.get(), POLLOUT, 0}, {k.sfd.get(), POLLIN, 0}};
    poll(p, 2, 50);
  }
  if (!notified) gap::die("the queue never drained");
  k.client.reset();
  k.cfd.reset();
  gap::Drained d = gap::read_to_end(k.server.get(), k.sfd.get());
  d.bytes += got;
  return received(d);
}

}  // namespace

int main(int argc, char** argv) {
  gap::init(argc, argv);
  gap::Ctx cctx = gap::client_ctx();
  gap::Ctx sctx = gap::server_ctx();
  // No TLS 1.3 tickets: a close with unread input (a ticket Nagle held back) sends a reset
  // instead of a FIN, which loses even the kernel's queue and makes the count vary.
  SSL_CTX_set_num_tickets(sctx.get(), 0);
  gap::Observation obs;
  obs.add("close_with_queue", close_now(cctx.get(), sctx.get()));
  obs.add("flush+close_notify+close", flush_then_close(cctx.get(), sctx.get()));
  return obs.print();
}
