// DNS over TCP (RFC 1035 4.2.2): every message goes behind a 2-octet length.
// FrameReader reassembles whole messages from chunks of any size, as the socket gives them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "dns_error.h"
#include "dns_name.h"

namespace dns {

// The length prefix, then the message. Empty for a message over 65535 octets or of none.
std::vector<uint8_t> frame(Span message);

class FrameReader {
 public:
  // Takes the next chunk of the stream, of any size (0 included). ok, or frame_empty once a
  // length prefix of 0 has been read: the stream is then unusable and every later call says so.
  int feed(Span chunk);

  // Moves the oldest whole message into `message`; false when none is whole yet.
  bool pop(std::vector<uint8_t>& message);

  // The peer closed the stream: ok when it ended between two messages, frame_cut when it
  // ended inside one (inside its length or its body), frame_empty after a zero length.
  int finish() const;

  size_t whole() const { return whole_.size(); }

 private:
  enum class State { length_high, length_low, body, failed };

  size_t advance_length_high(Span chunk, size_t at);
  size_t advance_length_low(Span chunk, size_t at);
  size_t advance_body(Span chunk, size_t at);

  State state_ = State::length_high;
  size_t length_ = 0;  // of the message being read
  std::vector<uint8_t> body_;
  std::deque<std::vector<uint8_t>> whole_;
};

}  // namespace dns
