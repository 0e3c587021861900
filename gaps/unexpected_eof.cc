// gaps/unexpected_eof: a peer that closes TCP without close_notify may have been cut
// short. OpenSSL 3 reports it as SSL_ERROR_SSL with SSL_R_UNEXPECTED_EOF_WHILE_READING;
// with SSL_OP_IGNORE_UNEXPECTED_EOF the truncation reads exactly like close_notify
// (SSL_ERROR_ZERO_RETURN), so a reader can no longer tell a cut stream from a whole one.
#include "gaplib.h"

namespace {

// The server sends 5 bytes and ends the stream, with or without close_notify; the
// client (socket BIO, as the fd transport) reads to the end.
std::string read_after_close(SSL_CTX* cctx, SSL_CTX* sctx, bool close_notify, long client_options) {
  auto [cfd, sfd] = gap::tcp_pair();
  gap::set_nonblocking(cfd.get());
  gap::set_nonblocking(sfd.get());
  gap::Ssl client(SSL_new(cctx)), server(SSL_new(sctx));
  SSL_set_options(client.get(), client_options);
  SSL_set_fd(client.get(), cfd.get());
  SSL_set_fd(server.get(), sfd.get());
  SSL_set_connect_state(client.get());
  SSL_set_accept_state(server.get());
  if (!gap::handshake_both(client.get(), server.get(), cfd.get(), sfd.get())) gap::die("handshake failed");
  ERR_clear_error();
  if (SSL_write(server.get(), "hello", 5) != 5) gap::die("server write failed");
  if (close_notify) SSL_shutdown(server.get());
  server.reset();
  sfd.reset();
  gap::Drained d = gap::read_to_end(client.get(), cfd.get());
  return std::to_string(d.bytes) + "," + d.end;
}

}  // namespace

int main(int argc, char** argv) {
  gap::init(argc, argv);
  gap::Ctx cctx = gap::client_ctx();
  gap::Ctx sctx = gap::server_ctx();
  gap::Observation obs;
  obs.add("no_close_notify", read_after_close(cctx.get(), sctx.get(), false, 0));
  obs.add("no_close_notify+IGNORE_UNEXPECTED_EOF",
          read_after_close(cctx.get(), sctx.get(), false, SSL_OP_IGNORE_UNEXPECTED_EOF));
  obs.add("close_notify", read_after_close(cctx.get(), sctx.get(), true, 0));
  return obs.print();
}
