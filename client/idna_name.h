// A name as it goes on the wire and into the host check: a non-ASCII name becomes its IDNA
// A-label (libidn2, UTS #46 non-transitional processing); an ASCII one is kept as it is.
#pragma once

#include <string>

namespace tlsnb {

struct WireName {
  std::string ascii;  // what SNI, the host check and the DNS query use
  std::string error;  // why IDNA refuses the name ("" when it does not)
};

// IP literals are never passed here.
WireName wire_name(const std::string& name);

}  // namespace tlsnb
