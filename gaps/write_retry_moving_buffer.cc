// gaps/write_retry_moving_buffer: after SSL_write says "want write", OpenSSL expects the
// retry to pass the same buffer address; a buffer that moved (a std::string that grew, a
// queue that compacted) fails with "bad write retry" unless
// SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER is set. Without SSL_MODE_ENABLE_PARTIAL_WRITE a
// large write is all or nothing: no byte counts as written until every record is out.
#include "gaplib.h"

namespace {

constexpr size_t kLen = 100000;   // several 16 KiB records
constexpr size_t kWire = 4096;    // the client's output buffer: smaller than one record

struct Writer {
  gap::Ctx& cctx;
  gap::Ctx& sctx;

  gap::Link connect(long mode) {
    gap::Link l = gap::link(cctx.get(), sctx.get(), kWire);
    if (gap::handshake(l) != "ok") gap::die("handshake failed");
    SSL_set_mode(l.client.get(), mode);
    return l;
  }
};

// SSL_write until it returns a count, draining the wire after each "want write";
// `buffer_for(attempt)` is the buffer passed on each attempt.
std::string write_until_done(gap::Link& l, const std::function<const char*(int)>& buffer_for) {
  for (int attempt = 0; attempt < 1000; ++attempt) {
    ERR_clear_error();
    int n = SSL_write(l.client.get(), buffer_for(attempt), static_cast<int>(kLen));
    if (n > 0) return "ok:" + std::to_string(n);
    int e = SSL_get_error(l.client.get(), n);
    if (e != SSL_ERROR_WANT_WRITE) {
      return e == SSL_ERROR_SSL ? "SSL:" + gap::reason_name(ERR_peek_error()) : gap::ssl_error_name(e);
    }
    l.pump();
  }
  return "never_done";
}

// The first SSL_write meets "want write"; the retry passes a copy of the same bytes.
std::string moved_retry(Writer& w, long mode) {
  gap::Link l = w.connect(mode);
  std::string first(kLen, 'q'), moved(first);
  return write_until_done(l, [&](int attempt) { return attempt == 0 ? first.data() : moved.data(); });
}

// The same buffer every time: what the first successful SSL_write returns.
std::string same_buffer(Writer& w, long mode) {
  gap::Link l = w.connect(mode);
  std::string data(kLen, 'q');
  return write_until_done(l, [&](int) { return data.data(); });
}

}  // namespace

int main(int argc, char** argv) {
  gap::init(argc, argv);
  gap::Ctx cctx = gap::client_ctx();
  gap::Ctx sctx = gap::server_ctx();
  Writer w{cctx, sctx};
  gap::Observation obs;
  obs.add("moved_retry", moved_retry(w, 0));
  obs.add("moved_retry+ACCEPT_MOVING_WRITE_BUFFER", moved_retry(w, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER));
  obs.add("write_100000", same_buffer(w, 0));
  obs.add("write_100000+ENABLE_PARTIAL_WRITE", same_buffer(w, SSL_MODE_ENABLE_PARTIAL_WRITE));
  return obs.print();
}
