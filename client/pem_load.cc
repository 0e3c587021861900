#include "pem_load.h"

#include <openssl/err.h>
#include <openssl/x509.h>

namespace tlsnb {

LoadErrors drain_error_queue() {
  LoadErrors seen;
  for (unsigned long code; (code = ERR_get_error()) != 0;) {
    seen.memory = seen.memory || ERR_GET_REASON(code) == ERR_R_MALLOC_FAILURE;
    seen.decoding = seen.decoding || ERR_GET_LIB(code) == ERR_LIB_PEM || ERR_GET_LIB(code) == ERR_LIB_ASN1;
    seen.key_mismatch = seen.key_mismatch ||
                        (ERR_GET_LIB(code) == ERR_LIB_X509 && ERR_GET_REASON(code) == X509_R_KEY_VALUES_MISMATCH);
  }
  return seen;
}

FileCheck judged(const LoadErrors& seen) {
  return (seen.decoding || seen.key_mismatch) && !seen.memory ? FileCheck::unusable : FileCheck::no_memory;
}

FileCheck load_failure() { return judged(drain_error_queue()); }

std::string refused_load(FileCheck check, const std::string& path, const char* what) {
  return check == FileCheck::unusable ? "'" + path + "' holds a " + what + " that does not decode"
                                      : "'" + path + "' could not be loaded";
}

}  // namespace tlsnb
