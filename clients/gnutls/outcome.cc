#include "outcome.h"

#include <cstring>

namespace tlsgnu {

const char* stage_name(Stage stage) {
  switch (stage) {
    case Stage::ok: return "ok";
    case Stage::connect: return "connect";
    case Stage::handshake: return "handshake";
    case Stage::write: return "write";
    case Stage::read: return "read";
    case Stage::setup: return "setup";
    case Stage::deadline: return "deadline";
  }
  return "unknown";
}

std::string Outcome::key() const { return std::string(stage_name(stage)) + "/" + std::to_string(detail); }

Outcome make_outcome(Stage stage, long detail, std::string text) {
  Outcome o;
  o.stage = stage;
  o.detail = detail;
  o.text = std::move(text);
  return o;
}

Outcome errno_outcome(Stage stage, int err) { return make_outcome(stage, err, std::strerror(err)); }

Outcome setup_outcome(SetupFailure what, const std::string& why) {
  static const char* const names[] = {"",
                                      "gnutls_init failed",
                                      "gnutls_priority_set failed",
                                      "socket() failed",
                                      "gnutls_credentials_set failed",
                                      "gnutls_session_set_verify_cert2 failed",
                                      "gnutls_server_name_set failed",
                                      "epoll_ctl failed",
                                      "out of memory",
                                      "credentials or priorities could not be made",
                                      "gnutls_session_set_data failed"};
  auto index = static_cast<long>(what);
  std::string text = names[index];
  if (!why.empty()) text += ": " + why;
  return make_outcome(Stage::setup, index, std::move(text));
}

}  // namespace tlsgnu
