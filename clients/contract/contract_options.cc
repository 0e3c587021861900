#include "contract_options.h"

#include <arpa/inet.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>

namespace contract {

namespace {

bool parse_long(const std::string& text, long lo, long hi, long* out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || value < lo || value > hi) return false;
  *out = value;
  return true;
}

// "HOST:PORT" with a port in 1..65535.
bool split_host_port(const std::string& text, std::string* host, uint16_t* port) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  long value = 0;
  if (!parse_long(text.substr(colon + 1), 1, 65535, &value)) return false;
  *host = text.substr(0, colon);
  *port = static_cast<uint16_t>(value);
  return true;
}

struct Flag {
  bool takes_value;
  std::function<std::string(Options&, const std::string&)> apply;  // returns an error text or ""
  const char* lacked = nullptr;  // non-null: this client does not have the flag (exit 89)
};

Flag number(long Options::*field, long lo, long hi) {
  return {true, [=](Options& o, const std::string& v) -> std::string {
            if (!parse_long(v, lo, hi, &(o.*field)))
              return "expects an integer in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got '" + v + "'";
            return "";
          }};
}

Flag toggle(bool Options::*field, bool value) {
  return {false, [=](Options& o, const std::string&) -> std::string {
            o.*field = value;
            return "";
          }};
}

Flag text(std::string Options::*field) {
  return {true, [=](Options& o, const std::string& v) -> std::string {
            if (v.empty()) return "expects a non-empty value";
            o.*field = v;
            return "";
          }};
}

// The contract's flags every client has, then the ones this client lacks.
std::map<std::string, Flag> flags(const Lacks& lacks) {
  std::map<std::string, Flag> table = {
      {"--name", text(&Options::name)},
      {"--connect", {true, [](Options& o, const std::string& v) -> std::string {
                       if (!is_ipv4(v)) return "expects an IPv4 literal, got '" + v + "'";
                       o.connect_ip = v;
                       return "";
                     }}},
      {"--cafile", text(&Options::cafile)},
      {"--system-trust", toggle(&Options::system_trust, true)},
      {"--no-verify", toggle(&Options::verify, false)},
      {"--partial-chain", toggle(&Options::partial_chain, true)},
      {"--tls-max", {true, [](Options& o, const std::string& v) -> std::string {
                       if (v == "1.2") o.tls_max = 12;
                       else if (v == "1.3") o.tls_max = 13;
                       else return "expects 1.2 or 1.3, got '" + v + "'";
                       return "";
                     }}},
      {"--transport", {true, [](Options& o, const std::string& v) -> std::string {
                         if (v == "bio") o.transport = Transport::bio;
                         else if (v == "fd") o.transport = Transport::fd;
                         else return "expects bio or fd, got '" + v + "'";
                         return "";
                       }}},
      {"--sigpipe", {true, [](Options& o, const std::string& v) -> std::string {
                       if (v == "default") o.sigpipe = Sigpipe::default_action;
                       else if (v == "ignore") o.sigpipe = Sigpipe::ignore;
                       else return "expects default or ignore, got '" + v + "'";
                       return "";
                     }}},
      {"--count", number(&Options::count, 1, 100000000)},
      {"--parallel", number(&Options::parallel, 1, 65536)},
      {"--requests", number(&Options::requests, 0, 1000000)},
      {"--body", number(&Options::body, 0, 1L << 30)},
      {"--deadline-ms", number(&Options::deadline_ms, 1, 86400000)},
      {"--hold-ms", number(&Options::hold_ms, 0, 86400000)},
      {"--resume", toggle(&Options::resume, true)},
      {"--json", toggle(&Options::json, true)},
      {"--seed", {true, [](Options& o, const std::string& v) -> std::string {
                    long seed = 0;
                    if (!parse_long(v, 0, 4294967295L, &seed)) return "expects an integer in 0..4294967295, got '" + v + "'";
                    o.seed = static_cast<uint32_t>(seed);
                    return "";
                  }}},
  };
  for (const LackedFlag& f : lacks.flags)
    table[f.flag] = {f.takes_value, [](Options&, const std::string&) -> std::string { return ""; }, f.why};
  return table;
}

ParseResult fail(int code, std::string why) {
  ParseResult r;
  r.exit_code = code;
  r.error = std::move(why);
  return r;
}

}  // namespace

bool is_ipv4(const std::string& text) {
  in_addr addr{};
  return inet_pton(AF_INET, text.c_str(), &addr) == 1;
}

bool Options::name_is_ip() const { return is_ipv4(name); }

std::string Options::dial_ip() const { return connect_ip.empty() ? target : connect_ip; }

ParseResult parse_options(const std::vector<std::string>& args, const Lacks& lacks) {
  const std::map<std::string, Flag> table = flags(lacks);
  Options o;
  std::vector<std::string> positional;
  std::string lacked;  // the first flag asked for that this client does not have
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      ParseResult r;
      r.help = true;
      return r;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      positional.push_back(arg);
      continue;
    }
    std::string flag = arg, value;
    bool inline_value = false;
    if (auto eq = arg.find('='); eq != std::string::npos && arg.rfind("--", 0) == 0) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      inline_value = true;
    }
    auto it = table.find(flag);
    if (it == table.end()) return fail(exit_usage, "unknown flag '" + flag + "' (see --help)");
    if (it->second.takes_value && !inline_value) {
      if (i + 1 >= args.size()) return fail(exit_usage, flag + ": missing value");
      value = args[++i];
    } else if (!it->second.takes_value && inline_value) {
      return fail(exit_usage, flag + ": takes no value");
    }
    if (std::string err = it->second.apply(o, value); !err.empty()) return fail(exit_usage, flag + ": " + err);
    if (it->second.lacked != nullptr && lacked.empty()) lacked = it->second.lacked;
  }
  if (positional.size() != 1)
    return fail(exit_usage, positional.empty() ? "missing TARGET:PORT" : "one TARGET:PORT expected, got '" + positional[1] + "'");
  if (!split_host_port(positional[0], &o.target, &o.port))
    return fail(exit_usage, "TARGET:PORT: expected HOST:PORT with a port in 1..65535, got '" + positional[0] + "'");
  if (o.name.empty()) o.name = o.target;
  if (lacked.empty() && o.transport == Transport::fd && lacks.transport_fd != nullptr) lacked = lacks.transport_fd;
  if (!lacked.empty()) return fail(exit_lacking, lacked);
  if (!is_ipv4(o.target) && o.connect_ip.empty())
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
