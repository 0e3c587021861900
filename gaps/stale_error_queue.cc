// gaps/stale_error_queue: OpenSSL's error queue belongs to the thread, not to the SSL
// object. A failed handshake on one connection leaves its error queued; SSL_get_error
// on another, healthy connection of the same thread then reports SSL_ERROR_SSL (CCF's
// "server disconnected"), unless ERR_clear_error() runs before the call.
#include <thread>

#include "gaplib.h"

namespace {

// SSL_read on a healthy connection with nothing to read, without clearing the queue
// first: what SSL_get_error says about it.
std::string read_without_clear(SSL* ssl) {
  char buf[256];
  int n = SSL_read(ssl, buf, sizeof buf);
  return gap::ssl_error_name(SSL_get_error(ssl, n));
}

}  // namespace

int main(int argc, char** argv) {
  gap::init(argc, argv);
  gap::Ctx cctx = gap::client_ctx();
  gap::Ctx good = gap::server_ctx("leaf-ecdsa");
  gap::Ctx other = gap::server_ctx("wronghost");
  gap::Observation obs;

  // Connection B: healthy, handshake done, nothing sent to it yet.
  gap::Link b = gap::link(cctx.get(), good.get());
  if (gap::handshake(b) != "ok") gap::die("healthy handshake failed");
  gap::client_read_once(b);  // consume the TLS 1.3 tickets, so B is plainly idle

  // Connection A: fails verification (other.test served for hooks.test); its error stays.
  gap::Link a = gap::link(cctx.get(), other.get());
  SSL_set1_host(a.client.get(), "hooks.test");
  gap::handshake(a);
  obs.add("queued_by_A", gap::reason_name(ERR_peek_error()));

  obs.add("B_without_clear", read_without_clear(b.client.get()));
  std::string elsewhere;
  std::thread([&] { elsewhere = read_without_clear(b.client.get()); }).join();
  obs.add("B_on_another_thread", elsewhere);
  ERR_clear_error();
  obs.add("B_after_ERR_clear_error", read_without_clear(b.client.get()));
  return obs.print();
}
