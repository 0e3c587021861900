#include "pem_file.h"

#include <openssl/err.h>
#include <openssl/x509.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace tlsnb {

namespace {

bool begins_block(const char* line, std::initializer_list<const char*> markers) {
  for (const char* marker : markers)
    if (std::strncmp(line, marker, std::strlen(marker)) == 0) return true;
  return false;
}

}  // namespace

FileCheck check_pem_file(const std::string& path, std::initializer_list<const char*> markers, const char* kind,
                         std::string* why) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return *why = "cannot read '" + path + "'", FileCheck::unusable;
  if (!S_ISREG(st.st_mode)) return *why = "'" + path + "' is not a regular file", FileCheck::unusable;
  if (st.st_size == 0) return *why = "'" + path + "' is empty", FileCheck::unusable;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    bool no_memory = errno == ENOMEM;
    *why = "cannot read '" + path + "'";
    return no_memory ? FileCheck::no_memory : FileCheck::unusable;
  }
  char line[128];
  bool found = false;
  while (!found && std::fgets(line, sizeof line, f) != nullptr) found = begins_block(line, markers);
  std::fclose(f);
  if (!found) return *why = std::string("no ") + kind + " in '" + path + "'", FileCheck::unusable;
  return FileCheck::usable;
}

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

FileCheck load_failure() {
  LoadErrors seen = drain_error_queue();
  return (seen.decoding || seen.key_mismatch) && !seen.memory ? FileCheck::unusable : FileCheck::no_memory;
}

std::string refused_load(FileCheck check, const std::string& path, const char* what) {
  return check == FileCheck::unusable ? "'" + path + "' holds a " + what + " that does not decode"
                                      : "'" + path + "' could not be loaded";
}

}  // namespace tlsnb
