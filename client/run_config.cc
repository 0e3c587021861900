#include "run_config.h"

#include <arpa/inet.h>

namespace tlsnb {

bool RunConfig::target_is_ip() const {
  in6_addr addr{};
  return inet_pton(AF_INET, target.c_str(), &addr) == 1 || inet_pton(AF_INET6, target.c_str(), &addr) == 1;
}

std::string RunConfig::dial_literal() const {
  if (!connect_ip.empty()) return connect_ip;
  if (target_is_ip()) return target;
  return "";
}

}  // namespace tlsnb
