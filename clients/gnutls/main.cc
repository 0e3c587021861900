// tlsnb-gnutls: a client under test for tlslab on GnuTLS 3.7 (clients/README.md contract).
#include <csignal>
#include <cstdio>
#include <new>

#include "client/http_request.h"
#include "client/process_figures.h"
#include "clients/contract/contract_report.h"
#include "loop.h"
#include "options.h"
#include "session_store.h"
#include "tls_config.h"

namespace tlsgnu {
namespace {

using contract::exit_usage;

// The summary's own figures, at its end: the descriptors open now (inherited ones included) and
// the library's version. Counted before the process figures are read: their file is not one.
// Out of memory for those, the counts still go out: the run's outcomes are printed already.
void print_summary(const contract::Report& report, const RunStats& stats) {
  try {
    long fds_open = tlsnb::count_open_fds();
    std::string library = library_version();
    contract::OwnFigures own;
    own.at_end = [&](tlsnb::JsonLine& line) { line.num("fds_open_at_end", fds_open).str("library", library); };
    own.text_at_end = " library=" + library;
    report.summary(stats, tlsnb::read_process_figures(), own);
  } catch (const std::bad_alloc&) {
    report.summary_out_of_memory(stats);
  }
}

// The run's shared state could not be made for want of a resource: every attempt is setup/9.
int report_setup_failure(const Options& o, const std::string& why) {
  std::fprintf(stderr, "tlsnb-gnutls: %s\n", why.c_str());
  contract::Report report(o.json);
  Shared shared;
  shared.options = &o;
  RunStats stats;
  for (long i = 0; i < o.count; ++i) {
    Attempt attempt(static_cast<uint64_t>(i), shared);
    attempt.finish(setup_outcome(SetupFailure::context, why));
    report.attempt(attempt.record());
    ++stats.count;
    ++stats.failed;
  }
  print_summary(report, stats);
  return 1;
}

int run_loop(const Options& o, TlsConfig& config) {
  contract::Report report(o.json);
  SessionStore sessions(static_cast<size_t>(o.parallel));
  Shared shared;
  shared.options = &o;
  shared.tls = &config;
  shared.sessions = &sessions;
  shared.request = tlsnb::http_request(o.name, o.body, o.seed);
  RunStats stats;
  std::string error;
  {
    Loop loop(o, shared, [&report](const Attempt& a) { report.attempt(a.record()); });
    if (!loop.run(&stats, &error)) {
      std::fprintf(stderr, "tlsnb-gnutls: %s\n", error.c_str());
      return exit_usage;
    }
  }
  print_summary(report, stats);
  std::fflush(stdout);
  return stats.failed == 0 ? 0 : 1;
}

int run(const std::vector<std::string>& args) {
  ParseResult parsed = parse_options(args);
  if (int code = 0; !contract::ready_to_run(parsed, "tlsnb-gnutls", usage(), &code)) return code;
  const Options& o = *parsed.options;
  if (o.sigpipe == Sigpipe::ignore) std::signal(SIGPIPE, SIG_IGN);
  if (o.sigpipe == Sigpipe::default_action) std::signal(SIGPIPE, SIG_DFL);

  GnutlsGlobal global;
  if (!global.ok()) return report_setup_failure(o, std::string("gnutls_global_init: ") + gnutls_strerror(global.result()));
  ConfigResult made = make_config(o);
  if (!made.config) {
    if (made.config_error) {
      std::fprintf(stderr, "tlsnb-gnutls: %s\n", made.error.c_str());
      return exit_usage;
    }
    return report_setup_failure(o, made.error);
  }
  return run_loop(o, *made.config);
}

}  // namespace
}  // namespace tlsgnu

int main(int argc, char** argv) {
  try {
    return tlsgnu::run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::bad_alloc&) {
    std::fputs("tlsnb-gnutls: out of memory outside any attempt\n", stderr);
    return 1;
  }
}
