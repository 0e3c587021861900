// The request tlsnb sends: a GET without a body, a POST with exactly its Content-Length of body.
#include <gtest/gtest.h>

#include <string>

#include "http_request.h"

using namespace tlsnb;

/* No body: a GET, and no Content-Length at all */
TEST(HttpRequest, NoBodyIsAGetWithoutContentLength) {
  EXPECT_EQ(http_request("hooks.test", 0, 7), "GET / HTTP/1.1\r\nHost: hooks.test\r\nConnection: keep-alive\r\n\r\n");
}

/* One byte of body is already a POST that says so */
TEST(HttpRequest, OneByteIsAPostWithItsLength) {
  std::string req = http_request("hooks.test", 1, 7);
  EXPECT_EQ(req.substr(0, req.size() - 1),
            "POST / HTTP/1.1\r\nHost: hooks.test\r\nConnection: keep-alive\r\n"
            "Content-Type: application/octet-stream\r\nContent-Length: 1\r\n\r\n");
  EXPECT_EQ(req.back(), request_body(1, 7)[0]);
}

/* The body is its bytes, seeded, and nothing is written past them (the terminator stays '\0') */
TEST(HttpRequest, BodyIsItsBytesAndNothingPastThem) {
  std::string body = request_body(5, 3);
  ASSERT_EQ(body.size(), 5u);
  for (long i = 0; i < 5; ++i) EXPECT_EQ(static_cast<unsigned char>(body[static_cast<size_t>(i)]), (i * 131 + 3) % 251);
  EXPECT_EQ(body.c_str()[5], '\0');
}
