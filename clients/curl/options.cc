#include "options.h"

#include <arpa/inet.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>

namespace tlsnb_curl {

namespace {

constexpr int exit_usage = 2;
constexpr int exit_cannot = 89;

bool parse_long(const std::string& text, long lo, long hi, long* out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || value < lo || value > hi) return false;
  *out = value;
  return true;
}

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
  // Optional contract flags this client does not have: exit 89 with this reason.
  const char* cannot = nullptr;
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

Flag cannot(bool takes_value, const char* why) {
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
      {"--no-verify", toggle(&Options::verify, false)},
      {"--system-trust", toggle(&Options::system_trust, true)},
      {"--partial-chain", toggle(&Options::partial_chain, true)},
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
      {"--tls-max", {true, [](Options& o, const std::string& v) -> std::string {
                       if (v == "1.2") o.tls_max = 12;
                       else if (v == "1.3") o.tls_max = 13;
                       else return "expects 1.2 or 1.3, got '" + v + "'";
                       return "";
                     }}},
      {"--sigpipe", {true, [](Options& o, const std::string& v) -> std::string {
                       if (v == "default") o.sigpipe = SigpipeMode::default_action;
                       else if (v == "ignore") o.sigpipe = SigpipeMode::ignore;
                       else return "expects default or ignore, got '" + v + "'";
                       return "";
                     }}},
      // libcurl gives OpenSSL its own BIO method, whose read and write are libcurl's recv and
      // send (MSG_NOSIGNAL): the application moves the bytes, as tlsnb's bio. OpenSSL's socket
      // BIO (fd) is never used.
      {"--transport", {true, [](Options& o, const std::string& v) -> std::string {
                         if (v == "bio") o.transport_fd = false;
                         else if (v == "fd") o.transport_fd = true;
                         else return "expects bio or fd, got '" + v + "'";
                         return "";
                       }}},
      {"--verify-depth", cannot(true, "--verify-depth: libcurl 7.88 has no option for the chain depth "
                                      "(only the CURLOPT_SSL_CTX_FUNCTION escape hatch into OpenSSL)")},
      {"--ns", cannot(true, "--ns: libcurl resolves with getaddrinfo on a thread (or c-ares, not built here); "
                            "it cannot be pointed at a DNS server per run")},
  };
  return table;
}

ParseResult fail(int code, std::string why) {
  ParseResult r;
  r.exit_code = code;
  r.error = std::move(why);
  return r;
}

// A readable, non-empty regular file holding at least one PEM certificate (else exit 2, as tlsnb).
std::string check_trust_file(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return "--cafile: cannot read '" + path + "'";
  if (!S_ISREG(st.st_mode)) return "--cafile: '" + path + "' is not a regular file";
  if (st.st_size == 0) return "--cafile: '" + path + "' is empty";
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return "--cafile: cannot read '" + path + "'";
  static const char marker[] = "-----BEGIN CERTIFICATE-----";
  char line[128];
  bool found = false;
  while (!found && std::fgets(line, sizeof line, f) != nullptr) found = std::strncmp(line, marker, sizeof marker - 1) == 0;
  std::fclose(f);
  if (!found) return "--cafile: no PEM certificate in '" + path + "'";
  return "";
}

}  // namespace

bool is_ipv4(const std::string& text) {
  in_addr addr{};
  return inet_pton(AF_INET, text.c_str(), &addr) == 1;
}

std::string Options::dial_ip() const { return connect_ip.empty() ? target : connect_ip; }

