#include "contract_options.h"

#include <cstdio>

#include "client/flag_table.h"

namespace contract {

namespace {

ParseResult fail(int code, std::string why) {
  ParseResult r;
  r.exit_code = code;
  r.error = std::move(why);
  return r;
}

}  // namespace

bool Options::name_is_ip() const { return tlsnb::is_ipv4(name); }

std::string Options::dial_ip() const { return connect_ip.empty() ? target : connect_ip; }

ParseResult parse_options(const std::vector<std::string>& args, const Lacks& lacks) {
  std::string lacked;  // the first flag asked for that this client does not have
  tlsnb::FlagTable<Options> table = tlsnb::core_flags<Options>();
  table["--tls-max"] = tlsnb::choice<Options, int>(&Options::tls_max, "1.2", 12, "1.3", 13);
  table["--transport"] = tlsnb::choice<Options, Transport>(&Options::transport, "bio", Transport::bio, "fd", Transport::fd);
  table["--sigpipe"] =
      tlsnb::choice<Options, Sigpipe>(&Options::sigpipe, "default", Sigpipe::default_action, "ignore", Sigpipe::ignore);
  for (const LackedFlag& f : lacks.flags) {
    table[f.flag] = {f.takes_value, [&lacked, why = f.why](Options&, const std::string&) -> std::string {
                       if (lacked.empty()) lacked = why;
                       return "";
                     }};
  }
  Options o;
  tlsnb::Arguments words = tlsnb::apply_flags(args, table, o);
  if (words.help) {
    ParseResult r;
    r.help = true;
    return r;
  }
  if (!words.error.empty()) return fail(exit_usage, words.error);
  if (std::string err = tlsnb::take_target(words.positional, &o.target, &o.port); !err.empty())
    return fail(exit_usage, err);
  if (o.name.empty()) o.name = o.target;
  if (lacked.empty() && o.transport == Transport::fd && lacks.transport_fd != nullptr) lacked = lacks.transport_fd;
  if (!lacked.empty()) return fail(exit_lacking, lacked);
  if (!tlsnb::is_ipv4(o.target) && o.connect_ip.empty())
    return fail(exit_usage, "TARGET '" + o.target + "' is a name: give --connect IP " + lacks.never_resolves);
  ParseResult r;
  r.options = o;
  return r;
}

bool ready_to_run(const ParseResult& parsed, const char* program, const char* usage, int* exit_code) {
  if (parsed.help) {
    std::fputs(usage, stdout);
    *exit_code = 0;
    return false;
  }
  if (!parsed.options) {
    std::fprintf(stderr, "%s: %s\n", program, parsed.error.c_str());
    *exit_code = parsed.exit_code;
    return false;
  }
  return true;
}

}  // namespace contract
