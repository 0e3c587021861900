// The contract's request (clients/README.md): `GET / HTTP/1.1`, or `POST /` with a body of the
// seeded pattern, Host NAME, Connection: keep-alive. Byte i of the body is (i * 131 + seed) % 251
// (servers/tls_server.py --verify-body-seed checks it).
#pragma once

#include <cstdint>
#include <string>

namespace tlsnb {

std::string request_body(long bytes, uint32_t seed);
// One whole request, headers and body (bytes 0: a GET).
std::string http_request(const std::string& host, long body_bytes, uint32_t seed);

}  // namespace tlsnb
