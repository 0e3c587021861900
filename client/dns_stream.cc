#include "dns_stream.h"

#include <algorithm>
#include <cstring>

namespace dns {

std::vector<uint8_t> frame(Span message) {
  if (message.size == 0 || message.size > 0xFFFF) return {};
  std::vector<uint8_t> out;
  out.reserve(2 + message.size);
  out.push_back(static_cast<uint8_t>(message.size >> 8));
  out.push_back(static_cast<uint8_t>(message.size));
  out.insert(out.end(), message.data, message.data + message.size);
  return out;
}

int FrameReader::feed(Span chunk) {
  size_t at = 0;
  while (at < chunk.size && state_ != State::failed) {
    switch (state_) {
      case State::length_high:
        at = advance_length_high(chunk, at);
        break;
      case State::length_low:
        at = advance_length_low(chunk, at);
        break;
      case State::body:
        at = advance_body(chunk, at);
        break;
      case State::failed:
        break;
    }
  }
  return state_ == State::failed ? frame_empty : ok;
}

size_t FrameReader::advance_length_high(Span chunk, size_t at) {
  length_ = static_cast<size_t>(chunk.data[at]) << 8;
  state_ = State::length_low;
  return at + 1;
}

size_t FrameReader::advance_length_low(Span chunk, size_t at) {
  length_ |= chunk.data[at];
  // A zero length frames nothing: no DNS message is empty (RFC 1035 4.2.2).
  state_ = length_ == 0 ? State::failed : State::body;
  body_.clear();
  body_.reserve(length_);  // room, not zeroes: a length alone costs no page
  return at + 1;
}

size_t FrameReader::advance_body(Span chunk, size_t at) {
  size_t filled = body_.size();
  size_t take = std::min(length_ - filled, chunk.size - at);
  body_.resize(filled + take);
  std::memcpy(body_.data() + filled, chunk.data + at, take);
  if (body_.size() == length_) {
    whole_.push_back(std::move(body_));
    body_ = {};
    state_ = State::length_high;
  }
  return at + take;
}

bool FrameReader::pop(std::vector<uint8_t>& message) {
  if (whole_.empty()) return false;
  message = std::move(whole_.front());
  whole_.pop_front();
  return true;
}

int FrameReader::finish() const {
  switch (state_) {
    case State::length_high:
      return ok;
    case State::failed:
      return frame_empty;
    default:
      return frame_cut;
  }
}

}  // namespace dns
