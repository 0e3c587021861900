#include "http_response.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace tlsnb {

namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

std::string trim(const std::string& text) {
  size_t b = text.find_first_not_of(" \t");
  size_t e = text.find_last_not_of(" \t");
  return b == std::string::npos ? "" : text.substr(b, e - b + 1);
}

}  // namespace

size_t HttpResponse::feed(const uint8_t* data, size_t len) {
  size_t used = 0;
  while (used < len && !done()) {
    if (state_ == State::body) {
      size_t take = std::min<size_t>(static_cast<size_t>(body_left_), len - used);
      body_left_ -= static_cast<long>(take);
      used += take;
      if (body_left_ == 0) state_ = State::complete;
      continue;
    }
    char c = static_cast<char>(data[used++]);
    if (c != '\n') {
      if (line_.size() >= max_line) fail(State::malformed, "header line longer than 8192 bytes");
      else line_.push_back(c);
      continue;
    }
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();
    take_line();
    line_.clear();
  }
  return used;
}

void HttpResponse::take_line() {
  if (state_ == State::status_line) take_status_line();
  else take_header();
}

void HttpResponse::take_status_line() {
  // "HTTP/1.1 200 OK"
  if (line_.rfind("HTTP/1.", 0) != 0 || line_.size() < 12 || line_[8] != ' ') {
    fail(State::malformed, "bad status line");
    return;
  }
  for (size_t i = 9; i < 12; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(line_[i]))) {
      fail(State::malformed, "bad status code");
      return;
    }
  }
  status_ = std::atoi(line_.substr(9, 3).c_str());
  state_ = State::headers;
}

void HttpResponse::take_header() {
  if (line_.empty()) {  // end of headers
    // RFC 9112 6.3: a response with both framings may be smuggling or splitting: an error, whichever comes first
    if (!transfer_encoding_.empty() && content_length_ >= 0) {
      fail(State::malformed, "both Transfer-Encoding and Content-Length");
      return;
    }
    if (!transfer_encoding_.empty() && lower(transfer_encoding_) != "identity") {
      fail(State::chunked, "Transfer-Encoding: " + transfer_encoding_ + " is not supported");
      return;
    }
    if (content_length_ < 0) {
      if (status_ == 204 || status_ == 304 || (status_ >= 100 && status_ < 200)) content_length_ = 0;
      else {
        fail(State::malformed, "no Content-Length");
        return;
      }
    }
    body_left_ = content_length_;
    state_ = body_left_ == 0 ? State::complete : State::body;
    return;
  }
  auto colon = line_.find(':');
  if (colon == std::string::npos) {
    fail(State::malformed, "header without a colon");
    return;
  }
  std::string name = lower(trim(line_.substr(0, colon)));
  std::string value = trim(line_.substr(colon + 1));
  if (name == "transfer-encoding") {
    transfer_encoding_ += (transfer_encoding_.empty() ? "" : ", ") + value;
  } else if (name == "content-length") {
    char* end = nullptr;
    long n = std::strtol(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || n < 0 || (content_length_ >= 0 && n != content_length_))
      fail(State::malformed, "bad Content-Length");
    else content_length_ = n;
  }
}

void HttpResponse::fail(State state, std::string why) {
  state_ = state;
  error_ = std::move(why);
}

}  // namespace tlsnb
