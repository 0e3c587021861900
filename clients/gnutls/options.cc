#include "options.h"

#include <arpa/inet.h>

#include <cerrno>
#include <cstdlib>
#include <functional>
#include <map>

namespace tlsgnu {

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

using Apply = std::function<std::string(Options&, const std::string&)>;

struct Flag {
  bool takes_value;
  Apply apply;             // returns an error text or ""
  const char* missing = nullptr;  // non-null: the contract's flag this client does not have (exit 89)
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

// A flag of the contract this client cannot honour: its value is still checked for presence.
Flag lacking(bool takes_value, const char* why) {
  return {takes_value, [](Options&, const std::string&) -> std::string { return ""; }, why};
}

const std::map<std::string, Flag>& flags() {
  static const std::map<std::string, Flag> table = {
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
                         if (v == "bio") o.transport = Transport::callbacks;
                         else if (v == "fd") o.transport = Transport::library;
                         else return "expects bio or fd, got '" + v + "'";
                         return "";
                       }}},
      {"--sigpipe", {true, [](Options& o, const std::string& v) -> std::string {
                       if (v == "default") o.sigpipe = SigpipeMode::default_action;
                       else if (v == "ignore") o.sigpipe = SigpipeMode::ignore;
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
      {"--verify-depth", lacking(true, "--verify-depth: GnuTLS's gnutls_certificate_set_verify_limits counts the "
                                       "certificates the peer sent, not OpenSSL's chain depth; not offered")},
      {"--ns", lacking(true, "--ns: this client has no resolver (dial with --connect)")},
      {"--dns-udp", lacking(false, "--dns-udp: this client has no resolver")},
      {"--dns-timeout-ms", lacking(true, "--dns-timeout-ms: this client has no resolver")},
      {"--allow-private", lacking(false, "--allow-private: this client has no resolver")},
  };
  return table;
}

}  // namespace

bool is_ipv4(const std::string& text) {
  in_addr addr{};
  return inet_pton(AF_INET, text.c_str(), &addr) == 1;
}

bool Options::name_is_ip() const { return is_ipv4(name); }

std::string Options::dial_ip() const { return connect_ip.empty() ? target : connect_ip; }

ParseResult parse_options(const std::vector<std::string>& args) {
  ParseResult result;
  Options o;
  std::vector<std::string> positional;
  std::string unsupported;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      result.help = true;
      return result;
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
    auto it = flags().find(flag);
    if (it == flags().end()) {
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
    if (it->second.missing != nullptr && unsupported.empty()) unsupported = it->second.missing;
  }
  if (positional.size() != 1) {
    result.error = positional.empty() ? "missing TARGET:PORT" : "one TARGET:PORT expected, got '" + positional[1] + "'";
    return result;
  }
  if (!split_host_port(positional[0], &o.target, &o.port)) {
    result.error = "TARGET:PORT: expected HOST:PORT with a port in 1..65535, got '" + positional[0] + "'";
    return result;
  }
  if (o.name.empty()) o.name = o.target;
  // Usage errors first (exit 2), then what this client cannot do (exit 89).
  if (!unsupported.empty()) {
    result.unsupported = unsupported;
    return result;
  }
  if (!is_ipv4(o.target) && o.connect_ip.empty()) {
    result.error = "TARGET '" + o.target + "' is a name: give --connect IP (this client never resolves a name)";
    return result;
  }
  result.options = o;
  return result;
}

const char* usage() {
  return R"(usage: tlsnb-gnutls [options] TARGET:PORT

A non-blocking TLS client on GnuTLS 3.7: one thread, its own epoll, one state machine per
attempt. TARGET is an IPv4 literal or a name (a name needs --connect).

  --name NAME           name the certificate must carry; SNI (default TARGET; no SNI for an IP)
  --connect IP          dial this IPv4 address; TARGET is then only the name
  --cafile PATH         trust anchors (PEM); without it the system store is used
  --system-trust        also load the system store
  --no-verify           do not verify the peer (controls only)
  --partial-chain       accepted: GnuTLS always accepts a chain ending at any trusted certificate
  --tls-max 1.2|1.3     highest protocol version offered (the lowest is always TLS 1.2)
  --transport bio|fd    bio: the program's push/pull callbacks (sendmsg MSG_NOSIGNAL, recv; default)
                        fd: GnuTLS's own socket I/O (gnutls_transport_set_int)
  --sigpipe default|ignore
                        SIGPIPE disposition (default: left as inherited)
  --count N             attempts in total (default 1)
  --parallel N          attempts in flight (default 64)
  --requests K          HTTP/1.1 requests per connection, keep-alive (default 1; 0: handshake only)
  --body BYTES          POST body size (0: GET); byte i is (i * 131 + seed) % 251
  --seed N              seed of the body pattern (default 1)
  --deadline-ms MS      per attempt, from its start to its last response (default 2000)
  --resume              offer a session saved by an earlier attempt of this run
  --hold-ms MS          hold each connection open this long after the handshake
  --json                one JSON object per attempt, then one summary object
  --help                this text

Not offered (exit 89): --verify-depth, --ns and the resolver's flags.
Outcomes (stage/detail): ok/0; connect/errno; handshake/X509_V_ERR_* number or OpenSSL's packed
SSL_R_* code (see profile.toml [error_map]), -1 peer closed without an alert; write/errno;
read/errno or code, -1 closed without close_notify, -2 chunked, -3 malformed, 0 close_notify
early; setup/what; deadline/stage interrupted.
Exit: 0 every attempt ok, 1 any failed, 2 bad usage or unusable configuration, 89 not offered.
)";
}

}  // namespace tlsgnu
