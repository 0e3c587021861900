// A command line as a table of flags: each says whether it takes a value and how it fills the
// options, and apply_flags() walks the arguments to the one error line a bad one gets. The
// flags whose meaning and checks every client of the contract shares are core_flags()
// (clients/README.md "Arguments"): tlsnb's table and the clients under test's
// (clients/contract) both start from them.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tlsnb {

// A decimal in lo..hi, nothing else on the line.
bool parse_long(const std::string& text, long lo, long hi, long* out);
// "HOST:PORT" or "[IPv6]:PORT" with a port in 1..65535 (host without the brackets).
bool split_host_port(const std::string& text, std::string* host, uint16_t* port);
bool is_ipv4(const std::string& text);
bool is_ip_literal(const std::string& text);  // IPv4 or IPv6 (no brackets)

template <class Options>
struct Flag {
  bool takes_value;
  std::function<std::string(Options&, const std::string&)> apply;  // returns an error text or ""
};

template <class Options>
using FlagTable = std::map<std::string, Flag<Options>>;

template <class Options>
Flag<Options> number(long Options::*field, long lo, long hi) {
  return {true, [=](Options& o, const std::string& v) -> std::string {
            if (!parse_long(v, lo, hi, &(o.*field)))
              return "expects an integer in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got '" + v + "'";
            return "";
          }};
}

template <class Options>
Flag<Options> toggle(bool Options::*field, bool value) {
  return {false, [=](Options& o, const std::string&) -> std::string {
            o.*field = value;
            return "";
          }};
}

template <class Options>
Flag<Options> text(std::string Options::*field) {
  return {true, [=](Options& o, const std::string& v) -> std::string {
            if (v.empty()) return "expects a non-empty value";
            o.*field = v;
            return "";
          }};
}

// One of two words, each standing for a value: "expects A or B, got 'v'" for any other.
template <class Options, class Value>
Flag<Options> choice(Value Options::*field, const char* a, Value if_a, const char* b, Value if_b) {
  return {true, [=](Options& o, const std::string& v) -> std::string {
            if (v == a) o.*field = if_a;
            else if (v == b) o.*field = if_b;
            else return std::string("expects ") + a + " or " + b + ", got '" + v + "'";
            return "";
          }};
}

// --name, --connect, --cafile, --system-trust, --no-verify, --partial-chain, --count,
// --parallel, --requests, --body, --deadline-ms, --hold-ms, --resume, --json, --seed.
template <class Options>
FlagTable<Options> core_flags() {
  using O = Options;
  return {
      {"--name", text<O>(&O::name)},
      {"--connect", {true, [](O& o, const std::string& v) -> std::string {
                       if (!is_ipv4(v)) return "expects an IPv4 literal, got '" + v + "'";
                       o.connect_ip = v;
                       return "";
                     }}},
      {"--cafile", text<O>(&O::cafile)},
      {"--system-trust", toggle<O>(&O::system_trust, true)},
      {"--no-verify", toggle<O>(&O::verify, false)},
      {"--partial-chain", toggle<O>(&O::partial_chain, true)},
      {"--count", number<O>(&O::count, 1, 100000000)},
      {"--parallel", number<O>(&O::parallel, 1, 65536)},
      {"--requests", number<O>(&O::requests, 0, 1000000)},
      {"--body", number<O>(&O::body, 0, 1L << 30)},
      {"--deadline-ms", number<O>(&O::deadline_ms, 1, 86400000)},
      {"--hold-ms", number<O>(&O::hold_ms, 0, 86400000)},
      {"--resume", toggle<O>(&O::resume, true)},
      {"--json", toggle<O>(&O::json, true)},
      {"--seed", {true, [](O& o, const std::string& v) -> std::string {
                    long seed = 0;
                    if (!parse_long(v, 0, 4294967295L, &seed)) return "expects an integer in 0..4294967295, got '" + v + "'";
                    o.seed = static_cast<uint32_t>(seed);
                    return "";
                  }}},
  };
}

// --no-verify-name (an optional flag: tlsnb's table and the contract's add it) verifies the chain
// and skips the name; --no-verify verifies nothing: the pair is bad usage ("" when not both).
template <class Options>
std::string check_name_choice(const Options& o) {
  if (!o.verify && !o.verify_name)
    return "--no-verify-name and --no-verify exclude each other (the first still verifies the chain; drop one)";
  return "";
}

// What the arguments said: --help, or the words that are not flags, or the one error line.
struct Arguments {
  bool help = false;
  std::vector<std::string> positional;
  std::string error;
};

// Applies every flag in order (--flag value or --flag=value); stops at --help or the first error.
template <class Options>
Arguments apply_flags(const std::vector<std::string>& args, const FlagTable<Options>& table, Options& o) {
  Arguments result;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      result.help = true;
      return result;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      result.positional.push_back(arg);
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
    if (it == table.end()) {
      result.error = "unknown flag '" + flag + "' (see --help)";
      return result;
    }
    if (it->second.takes_value && !inline_value) {
      if (i + 1 >= args.size()) {
        result.error = flag + ": missing value";
        return result;
      }
      value = args[++i];
    } else if (!it->second.takes_value && inline_value) {
      result.error = flag + ": takes no value";
      return result;
    }
    if (std::string err = it->second.apply(o, value); !err.empty()) {
      result.error = flag + ": " + err;
      return result;
    }
  }
  return result;
}

// TARGET:PORT, the one word that is not a flag: "" or the one error line.
std::string take_target(const std::vector<std::string>& positional, std::string* host, uint16_t* port);

}  // namespace tlsnb
