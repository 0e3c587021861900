#include "flag_table.h"

#include <arpa/inet.h>

#include <cerrno>
#include <cstdlib>

namespace tlsnb {

bool parse_long(const std::string& text, long lo, long hi, long* out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || value < lo || value > hi) return false;
  *out = value;
  return true;
}

bool split_host_port(const std::string& text, std::string* host, uint16_t* port) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  long value = 0;
  if (!parse_long(text.substr(colon + 1), 1, 65535, &value)) return false;
  std::string head = text.substr(0, colon);
  // An IPv6 literal stands in brackets (RFC 3986 3.2.2); a bare colon in the host is refused.
  if (head.front() == '[' && head.back() == ']' && head.size() > 2) head = head.substr(1, head.size() - 2);
  else if (head.find_first_of("[]:") != std::string::npos) return false;
  *host = head;
  *port = static_cast<uint16_t>(value);
  return true;
}

bool is_ipv4(const std::string& text) {
  in_addr addr{};
  return inet_pton(AF_INET, text.c_str(), &addr) == 1;
}

bool is_ip_literal(const std::string& text) {
  in6_addr addr{};
  return is_ipv4(text) || inet_pton(AF_INET6, text.c_str(), &addr) == 1;
}

std::string take_target(const std::vector<std::string>& positional, std::string* host, uint16_t* port) {
  if (positional.size() != 1)
    return positional.empty() ? "missing TARGET:PORT" : "one TARGET:PORT expected, got '" + positional[1] + "'";
  if (!split_host_port(positional[0], host, port))
    return "TARGET:PORT: expected HOST:PORT with a port in 1..65535, got '" + positional[0] + "'";
  return "";
}

}  // namespace tlsnb
