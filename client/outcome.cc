#include "outcome.h"

#include <cerrno>
#include <cstring>

namespace tlsnb {

const char* stage_name(Stage stage) {
  switch (stage) {
    case Stage::ok: return "ok";
    case Stage::connect: return "connect";
    case Stage::handshake: return "handshake";
    case Stage::write: return "write";
    case Stage::read: return "read";
    case Stage::setup: return "setup";
    case Stage::lookup: return "lookup";
    case Stage::refused: return "refused";
    case Stage::deadline: return "deadline";
  }
  return "unknown";
}

std::string Outcome::key() const {
  return std::string(stage_name(stage)) + "/" + std::to_string(detail);
}

Outcome make_outcome(Stage stage, long detail, std::string text) {
  Outcome o;
  o.stage = stage;
  o.detail = detail;
  o.text = std::move(text);
  return o;
}

Outcome errno_outcome(Stage stage, int err) {
  return make_outcome(stage, err, std::strerror(err));
}

Outcome setup_outcome(SetupFailure what) {
  static const char* const names[] = {"", "SSL_new failed", "BIO_new failed", "socket() failed",
                                      "SSL_set_fd failed", "SSL_set1_host failed", "SNI could not be set",
                                      "epoll_ctl failed", "out of memory", "SSL_CTX could not be made",
                                      "session could not be set"};
  auto index = static_cast<long>(what);
  return make_outcome(Stage::setup, index, names[index]);
}

Outcome peer_closed_outcome(int err) {
  std::string text = "peer closed the connection without an alert";
  if (err != 0) text += std::string(" (") + std::strerror(err) + ")";
  return make_outcome(Stage::handshake, details::peer_closed, std::move(text));
}

Outcome connect_failure_outcome(int err) {
  return err == ECONNRESET || err == EPIPE ? peer_closed_outcome(err) : errno_outcome(Stage::connect, err);
}

}  // namespace tlsnb
