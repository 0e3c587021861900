// Reads one HTTP/1.1 response, fed in any chunks (down to one byte): status line,
// headers, then exactly Content-Length bytes of body. A chunked body is reported, not hung on;
// a response with both Transfer-Encoding and Content-Length is malformed (RFC 9112 6.3).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tlsnb {

class HttpResponse {
 public:
  enum class State { status_line, headers, body, complete, chunked, malformed };

  // Consumes bytes of this response; returns how many were used (the rest belong to the next one).
  size_t feed(const uint8_t* data, size_t len);
  State state() const { return state_; }
  bool done() const { return state_ == State::complete || state_ == State::chunked || state_ == State::malformed; }
  int status() const { return status_; }
  long content_length() const { return content_length_; }
  const std::string& error() const { return error_; }
  void reset() { *this = HttpResponse(); }

 private:
  static constexpr size_t max_line = 8192;
  void take_line();
  void take_status_line();
  void take_header();
  void fail(State state, std::string why);

  State state_ = State::status_line;
  std::string line_;
  int status_ = 0;
  long content_length_ = -1;
  long body_left_ = 0;
  std::string transfer_encoding_;  // every Transfer-Encoding value, judged at the end of the headers
  std::string error_;
};

}  // namespace tlsnb
