// tlsnb: the reference non-blocking TLS client's command line. The flags (options.h) are what
// every gate drives; exit 0 when every attempt is ok, 1 when any is not, 2 for bad usage.
#include <openssl/err.h>

#include <csignal>
#include <cstdio>
#include <new>

#include "http_request.h"
#include "loop.h"
#include "options.h"
#include "report.h"
#include "session_cache.h"
#include "tls_context.h"

namespace tlsnb {
namespace {

constexpr int exit_usage = 2;

// The whole context could not be made for want of a resource: every attempt is a setup outcome.
int report_setup_failure(const Options& o, Report& report, const std::string& why) {
  std::fprintf(stderr, "tlsnb: %s\n", why.c_str());
  RunStats stats;
  for (long i = 0; i < o.count; ++i) {
    AttemptRecord record;
    record.conn = static_cast<uint64_t>(i);
    record.outcome = setup_outcome(SetupFailure::context);
    report.attempt(record);
    ++stats.count;
    ++stats.failed;
  }
  report.summary(stats, read_process_figures());
  return 1;
}

// conn 0, never dialled, setup/8: built without allocating (the strings are short or empty).
AttemptRecord out_of_memory_record() {
  AttemptRecord record;
  record.outcome = setup_outcome(SetupFailure::out_of_memory);
  return record;
}

int run(const std::vector<std::string>& args) {
  ParseResult parsed = parse_options(args);
  if (parsed.help) {
    std::fputs(usage(), stdout);
    return 0;
  }
  if (!parsed.options) {
    std::fprintf(stderr, "tlsnb: %s\n", parsed.error.c_str());
    return exit_usage;
  }
  const Options& o = *parsed.options;
  if (o.sigpipe_ignore) std::signal(SIGPIPE, SIG_IGN);

  Report report(o.json);
  SessionCache sessions(static_cast<size_t>(o.parallel));
  ContextResult made = make_context(o, o.resume ? &sessions : nullptr);
  if (!made.ctx) {
    if (made.config_error) {
      std::fprintf(stderr, "tlsnb: %s\n", made.error.c_str());
      return exit_usage;
    }
    return report_setup_failure(o, report, made.error);
  }

  RunState shared;
  shared.config = &o;
  shared.ctx = made.ctx.get();
  shared.sessions = &sessions;
  shared.session_key = SessionCache::key(o.name, o.port, trust_fingerprint(o));
  shared.request = http_request(o.name, o.body, o.seed);

  Loop loop(o, shared, [&report](const AttemptRecord& r) { report.attempt(r); });
  RunStats stats;
  std::string error;
  if (!loop.run(&stats, &error)) {
    std::fprintf(stderr, "tlsnb: %s\n", error.c_str());
    return exit_usage;
  }
  report.summary(stats, read_process_figures());
  std::fflush(stdout);
  return stats.failed == 0 ? 0 : 1;
}

}  // namespace

}  // namespace tlsnb

int main(int argc, char** argv) {
  try {
    return tlsnb::run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::bad_alloc&) {  // outside any attempt: the run itself could not go on
    std::fputs("tlsnb: out of memory outside any attempt\n", stderr);
    if (tlsnb::attempt_lines_printed() == 0) tlsnb::print_attempt_line(tlsnb::out_of_memory_record());
    return 1;
  }
}
