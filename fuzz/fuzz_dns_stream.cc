// DNS over TCP reassembly. Input: k (one octet, taken mod 32), k chunk sizes (one octet
// each, 0 allowed), then the stream.
// Properties: the messages and the codes FrameReader gives equal a reference read of the
// stream written here (a length, then that many octets), however the stream is split:
//  - in one chunk;
//  - in the fuzzer's k chunks and then the rest, each chunk its own exact heap copy (a read
//    past a chunk is an ASan report), messages popped as soon as they are whole;
//  - one octet at a time, messages popped at the end.
#include <cstring>
#include <vector>

#include "dns_stream.h"
#include "exact_input.h"
#include "property.h"

namespace {

struct Piece {
  size_t at;
  size_t size;
};

struct Expected {
  std::vector<Piece> messages;  // where each message lies in the stream
  int fed = dns::ok;
  int finished = dns::ok;
};

Expected reference(dns::Span stream) {
  Expected expected;
  size_t at = 0;
  while (at < stream.size) {
    if (stream.size - at < 2) {
      expected.finished = dns::frame_cut;
      break;
    }
    size_t length = static_cast<size_t>(stream.data[at]) << 8 | stream.data[at + 1];
    if (length == 0) {
      expected.fed = expected.finished = dns::frame_empty;
      break;
    }
    if (stream.size - at - 2 < length) {
      expected.finished = dns::frame_cut;
      break;
    }
    expected.messages.push_back({at + 2, length});
    at += 2 + length;
  }
  return expected;
}

// Compares what the reader has whole with the next expected messages.
class Checker {
 public:
  Checker(dns::Span stream, const Expected& expected) : stream_(stream), expected_(expected) {}

  void pop_all(dns::FrameReader& reader) {
    while (reader.pop(message_)) {
      PROPERTY(next_ < expected_.messages.size());
      const Piece& piece = expected_.messages[next_++];
      PROPERTY(message_.size() == piece.size);
      PROPERTY(std::memcmp(message_.data(), stream_.data + piece.at, piece.size) == 0);
    }
  }

  void finish(const dns::FrameReader& reader, int fed) {
    PROPERTY(next_ == expected_.messages.size());
    PROPERTY(fed == expected_.fed);
    PROPERTY(reader.finish() == expected_.finished);
  }

 private:
  dns::Span stream_;
  const Expected& expected_;
  std::vector<uint8_t> message_;
  size_t next_ = 0;
};

void in_one_chunk(dns::Span stream, const Expected& expected) {
  dns::FrameReader reader;
  Checker checker(stream, expected);
  int fed = reader.feed(stream);
  checker.pop_all(reader);
  checker.finish(reader, fed);
}

void in_fuzzer_chunks(dns::Span stream, const uint8_t* sizes, size_t k, const Expected& expected) {
  dns::FrameReader reader;
  Checker checker(stream, expected);
  int fed = dns::ok;
  size_t at = 0;
  for (size_t turn = 0; turn <= k && at < stream.size; ++turn) {
    size_t size = turn < k ? std::min<size_t>(sizes[turn], stream.size - at) : stream.size - at;
    ExactInput chunk(stream.data + at, size);
    fed = reader.feed(chunk.span());
    at += size;
    checker.pop_all(reader);
  }
  checker.finish(reader, fed);
}

void octet_by_octet(dns::Span stream, const Expected& expected) {
  dns::FrameReader reader;
  Checker checker(stream, expected);
  int fed = dns::ok;
  for (size_t at = 0; at < stream.size; ++at) fed = reader.feed({stream.data + at, 1});
  checker.pop_all(reader);
  checker.finish(reader, fed);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  size_t k = data[0] % 32;
  if (size < 1 + k) return 0;
  ExactInput input(data + 1 + k, size - 1 - k);
  dns::Span stream = input.span();
  Expected expected = reference(stream);
  in_one_chunk(stream, expected);
  in_fuzzer_chunks(stream, data + 1, k, expected);
  octet_by_octet(stream, expected);
  return 0;
}
