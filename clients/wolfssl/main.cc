// tlsnb-wolfssl: a client under test for tlslab on wolfSSL 5.5 (clients/README.md contract).
#include <csignal>
#include <cstdio>
#include <new>

#include "attempt.h"
#include "clients/contract/adapter_run.h"
#include "options.h"
#include "tls_config.h"

namespace tlswolf {
namespace {

// The run's shared state could not be made for want of a resource: every attempt is setup/9.
int setup_failed(const Options& o, const std::string& why) {
  return contract::report_setup_failure<Attempt, Shared>(o, "tlsnb-wolfssl", why, setup_outcome(SetupFailure::context, why),
                                                         library_version());
}

int run(const std::vector<std::string>& args) {
  ParseResult parsed = parse_options(args);
  if (int code = 0; !contract::ready_to_run(parsed, "tlsnb-wolfssl", usage(), &code)) return code;
  const Options& o = *parsed.options;
  if (o.sigpipe == Sigpipe::ignore) std::signal(SIGPIPE, SIG_IGN);
  if (o.sigpipe == Sigpipe::default_action) std::signal(SIGPIPE, SIG_DFL);
  WolfGlobal global;
  if (!global.ok()) return setup_failed(o, "wolfSSL_Init failed");
  ConfigResult made = make_config(o);
  if (!made.config) {
    if (made.config_error) {
      std::fprintf(stderr, "tlsnb-wolfssl: %s\n", made.error.c_str());
      return made.lacking ? contract::exit_lacking : contract::exit_usage;
    }
    return setup_failed(o, made.error);
  }
  Shared shared;
  shared.tls = made.config.get();
  return contract::run_attempts<Attempt>(o, shared, "tlsnb-wolfssl", library_version());
}

}  // namespace
}  // namespace tlswolf

int main(int argc, char** argv) {
  try {
    return tlswolf::run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::bad_alloc&) {
    std::fputs("tlsnb-wolfssl: out of memory outside any attempt\n", stderr);
    return 1;
  }
}
