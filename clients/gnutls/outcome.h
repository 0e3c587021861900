// Every attempt ends in exactly one Outcome: (stage, detail), the lab's table (clients/README.md).
#pragma once

#include <string>

namespace tlsgnu {

enum class Stage : int {
  ok = 0,
  connect = 1,    // detail: errno
  handshake = 2,  // detail: X509_V_ERR_* number, else OpenSSL's packed SSL_R_* (error_map.h), -1 no alert
  write = 3,      // detail: errno or a packed code
  read = 4,       // detail: errno or a packed code; -1 truncation; -2 chunked; -3 malformed; 0 close_notify early
  setup = 5,      // detail: SetupFailure
  deadline = 102, // detail: the stage that was running
};

const char* stage_name(Stage stage);

namespace details {
constexpr long peer_closed = -1;
constexpr long http_chunked = -2;
constexpr long http_malformed = -3;
constexpr long early_close_notify = 0;
}  // namespace details

// What could not be made (stage setup).
enum class SetupFailure : long {
  session_init = 1,   // gnutls_init
  priority = 2,       // gnutls_priority_set
  socket = 3,
  credentials = 4,    // gnutls_credentials_set
  verify_name = 5,    // unused: gnutls_session_set_verify_cert2 returns nothing to fail on
  sni = 6,            // gnutls_server_name_set
  epoll = 7,
  out_of_memory = 8,
  context = 9,        // the run's credentials or priority cache
  session_data = 10,  // gnutls_session_set_data
};

struct Outcome {
  Stage stage = Stage::ok;
  long detail = 0;
  std::string text;       // detail_text: the library's own words, verbatim
  int verify_depth = -1;  // the certificate the verification error is about, when it can be told

  bool ok() const { return stage == Stage::ok; }
  std::string key() const;  // "handshake/10"
};

Outcome make_outcome(Stage stage, long detail, std::string text);
Outcome errno_outcome(Stage stage, int err);
Outcome setup_outcome(SetupFailure what, const std::string& why = "");

}  // namespace tlsgnu
