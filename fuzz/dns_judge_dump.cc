// dns_judge_dump [--allow-private] [--why]: one answer per line on stdin (IPv4 and IPv6
// addresses separated by spaces), pin_choose's verdict per line on stdout: "chosen I",
// "refused I" or "none"; with --why, a refusal is followed by a tab and the refused
// address's reason (special_reason). fuzz/judge_oracle.py drives it. A line that is not
// addresses, or a bad flag: one line on stderr, exit 2.
#include <arpa/inet.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "dns_judge.h"

namespace {

bool parse(const std::string& text, dns::Address& addr) {
  in_addr v4{};
  in6_addr v6{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) {
    addr = dns::address_of(v4);
    return true;
  }
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    addr = dns::address_of(v6);
    return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  bool allow_private = false, why = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--allow-private") == 0) {
      allow_private = true;
    } else if (std::strcmp(argv[i], "--why") == 0) {
      why = true;
    } else {
      std::fprintf(stderr, "usage: dns_judge_dump [--allow-private] [--why] < answers\n");
      return 2;
    }
  }
  std::ios::sync_with_stdio(false);
  std::string line, word;
  std::vector<dns::Address> addrs;
  for (long number = 1; std::getline(std::cin, line); ++number) {
    addrs.clear();
    std::istringstream words(line);
    while (words >> word) {
      dns::Address addr;
      if (!parse(word, addr)) {
        std::fprintf(stderr, "dns_judge_dump: line %ld: not an IP address: %s\n", number, word.c_str());
        return 2;
      }
      addrs.push_back(addr);
    }
    dns::Pin pin = dns::pin_choose(addrs, allow_private);
    if (pin.chosen >= 0) {
      std::cout << "chosen " << pin.chosen << '\n';
    } else if (pin.refused >= 0) {
      std::cout << "refused " << pin.refused;
      if (why) std::cout << '\t' << dns::special_reason(addrs[static_cast<size_t>(pin.refused)]);
      std::cout << '\n';
    } else {
      std::cout << "none\n";
    }
  }
  return 0;
}
