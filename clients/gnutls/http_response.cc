#include "http_response.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace tlsgnu {

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
  while (used < len && !finished()) {
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
    line_done();
    line_.clear();
  }
  return used;
}

void HttpResponse::line_done() {
  if (state_ == State::status_line) status_line_done();
  else header_done();
}

// "HTTP/1.1 200 OK"
void HttpResponse::status_line_done() {
  if (line_.rfind("HTTP/1.", 0) != 0 || line_.size() < 12 || line_[8] != ' ') return fail(State::malformed, "bad status line");
  for (size_t i = 9; i < 12; ++i)
    if (!std::isdigit(static_cast<unsigned char>(line_[i]))) return fail(State::malformed, "bad status code");
  status_ = (line_[9] - '0') * 100 + (line_[10] - '0') * 10 + (line_[11] - '0');
  state_ = State::headers;
}

void HttpResponse::header_done() {
  if (line_.empty()) {  // the end of the headers
    if (content_length_ < 0) {
      bool bodyless = status_ == 204 || status_ == 304 || (status_ >= 100 && status_ < 200);
      if (!bodyless) return fail(State::malformed, "no Content-Length");
      content_length_ = 0;
    }
    body_left_ = content_length_;
    state_ = body_left_ == 0 ? State::complete : State::body;
    return;
  }
  auto colon = line_.find(':');
  if (colon == std::string::npos) return fail(State::malformed, "header without a colon");
  std::string name = lower(trim(line_.substr(0, colon)));
  std::string value = trim(line_.substr(colon + 1));
  if (name == "transfer-encoding" && lower(value) != "identity") {
    fail(State::chunked, "Transfer-Encoding: " + value + " is not supported");
  } else if (name == "content-length") {
    errno = 0;
    char* end = nullptr;
    long n = std::strtol(value.c_str(), &end, 10);
    if (value.empty() || errno != 0 || *end != '\0' || n < 0 || (content_length_ >= 0 && n != content_length_))
      fail(State::malformed, "bad Content-Length");
    else content_length_ = n;
  }
}

void HttpResponse::fail(State state, std::string why) {
  state_ = state;
  error_ = std::move(why);
}

}  // namespace tlsgnu
