// What main() of a C++ client under test with its own loop does once its configuration exists:
// run every attempt through AttemptLoop and print the summary, or, when the run's shared state
// could not be made for want of a resource, report every attempt as that setup failure. The
// adapter gives its attempt and shared types, its program name and its library's version.
#pragma once

#include <cstdio>
#include <new>
#include <string>

#include "client/http_request.h"
#include "client/process_figures.h"
#include "clients/contract/attempt_loop.h"
#include "clients/contract/contract_report.h"
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

}  // namespace contract
