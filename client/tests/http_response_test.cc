// The HTTP/1.1 response reader, fed whole and byte by byte: the same answer either way.
#include <gtest/gtest.h>

#include <string>

#include "http_response.h"

using tlsnb::HttpResponse;

namespace {

// Feeds `text` in chunks of `step` bytes; returns "state status used" as one string.
std::string read_in_steps(const std::string& text, size_t step) {
  HttpResponse r;
  size_t used = 0;
  while (used < text.size() && !r.done()) {
    size_t n = std::min(step, text.size() - used);
    used += r.feed(reinterpret_cast<const uint8_t*>(text.data()) + used, n);
  }
  static const char* names[] = {"status_line", "headers", "body", "complete", "chunked", "malformed"};
  return std::string(names[static_cast<int>(r.state())]) + " " + std::to_string(r.status()) + " " +
         std::to_string(used);
}

void expect_same_in_every_step(const std::string& text, const std::string& expected) {
  for (size_t step : {size_t{1}, size_t{2}, size_t{7}, text.size()}) {
    EXPECT_EQ(read_in_steps(text, step), expected) << "step " << step;
  }
}

}  // namespace

TEST(HttpResponse, ContentLengthBodyEndsTheResponse) {
  expect_same_in_every_step("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", "complete 200 43");
}

TEST(HttpResponse, BytesOfTheNextResponseAreLeft) {
  std::string two = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiHTTP/1.1 404 Not Found\r\n";
  expect_same_in_every_step(two, "complete 200 40");
}

TEST(HttpResponse, EmptyBodyIsComplete) {
  expect_same_in_every_step("HTTP/1.1 204 No Content\r\n\r\n", "complete 204 27");
  expect_same_in_every_step("HTTP/1.1 304 Not Modified\r\n\r\n", "complete 304 29");
  expect_same_in_every_step("HTTP/1.1 100 Continue\r\n\r\n", "complete 100 25");
  expect_same_in_every_step("HTTP/1.1 199 Lab\r\n\r\n", "complete 199 20");
  expect_same_in_every_step("HTTP/1.1 200 OK\r\ncontent-length:0\r\n\r\n", "complete 200 37");
}

TEST(HttpResponse, ChunkedIsReportedNotWaitedFor) {
  expect_same_in_every_step("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
                            "chunked 200 47");  // judged at the end of the headers
}

// RFC 9112 6.3: never delimited by either framing, in either order, identity included (client.toml both-framings)
TEST(HttpResponse, BothFramingsAreMalformedInEitherOrder) {
  expect_same_in_every_step("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello",
                            "malformed 200 66");
  expect_same_in_every_step("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n5\r\nhello",
                            "malformed 200 66");
  expect_same_in_every_step("HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\nContent-Length: 5\r\n\r\nhello",
                            "malformed 200 67");
  expect_same_in_every_step("HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\nContent-Length: 0\r\n\r\n",
                            "malformed 200 67");
}

TEST(HttpResponse, MissingLengthIsMalformed) {
  expect_same_in_every_step("HTTP/1.1 200 OK\r\nServer: x\r\n\r\nbody", "malformed 200 30");
}

TEST(HttpResponse, GarbageIsMalformed) {
  expect_same_in_every_step("SSH-2.0-OpenSSH\r\n", "malformed 0 17");
  expect_same_in_every_step("HTTP/1.1 2x0 OK\r\n", "malformed 0 17");
  expect_same_in_every_step("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "malformed 200 37");
  expect_same_in_every_step("HTTP/1.1 200 OK\r\nbogus\r\nContent-Length: 0\r\n\r\n", "malformed 200 24");
  expect_same_in_every_step("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n", "malformed 200 55");
  expect_same_in_every_step("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nContent-Length: 3\r\n\r\n", "malformed 200 55");
  expect_same_in_every_step("HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n", "malformed 200 38");
  expect_same_in_every_step("HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n", "malformed 200 34");
}

// mutants/survivors: each of these kills an operator mutant the other units let through.
TEST(HttpResponse, AStatusLineWithoutReasonIsRead) {
  expect_same_in_every_step("HTTP/1.1 204\r\n\r\n", "complete 204 16");
}

TEST(HttpResponse, OnlyHttp1StatusLinesAreRead) {
  expect_same_in_every_step("HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n", "malformed 0 17");
  expect_same_in_every_step("HTTP/1.1 x00 OK\r\n", "malformed 0 17");
  expect_same_in_every_step("HTTP/1.1-200 OK\r\n", "malformed 0 17");
}

TEST(HttpResponse, BareLineFeedsEndLinesToo) {
  expect_same_in_every_step("HTTP/1.1 200 OK\nContent-Length: 5\n\nhello", "complete 200 40");
}

TEST(HttpResponse, AHeaderLineOfTheLimitIsReadAndOneMoreIsNot) {
  std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX: ";
  std::string fits = head + std::string(8192 - 4, 'a') + "\r\n\r\n";   // 8,192 bytes with its CR
  std::string over = head + std::string(8192 - 3, 'a') + "\r\n\r\n";
  EXPECT_EQ(read_in_steps(fits, fits.size()), "complete 200 " + std::to_string(fits.size()));
  EXPECT_EQ(read_in_steps(over, over.size()).substr(0, 13), "malformed 200");
}

TEST(HttpResponse, AnOverlongHeaderLineIsMalformedNotBuffered) {
  std::string text = "HTTP/1.1 200 OK\r\nX: " + std::string(9000, 'a');
  HttpResponse r;
  r.feed(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  EXPECT_EQ(r.state(), HttpResponse::State::malformed);
  EXPECT_EQ(r.error(), "header line longer than 8192 bytes");  // the attempt's detail_text
}

TEST(HttpResponse, ResetReadsTheNextResponse) {
  HttpResponse r;
  std::string a = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx";
  r.feed(reinterpret_cast<const uint8_t*>(a.data()), a.size());
  ASSERT_EQ(r.state(), HttpResponse::State::complete);
  r.reset();
  EXPECT_EQ(r.state(), HttpResponse::State::status_line);
  EXPECT_EQ(r.status(), 0);
}
