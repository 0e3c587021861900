// main() of a C++ client under test with its own loop (gnutls, mbedtls, wolfssl), whole: the
// command line, SIGPIPE, the library's global state, the run's configuration, then every attempt
// through AttemptLoop and the summary; or, when the run's shared state could not be made for want
// of a resource, every attempt reported as that setup failure. The adapter names its half once
// (AdapterParts): its program name, its command line, its configuration, its library's version.
#pragma once

#include <cstdio>
#include <new>
#include <string>
#include <vector>

#include "client/http_request.h"
#include "client/process_figures.h"
#include "clients/contract/attempt_loop.h"
#include "clients/contract/contract_options.h"
#include "clients/contract/contract_report.h"
#include "clients/contract/made.h"
#include "clients/contract/session_store.h"

namespace contract {

// The summary's own figures, at its end: the descriptors open now (inherited ones included) and
// the library's version. Counted before the process figures are read: their file is not one.
// Out of memory for those, the counts still go out: the run's outcomes are printed already.
inline void print_summary(const Report& report, const tlsnb::RunTotals& stats, const std::string& library) {
  try {
    long fds_open = tlsnb::count_open_fds();
    OwnFigures own;
    own.at_end = [&](tlsnb::JsonLine& line) { line.num("fds_open_at_end", fds_open).str("library", library); };
    own.text_at_end = " library=" + library;
    report.summary(stats, tlsnb::read_process_figures(), own);
  } catch (const std::bad_alloc&) {
    report.summary_out_of_memory(stats);
  }
}

// Every attempt ends as `failure` (setup/9, the run's configuration): the one stderr line first.
template <class AttemptT, class SharedT>
int report_setup_failure(const Options& o, const char* program, const std::string& why, const tlsnb::Outcome& failure,
                         const std::string& library) {
  std::fprintf(stderr, "%s: %s\n", program, why.c_str());
  Report report(o.json);
  SharedT shared;
  shared.options = &o;
  tlsnb::RunTotals stats;
  for (long i = 0; i < o.count; ++i) {
    AttemptT attempt(static_cast<uint64_t>(i), shared);
    attempt.finish(failure);
    report.attempt(attempt.record());
    ++stats.count;
    ++stats.failed;
  }
  print_summary(report, stats, library);
  return 1;
}

// `shared` holds the adapter's own parts (its configuration); the loop's, the request and the
// session pool are filled here. Exit 0 when every attempt was ok, 1 otherwise, 2 when the loop
// could not start.
template <class AttemptT, class SharedT>
int run_attempts(const Options& o, SharedT& shared, const char* program, const std::string& library) {
  Report report(o.json);
  SessionStore sessions(static_cast<size_t>(o.parallel));
  shared.options = &o;
  shared.sessions = &sessions;
  shared.request = tlsnb::http_request(o.name, o.body, o.seed);
  tlsnb::RunTotals stats;
  std::string error;
  {
    AttemptLoop<AttemptT, SharedT> loop(o, shared, [&report](const AttemptT& a) { report.attempt(a.record()); });
    if (!loop.run(&stats, &error)) {
      std::fprintf(stderr, "%s: %s\n", program, error.c_str());
      return exit_usage;
    }
  }
  print_summary(report, stats, library);
  std::fflush(stdout);
  return stats.failed == 0 ? 0 : 1;
}

// An adapter's half of main, in its own words. Config: its one configuration of the run;
// SetupFailure: its setup failures, whose `context` (9, as tlsnb's) is the run's configuration.
template <class Config, class SetupFailure>
struct AdapterParts {
  const char* program;  // "tlsnb-NAME", the start of every line it writes on stderr
  ParseResult (*parse_options)(const std::vector<std::string>& args);
  const char* (*usage)();
  // The library's global state, made once before the configuration ("" when it was, else the
  // line, and every attempt is setup_outcome(SetupFailure::context)) and released after the run;
  // null where the library has none.
  std::string (*init_library)();
  void (*cleanup_library)();
  // The configuration, or the line: the user's to fix (exit 2, or 89 when `lacking`), else a
  // resource's (every attempt setup_outcome(SetupFailure::context)).
  Made<Config> (*make_config)(const Options& o);
  tlsnb::Outcome (*setup_outcome)(SetupFailure what, const std::string& why);
  std::string (*library_version)();
};

// cleanup_library once init_library worked, on every way out of main.
struct LibraryGlobal {
  void (*cleanup)() = nullptr;
  LibraryGlobal() = default;
  LibraryGlobal(const LibraryGlobal&) = delete;
  LibraryGlobal& operator=(const LibraryGlobal&) = delete;
  ~LibraryGlobal() {
    if (cleanup != nullptr) cleanup();
  }
};

template <class AttemptT, class Config, class SetupFailure>
int run_adapter(const std::vector<std::string>& args, const AdapterParts<Config, SetupFailure>& parts) {
  ParseResult parsed = parts.parse_options(args);
  if (int code = 0; !ready_to_run(parsed, parts.program, parts.usage(), &code)) return code;
  const Options& o = *parsed.options;
  apply_sigpipe(o.sigpipe);
  auto setup_failed = [&](const std::string& why) {
    return report_setup_failure<AttemptT, AdapterShared<Config>>(
        o, parts.program, why, parts.setup_outcome(SetupFailure::context, why), parts.library_version());
  };
  LibraryGlobal global;
  if (parts.init_library != nullptr) {
    if (std::string why = parts.init_library(); !why.empty()) return setup_failed(why);
    global.cleanup = parts.cleanup_library;
  }
  Made<Config> made = parts.make_config(o);
  if (!made.config) {
    if (made.config_error) {
      std::fprintf(stderr, "%s: %s\n", parts.program, made.error.c_str());
      return made.lacking ? exit_lacking : exit_usage;
    }
    return setup_failed(made.error);
  }
  AdapterShared<Config> shared;
  shared.tls = made.config.get();
  return run_attempts<AttemptT>(o, shared, parts.program, parts.library_version());
}

// main(argc, argv) of an adapter whose attempt is AttemptT (made with AdapterShared<Config>).
template <class AttemptT, class Config, class SetupFailure>
int adapter_main(int argc, char** argv, const AdapterParts<Config, SetupFailure>& parts) {
  try {
    return run_adapter<AttemptT>(std::vector<std::string>(argv + 1, argv + argc), parts);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: out of memory outside any attempt\n", parts.program);
    return 1;
  }
}

}  // namespace contract
