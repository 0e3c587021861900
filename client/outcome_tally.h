// Attempts counted by outcome ("handshake/10"), each with the detail_text it first came with:
// the summary's by_outcome and the text report's table.
#pragma once

#include <cstdio>
#include <map>
#include <string>

#include "outcome.h"

namespace tlsnb {

class OutcomeTally {
 public:
  // The text first: a count never lacks its text, even when an allocation fails between them
  // (std::bad_alloc is the caller's to catch).
  void add(const Outcome& outcome);
  // {"handshake/10":1,"ok/0":3}
  std::string json() const;
  // One line per outcome: key, count, text.
  void print_table(FILE* out) const;

 private:
  std::map<std::string, long> counts_;
  std::map<std::string, std::string> texts_;
};

}  // namespace tlsnb
