// A finished attempt, as the report prints it: plain values, no connection state.
#pragma once

#include <cstdint>
#include <string>

#include "outcome.h"

namespace tlsnb {

struct AttemptRecord {
  uint64_t conn = 0;
  int slot = -1;             // the connection slot it held; -1 when it never dialled
  Outcome outcome;
  std::string addr;          // IP:PORT dialled ("" before a dial)
  double ms = 0;             // from its start (lookup or dial) to its outcome
  bool resumed = false;
  std::string tls_version;
  std::string cipher;
  int http_status = 0;       // of the last complete response
  long requests_done = 0;
};

}  // namespace tlsnb
