#include "outcome_tally.h"

namespace tlsnb {

void OutcomeTally::add(const Outcome& outcome) {
  std::string key = outcome.key();
  if (!texts_.count(key)) texts_[key] = outcome.text;
  ++counts_[key];
}

std::string OutcomeTally::json() const {
  std::string outcomes = "{";
  for (const auto& [key, n] : counts_) outcomes += (outcomes.size() > 1 ? ",\"" : "\"") + key + "\":" + std::to_string(n);
  outcomes += "}";
  return outcomes;
}

void OutcomeTally::print_table(FILE* out) const {
  for (const auto& [key, n] : counts_) std::fprintf(out, "%-16s %8ld  %s\n", key.c_str(), n, texts_.at(key).c_str());
}

}  // namespace tlsnb
