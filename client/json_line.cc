#include "json_line.h"

namespace tlsnb {

JsonLine::JsonLine(FILE* out, const char* type) : out_(out) {
  std::fputs("{\"type\":\"", out_);
  std::fputs(type, out_);
  std::fputc('"', out_);
}

JsonLine& JsonLine::num(const char* key, long long value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld", value);
  return raw(key, buf);
}

JsonLine& JsonLine::real(const char* key, double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", value);
  return raw(key, buf);
}

JsonLine& JsonLine::boolean(const char* key, bool value) { return raw(key, value ? "true" : "false"); }

JsonLine& JsonLine::str(const char* key, std::string_view value) {
  name(key);
  std::fputc('"', out_);
  for (char c : value) escaped(static_cast<unsigned char>(c));
  std::fputc('"', out_);
  return *this;
}

JsonLine& JsonLine::raw(const char* key, const char* json) {
  name(key);
  std::fputs(json, out_);
  return *this;
}

void JsonLine::done() { std::fputs("}\n", out_); }

void JsonLine::name(const char* key) {
  std::fputs(",\"", out_);
  std::fputs(key, out_);
  std::fputs("\":", out_);
}

void JsonLine::escaped(unsigned char c) {
  switch (c) {
    case '"': std::fputs("\\\"", out_); break;
    case '\\': std::fputs("\\\\", out_); break;
    case '\n': std::fputs("\\n", out_); break;
    default:
      if (c < 0x20) std::fprintf(out_, "\\u%04x", c);
      else std::fputc(c, out_);
  }
}

}  // namespace tlsnb
