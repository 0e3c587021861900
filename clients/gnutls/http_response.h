// One HTTP/1.1 response, fed in pieces of any size: the status line, the headers, then exactly
// Content-Length bytes of body. Transfer-Encoding is reported (chunked), not decoded or hung on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tlsgnu {

class HttpResponse {
 public:
  enum class State { status_line, headers, body, complete, chunked, malformed };

  // Consumes bytes of this response; returns how many it used (the rest are not its own).
  size_t feed(const uint8_t* data, size_t len);
  State state() const { return state_; }
  bool finished() const { return state_ == State::complete || state_ == State::chunked || state_ == State::malformed; }
  int status() const { return status_; }
  const std::string& error() const { return error_; }
  void reset() { *this = HttpResponse(); }

 private:
  static constexpr size_t max_line = 8192;
  void line_done();
  void status_line_done();
  void header_done();
  void fail(State state, std::string why);

  State state_ = State::status_line;
  std::string line_;
  int status_ = 0;
  long content_length_ = -1;
  long body_left_ = 0;
  std::string error_;
};

}  // namespace tlsgnu
