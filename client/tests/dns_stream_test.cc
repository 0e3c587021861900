// DNS over TCP framing: messages reassembled from chunks of any size, and the ways a
// stream can end badly.
#include "dns_stream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dns_message.h"
#include "dns_packet_builder.h"

using dns_test::Bytes;
using dns_test::ExactCopy;

namespace {

// Feeds `stream` in chunks of the given sizes (the last size repeats), each chunk an exact
// heap copy, then reports "[len len ...] feed=<code> finish=<code>".
std::string reassemble(const std::vector<uint8_t>& stream, std::vector<size_t> sizes) {
  dns::FrameReader reader;
  int fed = dns::ok;
  size_t at = 0;
  for (size_t i = 0; at < stream.size(); ++i) {
    size_t size = std::min(sizes[std::min(i, sizes.size() - 1)], stream.size() - at);
    ExactCopy chunk({stream.data() + at, stream.data() + at + size});
    fed = reader.feed(chunk.span());
    at += size;
  }
  std::string out = "[";
  std::vector<uint8_t> message;
  for (bool first = true; reader.pop(message); first = false)
    out += (first ? "" : " ") + std::to_string(message.size());
  return out + "] feed=" + dns::dns_error_name(fed) + " finish=" + dns::dns_error_name(reader.finish());
}

std::vector<uint8_t> body(size_t size) {
  std::vector<uint8_t> octets(size);
  for (size_t i = 0; i < size; ++i) octets[i] = static_cast<uint8_t>(i);
  return octets;
}

std::vector<uint8_t> framed(std::vector<size_t> sizes) {
  std::vector<uint8_t> stream;
  for (size_t size : sizes) {
    std::vector<uint8_t> one = body(size);
    std::vector<uint8_t> f = dns::frame({one.data(), one.size()});
    stream.insert(stream.end(), f.begin(), f.end());
  }
  return stream;
}

}  // namespace

/* The length goes first, big-endian */
TEST(DnsStream, FrameWritesTheLengthFirst) {
  std::vector<uint8_t> three = {7, 8, 9};
  EXPECT_EQ((std::vector<uint8_t>{0, 3, 7, 8, 9}), dns::frame({three.data(), three.size()}));
  std::vector<uint8_t> big(0x1234);
  EXPECT_EQ(0x12, dns::frame({big.data(), big.size()})[0]);
  EXPECT_EQ(0x34, dns::frame({big.data(), big.size()})[1]);
}

/* Nothing, or more than 65535 octets, cannot be framed */
TEST(DnsStream, FrameRefusesWhatALengthCannotCarry) {
  std::vector<uint8_t> huge(65536);
  EXPECT_TRUE(dns::frame({huge.data(), huge.size()}).empty());
  EXPECT_TRUE(dns::frame({huge.data(), 0}).empty());
  EXPECT_EQ(65537u, dns::frame({huge.data(), 65535}).size());
}

/* A message in one chunk, in single octets, and in odd chunks gives the same result */
TEST(DnsStream, SplitDoesNotChangeTheMessages) {
  std::vector<uint8_t> stream = framed({40, 1, 300});
  EXPECT_EQ("[40 1 300] feed=ok finish=ok", reassemble(stream, {stream.size()}));
  EXPECT_EQ("[40 1 300] feed=ok finish=ok", reassemble(stream, {1}));
  EXPECT_EQ("[40 1 300] feed=ok finish=ok", reassemble(stream, {3, 7, 2, 41, 1}));
}

/* A split between the two length octets is reassembled */
TEST(DnsStream, SplitInsideTheLengthIsReassembled) {
  EXPECT_EQ("[258] feed=ok finish=ok", reassemble(framed({258}), {1, 259}));
}

/* An empty chunk changes nothing */
TEST(DnsStream, EmptyChunkChangesNothing) {
  dns::FrameReader reader;
  std::vector<uint8_t> stream = framed({5});
  EXPECT_EQ(dns::ok, reader.feed({stream.data(), 0}));
  EXPECT_EQ(dns::ok, reader.feed({stream.data(), stream.size()}));
  EXPECT_EQ(dns::ok, reader.feed({stream.data(), 0}));
  EXPECT_EQ(1u, reader.whole());
  EXPECT_EQ(dns::ok, reader.finish());
}

/* A length prefix of 0 is an error, and stays one; what came before it is kept */
TEST(DnsStream, LengthZeroIsAnError) {
  std::vector<uint8_t> stream = framed({12});
  stream.insert(stream.end(), {0, 0});
  std::vector<uint8_t> more = framed({12});
  stream.insert(stream.end(), more.begin(), more.end());
  EXPECT_EQ("[12] feed=frame_empty finish=frame_empty", reassemble(stream, {stream.size()}));
  EXPECT_EQ("[12] feed=frame_empty finish=frame_empty", reassemble(stream, {1}));
}

/* A length of 65535 followed by fewer octets is cut at the end of the stream */
TEST(DnsStream, Length65535WithAShortBodyIsCut) {
  std::vector<uint8_t> stream = {0xFF, 0xFF};
  std::vector<uint8_t> part = body(1000);
  stream.insert(stream.end(), part.begin(), part.end());
  EXPECT_EQ("[] feed=ok finish=frame_cut", reassemble(stream, {100}));
}

/* 65535 octets, all there, is a message */
TEST(DnsStream, Length65535WholeIsAMessage) {
  EXPECT_EQ("[65535] feed=ok finish=ok", reassemble(framed({65535}), {4096}));
}

/* A stream that ends after one octet of the length is cut */
TEST(DnsStream, EndInsideTheLengthIsCut) { EXPECT_EQ("[] feed=ok finish=frame_cut", reassemble({0x00}, {1})); }

/* A stream that ends between two messages ended cleanly */
TEST(DnsStream, EndBetweenMessagesIsClean) { EXPECT_EQ("[3 4] feed=ok finish=ok", reassemble(framed({3, 4}), {2})); }

/* A one-octet body is framed correctly; as DNS it is a short header */
TEST(DnsStream, OneOctetBodyIsAMessageButNotAnAnswer) {
  dns::FrameReader reader;
  std::vector<uint8_t> stream = {0x00, 0x01, 0x42};
  ASSERT_EQ(dns::ok, reader.feed({stream.data(), stream.size()}));
  std::vector<uint8_t> message;
  ASSERT_TRUE(reader.pop(message));
  ExactCopy copy(message);
  EXPECT_EQ("malformed(header_short)", dns::describe(dns::parse_response(copy.span(), dns_test::ask())));
}

/* A whole query goes out framed and comes back out of the reader unchanged */
TEST(DnsStream, QueryRoundTripsThroughTheFraming) {
  dns::Query query = dns::build_query(7, "www.example.com");
  std::vector<uint8_t> stream = dns::frame({query.message.data(), query.message.size()});
  dns::FrameReader reader;
  reader.feed({stream.data(), stream.size()});
  std::vector<uint8_t> message;
  ASSERT_TRUE(reader.pop(message));
  EXPECT_EQ(query.message, message);
}
