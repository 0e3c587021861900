// One JSON line of the contract's output: strings escaped byte by byte, control characters as \u00XX.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "json_line.h"

using namespace tlsnb;

namespace {

std::string line_of(std::string_view text) {
  char buf[256] = {};
  FILE* out = fmemopen(buf, sizeof buf - 1, "w");
  JsonLine(out, "attempt").str("detail_text", text).done();
  std::fclose(out);
  return buf;
}

}  // namespace

/* Quotes, backslashes and newlines by name; every other control character as \u00XX; the rest as it is */
TEST(JsonLine, StringsAreEscapedControlCharactersByNumber) {
  EXPECT_EQ(line_of("a\"b\\c\nd\x01" "e\x1f" " f~"),
            "{\"type\":\"attempt\",\"detail_text\":\"a\\\"b\\\\c\\nd\\u0001e\\u001f f~\"}\n");
}
