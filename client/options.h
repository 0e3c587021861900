// The tlsnb command line, parsed into Options or one error line. The flags are the lab's
// client contract (TARGET:PORT, --name, --connect, --ns, --cafile, --no-verify, --transport,
// --count, --parallel, --requests, --body, --deadline-ms, --resume, --hold-ms, --json, ...):
// every gate drives the client through them. usage() lists each with its meaning.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "run_config.h"

namespace tlsnb {

// The engine's RunConfig, filled from the flags, plus what only the command line itself reads.
struct Options : RunConfig {
  bool sigpipe_ignore = false;  // --sigpipe ignore: SIG_IGN for the whole process
  long body = 0;                // POST body size (0: GET); the pattern is seeded by `seed`
  bool json = false;            // one JSON object per attempt, then a summary
};

struct ParseResult {
  std::optional<Options> options;
  std::string error;   // one line, when options is empty
  bool help = false;   // --help: print usage() and exit 0
};

ParseResult parse_options(const std::vector<std::string>& args);
const char* usage();

}  // namespace tlsnb
