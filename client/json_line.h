// One JSON object on one line, written to `out` as it is built: every line of the contract's
// output (clients/README.md "Output"). Nothing is allocated (numbers go through fixed buffers,
// strings are escaped byte by byte), so an allocation failure can neither cut a line short nor lose it.
#pragma once

#include <cstdio>
#include <string_view>

namespace tlsnb {

class JsonLine {
 public:
  // Opens the object with its "type" ("attempt", "summary").
  JsonLine(FILE* out, const char* type);
  JsonLine& num(const char* key, long long value);
  JsonLine& real(const char* key, double value);  // three decimals
  JsonLine& boolean(const char* key, bool value);
  JsonLine& str(const char* key, std::string_view value);
  JsonLine& raw(const char* key, const char* json);  // a value that is JSON already
  void done();  // closes the object and the line

 private:
  void name(const char* key);
  void escaped(unsigned char c);

  FILE* out_;
};

}  // namespace tlsnb
