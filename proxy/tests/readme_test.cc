// README.md's fault table against the catalogue: a fault or a setting the code has and the README
// does not name (or the reverse) is a record that drifted.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "fault_spec.h"

using namespace tlsproxy;

namespace {

std::string readme() {
  std::ifstream in(PROXY_README);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST(Readme, NamesEveryFaultAndEverySetting) {
  std::string text = readme();
  ASSERT_FALSE(text.empty()) << PROXY_README;
  for (const FaultInfo& info : fault_catalogue()) {
    std::string row = "| `" + std::string(info.name) + "` |";
    size_t at = text.find(row);
    ASSERT_NE(at, std::string::npos) << "no table row for " << info.name;
    std::string line = text.substr(at, text.find('\n', at) - at);
    for (const Setting& s : info.settings)
      EXPECT_NE(line.find("`" + std::string(s.key) + "="), std::string::npos) << info.name << " " << s.key;
  }
}
