// gaps/int_result_unsigned: SSL_read returns int, and -1 means "no bytes" (see
// SSL_get_error). Kept in a size_t or an unsigned it becomes a huge count, and the usual
// `if (n <= 0)` error test is false: a failed read is taken for data. The C++ form of the
// seed's finding that a C int read as 64 bits turned -1 into 4294967295.
#include "gaplib.h"

int main(int argc, char** argv) {
  gap::init(argc, argv);
  gap::Ctx cctx = gap::client_ctx();
  gap::Ctx sctx = gap::server_ctx();
  gap::Link l = gap::link(cctx.get(), sctx.get());
  if (gap::handshake(l) != "ok") gap::die("handshake failed");
  gap::client_read_once(l);  // the TLS 1.3 tickets: now nothing is left to read
  SSL* c = l.client.get();
  char buf[256];
  gap::Observation obs;

  ERR_clear_error();
  int as_int = SSL_read(c, buf, sizeof buf);
  obs.add("int", std::to_string(as_int));
  obs.add("int.SSL_get_error", gap::ssl_error_name(SSL_get_error(c, as_int)));

  // The mistake under test: the int result stored unsigned (no warning under -Wall -Wextra).
  ERR_clear_error();
  size_t as_size = SSL_read(c, buf, sizeof buf);
  obs.add("size_t", std::to_string(as_size));
  obs.add("size_t.n<=0", as_size <= 0 ? "true" : "false");

  ERR_clear_error();
  unsigned as_unsigned = SSL_read(c, buf, sizeof buf);
  obs.add("unsigned", std::to_string(as_unsigned));
  obs.add("unsigned.n<=0", as_unsigned <= 0 ? "true" : "false");
  return obs.print();
}
