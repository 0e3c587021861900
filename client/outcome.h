// Every attempt ends in exactly one Outcome: (stage, detail). Names and numbers are stable API:
// every gate, and every client put under the lab, is compared by them.
#pragma once

#include <string>

namespace tlsnb {

enum class Stage : int {
  ok = 0,
  connect = 1,    // detail: errno
  handshake = 2,  // detail: X509_V_ERR_*, else first OpenSSL error, -1 peer closed without an alert
  write = 3,      // detail: OpenSSL error code or errno
  read = 4,       // detail: OpenSSL error code or errno; -1 truncation; -2 chunked; -3 malformed; 0 close_notify early
  setup = 5,      // detail: SetupFailure
  lookup = 6,     // detail: a negative resolver code (dns_message.h)
  refused = 7,    // detail: the refused IPv4 address, packed (host order); refused_ipv6 for IPv6
  deadline = 102, // detail: the stage that was running
};

const char* stage_name(Stage stage);

// Details with a meaning of their own (beside errno, OpenSSL and X509 codes).
namespace details {
constexpr long peer_closed = -1;     // handshake: closed without an alert; read: closed without close_notify
constexpr long http_chunked = -2;    // read: Transfer-Encoding the client does not implement
constexpr long http_malformed = -3;  // read: not an HTTP/1.1 response it can delimit
constexpr long early_close_notify = 0;  // read: close_notify before the response was complete
constexpr long refused_ipv6 = -6;    // refused: an IPv6 address (16 octets do not fit), named in the text
}  // namespace details

// What could not be made (stage setup).
enum class SetupFailure : long {
  ssl_new = 1,
  bio_new = 2,
  socket = 3,
  set_fd = 4,
  set_host = 5,
  sni = 6,
  epoll = 7,
  out_of_memory = 8,
  context = 9,
  session = 10,
};

struct Outcome {
  Stage stage = Stage::ok;
  long detail = 0;
  std::string text;     // detail_text: X509 or OpenSSL reason, strerror, or ours
  int verify_depth = -1;  // depth of the certificate OpenSSL reported a verify error for

  bool ok() const { return stage == Stage::ok; }
  std::string key() const;  // "handshake/10"
};

Outcome make_outcome(Stage stage, long detail, std::string text);
Outcome errno_outcome(Stage stage, int err);
Outcome setup_outcome(SetupFailure what);
// handshake/-1: the peer closed (FIN, RST or EPIPE; `err` 0 when no errno says which) without an alert.
Outcome peer_closed_outcome(int err);
// A connect's SO_ERROR: connect/errno, except that a reset needs an established connection, so
// ECONNRESET or EPIPE there is the peer closing before the handshake (peer_closed_outcome).
Outcome connect_failure_outcome(int err);

}  // namespace tlsnb
