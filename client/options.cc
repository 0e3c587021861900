#include "options.h"

#include <arpa/inet.h>
#include <openssl/ssl.h>

#include <cerrno>
#include <cstdlib>
#include <functional>
#include <map>

namespace tlsnb {

namespace {

bool is_ipv4(const std::string& text) {
  in_addr addr{};
  return inet_pton(AF_INET, text.c_str(), &addr) == 1;
}

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
  // Applies the flag; returns an error text or "".
  std::function<std::string(Options&, const std::string&)> apply;
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

const std::map<std::string, Flag>& flags() {
  static const std::map<std::string, Flag> table = {
      {"--name", text(&Options::name)},
      {"--connect", {true, [](Options& o, const std::string& v) -> std::string {
                       if (!is_ipv4(v)) return "expects an IPv4 literal, got '" + v + "'";
                       o.connect_ip = v;
                       return "";
                     }}},
      {"--ns", {true, [](Options& o, const std::string& v) -> std::string {
                  if (!split_host_port(v, &o.ns_ip, &o.ns_port) || !is_ipv4(o.ns_ip))
                    return "expects IPv4:PORT, got '" + v + "'";
                  return "";
                }}},
      {"--dns-udp", toggle(&Options::ns_udp, true)},
      {"--dns-timeout-ms", number(&Options::dns_timeout_ms, 1, 86400000)},
      {"--allow-private", toggle(&Options::allow_private, true)},
      {"--cafile", text(&Options::cafile)},
      {"--system-trust", toggle(&Options::system_trust, true)},
      {"--no-verify", toggle(&Options::verify, false)},
      {"--partial-chain", toggle(&Options::partial_chain, true)},
      {"--verify-depth", {true, [](Options& o, const std::string& v) -> std::string {
                            long depth = 0;
                            if (!parse_long(v, 0, 100, &depth)) return "expects an integer in 0..100, got '" + v + "'";
                            o.verify_depth = static_cast<int>(depth);
                            return "";
                          }}},
      {"--tls-max", {true, [](Options& o, const std::string& v) -> std::string {
                       if (v == "1.2") o.tls_max = TLS1_2_VERSION;
                       else if (v == "1.3") o.tls_max = TLS1_3_VERSION;
                       else return "expects 1.2 or 1.3, got '" + v + "'";
                       return "";
                     }}},
      {"--transport", {true, [](Options& o, const std::string& v) -> std::string {
                         if (v == "bio") o.transport = TransportKind::bio;
                         else if (v == "fd") o.transport = TransportKind::fd;
                         else return "expects bio or fd, got '" + v + "'";
                         return "";
                       }}},
      {"--sigpipe", {true, [](Options& o, const std::string& v) -> std::string {
                       if (v == "default") o.sigpipe_ignore = false;
                       else if (v == "ignore") o.sigpipe_ignore = true;
                       else return "expects default or ignore, got '" + v + "'";
                       return "";
                     }}},
      {"--count", number(&Options::count, 1, 100000000)},
      {"--parallel", number(&Options::parallel, 1, 65536)},
      {"--requests", number(&Options::requests, 0, 1000000)},
      {"--body", number(&Options::body, 0, 1L << 30)},
      {"--deadline-ms", number(&Options::deadline_ms, 1, 86400000)},
      {"--resume", toggle(&Options::resume, true)},
      {"--hold-ms", number(&Options::hold_ms, 0, 86400000)},
      {"--json", toggle(&Options::json, true)},
      {"--seed", {true, [](Options& o, const std::string& v) -> std::string {
                    long seed = 0;
                    if (!parse_long(v, 0, 4294967295L, &seed)) return "expects an integer in 0..4294967295, got '" + v + "'";
                    o.seed = static_cast<uint32_t>(seed);
                    return "";
                  }}},
  };
  return table;
}

}  // namespace

ParseResult parse_options(const std::vector<std::string>& args) {
  ParseResult result;
  Options o;
  std::vector<std::string> positional;
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
  if (!o.target_is_ip() && o.connect_ip.empty() && o.ns_ip.empty()) {
    result.error = "TARGET '" + o.target + "' is a name: give --connect IP or --ns IP:PORT (tlsnb never blocks in a resolver)";
    return result;
  }
  if (!o.connect_ip.empty() && !o.ns_ip.empty()) {
    result.error = "--connect and --ns exclude each other";
    return result;
  }
  if (!o.ns_ip.empty() && o.target_is_ip()) {
    result.error = "--ns needs TARGET to be a name, got the IP literal '" + o.target + "'";
    return result;
  }
  result.options = o;
  return result;
}

const char* usage() {
  return R"(usage: tlsnb [options] TARGET:PORT

A non-blocking TLS client: one thread, epoll, many attempts as state machines.
TARGET is an IPv4 literal or a name (a name needs --connect or --ns).

  --name NAME           name the certificate must carry; SNI (default TARGET)
  --connect IP          dial this IPv4 address; TARGET is then only the name
  --ns IP:PORT          resolve TARGET over DNS (TCP) on the event loop with this server,
                        judge every address, pin one, dial it as a literal
  --dns-udp             with --ns: ask over UDP first, retry over TCP when truncated
  --dns-timeout-ms MS   with --ns: a lookup's own deadline (default 1000; lookup/-203 when it passes)
  --allow-private       accept private, loopback and other special-purpose addresses
  --cafile PATH         trust anchors (PEM); without it the system store is used
  --system-trust        also load the system's default trust paths
  --no-verify           do not verify the peer (controls only)
  --partial-chain       accept a chain ending at any trusted certificate (X509_V_FLAG_PARTIAL_CHAIN)
  --verify-depth N      maximum chain depth (OpenSSL's default when absent)
  --tls-max 1.2|1.3     highest protocol version offered (the lowest is always TLS 1.2)
  --transport bio|fd    memory BIOs moved with send/recv (default) or OpenSSL's socket BIO
  --sigpipe default|ignore
                        SIGPIPE disposition (default: left as it is, so the fd finding reproduces)
  --count N             attempts in total (default 1)
  --parallel N          attempts in flight (default 64)
  --requests K          HTTP/1.1 requests per connection, keep-alive (default 1; 0: handshake only)
  --body BYTES          POST body size (0: GET); byte i is (i * 131 + seed) % 251
  --seed N              seed of the body pattern (default 1)
  --deadline-ms MS      per attempt, from lookup to the last response (default 2000)
  --resume              offer a saved session (keyed by name, port and trust configuration)
  --hold-ms MS          hold each connection open this long after the handshake
  --json                one JSON object per attempt, then one summary object
  --help                this text

Outcomes (stage/detail): ok/0; connect/errno; handshake/X509_V_ERR_* or OpenSSL code,
-1 peer closed without an alert; write/code or errno; read/code or errno, -1 closed without
close_notify, -2 chunked response, -3 malformed response, 0 close_notify before the end;
setup/what; lookup/negative resolver code; refused/packed IPv4; deadline/stage interrupted.
Exit: 0 every attempt ok, 1 any failed, 2 bad usage or unusable configuration.
)";
}

}  // namespace tlsnb
