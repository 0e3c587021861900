#include "idna_name.h"

#include <idn2.h>

#include <cstdlib>

namespace tlsnb {

namespace {

bool is_ascii(const std::string& text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

}  // namespace

WireName wire_name(const std::string& name) {
  WireName out;
  const std::string& text = name;  // a trailing dot is kept: client/README.md "Names"
  if (is_ascii(text)) {
    out.ascii = text;
    return out;
  }
  char* ascii = nullptr;
  int rc = idn2_to_ascii_8z(text.c_str(), &ascii, IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL);
  if (rc != IDN2_OK) {
    out.error = idn2_strerror(rc);
    return out;
  }
  out.ascii = ascii;
  idn2_free(ascii);
  return out;
}

}  // namespace tlsnb
