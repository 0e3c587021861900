#include "http_request.h"

namespace tlsnb {

std::string request_body(long bytes, uint32_t seed) {
  std::string body(static_cast<size_t>(bytes), '\0');
  for (long i = 0; i < bytes; ++i)
    body[static_cast<size_t>(i)] = static_cast<char>((static_cast<uint64_t>(i) * 131 + seed) % 251);
  return body;
}

std::string http_request(const std::string& host, long body_bytes, uint32_t seed) {
  std::string req = (body_bytes > 0 ? "POST" : "GET");
  req += " / HTTP/1.1\r\nHost: " + host + "\r\nConnection: keep-alive\r\n";
  if (body_bytes > 0) {
    req += "Content-Type: application/octet-stream\r\nContent-Length: " + std::to_string(body_bytes) + "\r\n";
  }
  req += "\r\n";
  return req + request_body(body_bytes, seed);
}

}  // namespace tlsnb
