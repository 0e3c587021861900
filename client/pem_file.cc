#include "pem_file.h"

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

// check_readable_file's steps, the file left open in *FILE when usable: one open for the marker scan
// too, so a checked PEM file costs the allocations it always did (shims/alloc_sweep*.tsv count them).
FileCheck open_checked(const std::string& path, std::string* why, FILE** file) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    int error = errno;
    return *why = "cannot read '" + path + "': " + std::strerror(error), FileCheck::unusable;
  }
  if (!S_ISREG(st.st_mode)) return *why = "'" + path + "' is not a regular file", FileCheck::unusable;
  if (st.st_size == 0) return *why = "'" + path + "' is empty", FileCheck::unusable;
  *file = std::fopen(path.c_str(), "rb");
  if (*file == nullptr) {
    int error = errno;  // ENOMEM: fopen's own buffer, the run's want
    *why = "cannot read '" + path + "': " + std::strerror(error);
    return error == ENOMEM ? FileCheck::no_memory : FileCheck::unusable;
  }
  return FileCheck::usable;
}

}  // namespace

FileCheck check_readable_file(const std::string& path, std::string* why) {
  FILE* f = nullptr;
  FileCheck check = open_checked(path, why, &f);
  if (f != nullptr) std::fclose(f);
  return check;
}

FileCheck check_pem_file(const std::string& path, std::initializer_list<const char*> markers, const char* kind,
                         std::string* why) {
  FILE* f = nullptr;
  if (FileCheck check = open_checked(path, why, &f); check != FileCheck::usable) return check;
  char line[128];
  bool found = false;
  while (!found && std::fgets(line, sizeof line, f) != nullptr) found = begins_block(line, markers);
  std::fclose(f);
  if (!found) return *why = std::string("no ") + kind + " in '" + path + "'", FileCheck::unusable;
  return FileCheck::usable;
}

}  // namespace tlsnb
