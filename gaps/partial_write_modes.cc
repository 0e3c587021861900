// gaps/partial_write_modes: after SSL_write says "want write", OpenSSL expects the retry
// to pass the same buffer address; a buffer that moved (a std::string that grew, a queue
// that compacted) fails with "bad write retry" unless SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER. Without SSL_MODE_ENABLE_PARTIAL_WRITE a
// large write is all or nothing: the call says "want write" until every record is out,
// though records have gone; with it, a call returns as soon as a whole record went out.
#include "gaplib.h"

namespace {

constexpr size_t kLen = 100000;  // several 16 KiB records

// A handshaken link whose client output holds `wire` bytes, with `mode` set on the client.
gap::Link connect(SSL_CTX* cctx, SSL_CTX* sctx, size_t wire, long mode) {
  gap::Link l = gap::link(cctx, sctx, wire);
  if (gap::handshake(l) != "ok") gap::die("handshake failed");
  SSL_set_mode(l.client.get(), mode);
  return l;
}

// One SSL_write of kLen bytes from `buf`: "ok:<n>", "WANT_WRITE" or "SSL:<reason>".
std::string write_once(gap::Link& l, const char* buf) {
  ERR_clear_error();
  int n = SSL_write(l.client.get(), buf, static_cast<int>(kLen));
  if (n > 0) return "ok:" + std::to_string(n);
  int e = SSL_get_error(l.client.get(), n);
  return e == SSL_ERROR_SSL ? "SSL:" + gap::reason_name(ERR_peek_error()) : gap::ssl_error_name(e);
}

// Retries (draining the wire between calls) until the write stops saying "want write".
std::string retry_until_done(gap::Link& l, const char* buf) {
  for (int attempt = 0; attempt < 1000; ++attempt) {
    l.pump();
    std::string r = write_once(l, buf);
    if (r != "WANT_WRITE") return r;
  }
  return "never_done";
}

// The first SSL_write meets "want write"; the retry passes a copy of the same bytes.
std::string moved_retry(SSL_CTX* cctx, SSL_CTX* sctx, long mode) {
  gap::Link l = connect(cctx, sctx, 4096, mode);
  std::string first(kLen, 'q'), moved(first);
  std::string r = write_once(l, first.data());
  if (r != "WANT_WRITE") return "first_call:" + r;
  return retry_until_done(l, moved.data());
}

// The same buffer throughout: what the first call returns, then what the retries reach.
std::string same_buffer(SSL_CTX* cctx, SSL_CTX* sctx, size_t wire, long mode) {
  gap::Link l = connect(cctx, sctx, wire, mode);
  std::string data(kLen, 'q');
  std::string first = write_once(l, data.data());
  return first == "WANT_WRITE" ? first + "," + retry_until_done(l, data.data()) : first;
}

}  // namespace

int main(int argc, char** argv) {
  gap::init(argc, argv);
  gap::Ctx cctx = gap::client_ctx();
  gap::Ctx sctx = gap::server_ctx();
  SSL_CTX* c = cctx.get();
  SSL_CTX* s = sctx.get();
  const long partial = SSL_MODE_ENABLE_PARTIAL_WRITE;
  gap::Observation obs;
  obs.add("moved_retry", moved_retry(c, s, 0));
  obs.add("moved_retry+ACCEPT_MOVING_WRITE_BUFFER", moved_retry(c, s, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER));
  // A 32 KiB wire takes two whole records of the 100000 bytes, not all of them.
  obs.add("write_100000@32KiB", same_buffer(c, s, 32768, 0));
  obs.add("write_100000@32KiB+ENABLE_PARTIAL_WRITE", same_buffer(c, s, 32768, partial));
  // A 4 KiB wire never takes a whole record in one call: partial mode then returns nothing early.
  obs.add("write_100000@4KiB+ENABLE_PARTIAL_WRITE", same_buffer(c, s, 4096, partial));
  return obs.print();
}