ParseResult parse_options(const std::vector<std::string>& args) {
  Options o;
  std::vector<std::string> positional;
  std::string cannot_do;
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
    auto it = flags().find(flag);
    if (it == flags().end()) return fail(exit_usage, "unknown flag '" + flag + "' (see --help)");
    if (it->second.takes_value && !inline_value) {
      if (i + 1 >= args.size()) return fail(exit_usage, flag + ": missing value");
      value = args[++i];
    } else if (!it->second.takes_value && inline_value) {
      return fail(exit_usage, flag + ": takes no value");
    }
    if (it->second.cannot != nullptr) {
      if (cannot_do.empty()) cannot_do = it->second.cannot;
      continue;
    }
    if (std::string err = it->second.apply(o, value); !err.empty()) return fail(exit_usage, flag + ": " + err);
  }
  if (positional.size() != 1)
    return fail(exit_usage, positional.empty() ? "missing TARGET:PORT" : "one TARGET:PORT expected, got '" + positional[1] + "'");
  if (!split_host_port(positional[0], &o.target, &o.port))
    return fail(exit_usage, "TARGET:PORT: expected HOST:PORT with a port in 1..65535, got '" + positional[0] + "'");
  if (o.name.empty()) o.name = o.target;
  if (cannot_do.empty() && o.transport_fd)
    cannot_do = "--transport fd: libcurl always gives OpenSSL its own BIO (libcurl's recv/send); "
                "OpenSSL's socket BIO is never used";
  if (!cannot_do.empty()) return fail(exit_cannot, cannot_do);
  if (!is_ipv4(o.target) && o.connect_ip.empty())
    return fail(exit_usage, "TARGET '" + o.target + "' is a name: give --connect IP (tlsnb-curl never lets libcurl resolve a name)");
  if (!o.cafile.empty()) {
    if (std::string err = check_trust_file(o.cafile); !err.empty()) return fail(exit_usage, err);
  }
  ParseResult r;
  r.ok = true;
  r.options = o;
  return r;
}

const char* usage() {
  return R"(usage: tlsnb-curl [options] TARGET:PORT

A client under test for tlslab: libcurl 7.88 (OpenSSL backend) through the multi interface,
driven by curl_multi_socket_action on the program's own epoll loop, one thread.
One attempt = one TCP+TLS connection carrying --requests keep-alive requests.
TARGET is an IPv4 literal or a name; a name needs --connect (libcurl never resolves here).

  --name NAME           name the certificate must carry; SNI (default TARGET)
  --connect IP          dial this IPv4 address (CURLOPT_RESOLVE); TARGET is then only the name
  --cafile PATH         trust only these anchors (CURLOPT_CAINFO, CURLOPT_CAPATH = NULL)
  --system-trust        also trust libcurl's built-in CA path (CURLOPT_CAPATH)
  --no-verify           CURLOPT_SSL_VERIFYPEER = CURLOPT_SSL_VERIFYHOST = 0 (controls only)
  --partial-chain       leave libcurl's default X509_V_FLAG_PARTIAL_CHAIN on
                        (without it: CURLSSLOPT_NO_PARTIALCHAIN, as tlsnb)
  --tls-max 1.2|1.3     highest version offered (CURLOPT_SSLVERSION); the lowest is TLS 1.2
  --sigpipe default|ignore
                        SIGPIPE disposition (default: left as it is; libcurl sends with MSG_NOSIGNAL)
  --count N             attempts in total (default 1)
  --parallel N          attempts in flight (default 64): one multi handle per slot
  --requests K          HTTP/1.1 requests per connection (default 1; 0: handshake only, CONNECT_ONLY)
  --body BYTES          POST body size (0: GET); byte i is (i * 131 + seed) % 251
  --seed N              seed of the body pattern (default 1)
  --deadline-ms MS      per attempt, from its start to its last response (default 2000)
  --resume              share libcurl's SSL session cache (CURLSH, CURL_LOCK_DATA_SSL_SESSION)
  --hold-ms MS          keep each connection open at least this long after the handshake: libcurl
                        sends the requests at once, the connection is closed when the hold is over
  --json                one JSON object per attempt, then one summary object
  --help                this text

  --transport bio       accepted: libcurl's own BIO (its recv/send) is the only transport
Not available (exit 89): --transport fd, --verify-depth, --ns.
Outcomes (stage/detail): as tlsnb (clients/README.md); detail_text is "CURLE_x: <errbuf>".
Exit: 0 every attempt ok, 1 any failed, 2 bad usage or unusable configuration, 89 cannot do.
)";
}

}  // namespace tlsnb_curl
