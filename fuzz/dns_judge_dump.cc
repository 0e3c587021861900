// dns_judge_dump [--allow-private]: one answer per line on stdin (IPv4 addresses separated
// by spaces), pin_choose's verdict per line on stdout: "chosen I", "refused I" or "none".
// fuzz/judge_oracle.py drives it. A line that is not addresses: one line on stderr, exit 2.
#include <arpa/inet.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "dns_judge.h"

int main(int argc, char** argv) {
  bool allow_private = argc == 2 && std::strcmp(argv[1], "--allow-private") == 0;
  if (argc > 2 || (argc == 2 && !allow_private)) {
    std::fprintf(stderr, "usage: dns_judge_dump [--allow-private] < answers\n");
    return 2;
  }
  std::ios::sync_with_stdio(false);
  std::string line, quad;
  std::vector<in_addr> addrs;
  for (long number = 1; std::getline(std::cin, line); ++number) {
    addrs.clear();
    std::istringstream words(line);
    while (words >> quad) {
      in_addr addr{};
      if (inet_pton(AF_INET, quad.c_str(), &addr) != 1) {
        std::fprintf(stderr, "dns_judge_dump: line %ld: not an IPv4 address: %s\n", number, quad.c_str());
        return 2;
      }
      addrs.push_back(addr);
    }
    dns::Pin pin = dns::pin_choose(addrs, allow_private);
    if (pin.chosen >= 0) {
      std::cout << "chosen " << pin.chosen << '\n';
    } else if (pin.refused >= 0) {
      std::cout << "refused " << pin.refused << '\n';
    } else {
      std::cout << "none\n";
    }
  }
  return 0;
}
