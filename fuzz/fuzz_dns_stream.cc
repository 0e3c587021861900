// DNS over TCP reassembly. Input: k (one octet, taken mod 32), k chunk sizes (one octet
// each; a size of 1 is added, and they are used in turn), then the stream.
// Properties:
//  - the messages and the final codes do not depend on how the stream was split: in one
//    chunk, in the fuzzer's chunk sizes (each chunk an exact heap copy, 0 allowed, messages
//    popped as they come), or one octet at a time;
//  - they equal a reference read of the stream written here: length, then that many octets.
#include <string>
#include <vector>

#include "dns_stream.h"
#include "exact_input.h"
#include "property.h"

namespace {

struct Result {
  std::vector<std::vector<uint8_t>> messages;
  int fed = dns::ok;
  int finished = dns::ok;

  bool operator==(const Result& other) const {
    return messages == other.messages && fed == other.fed && finished == other.finished;
  }
};

// `sizes` holds at least one size above 0, so every cycle through it moves on. With
// `exact`, each chunk is its own heap copy, so a read past a chunk is an ASan report.
Result reassemble(dns::Span stream, const std::vector<size_t>& sizes, bool pop_as_they_come, bool exact) {
  dns::FrameReader reader;
  Result result;
  std::vector<uint8_t> message;
  for (size_t turn = 0, at = 0; at < stream.size; ++turn) {
    size_t size = std::min(sizes[turn % sizes.size()], stream.size - at);
    if (exact) {
      ExactInput chunk(stream.data + at, size);
      result.fed = reader.feed(chunk.span());
    } else {
      result.fed = reader.feed({stream.data + at, size});
    }
    at += size;
    while (pop_as_they_come && reader.pop(message)) result.messages.push_back(message);
  }
  while (reader.pop(message)) result.messages.push_back(message);
  result.finished = reader.finish();
  return result;
}

Result reference(dns::Span stream) {
  Result result;
  size_t at = 0;
  while (at < stream.size) {
    if (stream.size - at < 2) {
      result.finished = dns::frame_cut;
      return result;
    }
    size_t length = static_cast<size_t>(stream.data[at]) << 8 | stream.data[at + 1];
    if (length == 0) {
      result.fed = result.finished = dns::frame_empty;
      return result;
    }
    if (stream.size - at - 2 < length) {
      result.finished = dns::frame_cut;
      return result;
    }
    result.messages.emplace_back(stream.data + at + 2, stream.data + at + 2 + length);
    at += 2 + length;
  }
  return result;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  size_t k = data[0] % 32;
  if (size < 1 + k) return 0;
  std::vector<size_t> sizes(data + 1, data + 1 + k);
  sizes.push_back(1);  // at least one size above 0
  ExactInput input(data + 1 + k, size - 1 - k);
  dns::Span stream = input.span();

  Result expected = reference(stream);
  PROPERTY(reassemble(stream, {stream.size}, false, false) == expected);
  PROPERTY(reassemble(stream, sizes, true, true) == expected);
  PROPERTY(reassemble(stream, {1}, false, false) == expected);
  return 0;
}
