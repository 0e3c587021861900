#include "options.h"

#include <openssl/ssl.h>

#include "flag_table.h"
#include "idna_name.h"

namespace tlsnb {

namespace {

// The contract's core flags, then tlsnb's own: the resolver's, the chain's, the TLS version's,
// the transport's and SIGPIPE's.
const FlagTable<Options>& flags() {
  static const FlagTable<Options> table = [] {
    FlagTable<Options> t = core_flags<Options>();
    t.insert({
        {"--ns", {true, [](Options& o, const std::string& v) -> std::string {
                    if (!split_host_port(v, &o.ns_ip, &o.ns_port) || !is_ip_literal(o.ns_ip))
                      return "expects IPv4:PORT or [IPv6]:PORT, got '" + v + "'";
                    return "";
                  }}},
        {"--dns-udp", toggle<Options>(&Options::ns_udp, true)},
        {"--dns-timeout-ms", number<Options>(&Options::dns_timeout_ms, 1, 86400000)},
        {"--allow-private", toggle<Options>(&Options::allow_private, true)},
        {"--verify-depth", {true, [](Options& o, const std::string& v) -> std::string {
                              long depth = 0;
                              if (!parse_long(v, 0, 100, &depth)) return "expects an integer in 0..100, got '" + v + "'";
                              o.verify_depth = static_cast<int>(depth);
                              return "";
                            }}},
        {"--tls-max", choice<Options, int>(&Options::tls_max, "1.2", TLS1_2_VERSION, "1.3", TLS1_3_VERSION)},
        {"--transport",
         choice<Options, TransportKind>(&Options::transport, "bio", TransportKind::bio, "fd", TransportKind::fd)},
        {"--sigpipe", choice<Options, bool>(&Options::sigpipe_ignore, "default", false, "ignore", true)},
    });
    // tlsnb dials IPv6 too (the contract's --connect stays IPv4: its clients dial IPv4 only).
    t["--connect"] = {true, [](Options& o, const std::string& v) -> std::string {
                        if (!is_ip_literal(v)) return "expects an IPv4 or IPv6 literal, got '" + v + "'";
                        o.connect_ip = v;
                        return "";
                      }};
    return t;
  }();
  return table;
}

// A non-ASCII name (--name, or TARGET when it is a name) becomes its A-label before SNI, the
// host check and the DNS query; the U-label is kept for the report.
std::string to_wire_names(Options& o) {
  if (!is_ip_literal(o.name)) {
    WireName name = wire_name(o.name);
    if (!name.error.empty()) return "--name '" + o.name + "': IDNA refuses it: " + name.error;
    if (name.ascii != o.name) o.name_unicode = o.name;
    o.name = name.ascii;
  }
  if (!is_ip_literal(o.target)) {
    WireName target = wire_name(o.target);
    if (!target.error.empty()) return "TARGET '" + o.target + "': IDNA refuses it: " + target.error;
    o.target = target.ascii;
  }
  return "";
}

}  // namespace

ParseResult parse_options(const std::vector<std::string>& args) {
  ParseResult result;
  Options o;
  Arguments words = apply_flags(args, flags(), o);
  if (words.help || !words.error.empty()) {
    result.help = words.help;
    result.error = words.error;
    return result;
  }
  if (std::string err = take_target(words.positional, &o.target, &o.port); !err.empty()) {
    result.error = err;
    return result;
  }
  if (o.name.empty()) o.name = o.target;
  if (std::string err = to_wire_names(o); !err.empty()) {
    result.error = err;
    return result;
  }
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
TARGET is an IP literal (IPv6 in brackets: [::1]:443) or a name (a name needs --connect or --ns).

  --name NAME           name the certificate must carry; SNI (default TARGET)
  --connect IP          dial this IPv4 or IPv6 address; TARGET is then only the name
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
setup/what; lookup/negative resolver code; refused/packed IPv4 (IPv6: -6, the address in the text); deadline/stage interrupted.
Exit: 0 every attempt ok, 1 any failed, 2 bad usage or unusable configuration.
)";
}

}  // namespace tlsnb
