#include "options.h"

#include <openssl/objects.h>
#include <openssl/ssl.h>

#include "dns_name.h"
#include "flag_table.h"
#include "idna_name.h"
#include "pins.h"

namespace tlsnb {

namespace {

// --ocsp-staple off|check|require.
Flag<Options> staple_policy() {
  return {true, [](Options& o, const std::string& v) -> std::string {
            if (v == "off") o.staple = StaplePolicy::off;
            else if (v == "check") o.staple = StaplePolicy::check;
            else if (v == "require") o.staple = StaplePolicy::require;
            else return "expects off, check or require, got '" + v + "'";
            return "";
          }};
}

// The choices of trust that need each other: one line when they do not fit.
std::string check_trust_choices(const Options& o) {
  if (o.client_cert.empty() != o.client_key.empty()) return "--cert and --key go together";
  if (std::string err = check_name_choice(o); !err.empty()) return err;
  if (!o.verify && !o.pins.empty()) return "--pin-sha256 needs verification: pins never replace it (drop --no-verify)";
  if (!o.verify && (!o.crls.empty() || o.crl_all || o.staple != StaplePolicy::off))
    return "--crl, --crl-all and --ocsp-staple need verification (drop --no-verify)";
  if (!o.verify && o.checks_policies())
    return "--policy, --explicit-policy, --inhibit-policy-mapping and --inhibit-any-policy need verification (drop --no-verify)";
  return "";
}

// The contract's core flags, then tlsnb's own: the resolver's, the name check's, the chain's, revocation's,
// the client certificate's, the pins', the TLS version's, the transport's and SIGPIPE's.
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
        {"--head-start-ms", number<Options>(&Options::head_start_ms, 1, 86400000)},
        {"--allow-private", toggle<Options>(&Options::allow_private, true)},
        {"--no-verify-name", toggle<Options>(&Options::verify_name, false)},
        {"--verify-depth", {true, [](Options& o, const std::string& v) -> std::string {
                              long depth = 0;
                              if (!parse_long(v, 0, 100, &depth)) return "expects an integer in 0..100, got '" + v + "'";
                              o.verify_depth = static_cast<int>(depth);
                              return "";
                            }}},
        {"--crl", {true, [](Options& o, const std::string& v) -> std::string {
                     if (v.empty()) return "expects a non-empty value";
                     o.crls.push_back(v);
                     return "";
                   }}},
        {"--crl-all", toggle<Options>(&Options::crl_all, true)},
        {"--policy", {true, [](Options& o, const std::string& v) -> std::string {
                        ASN1_OBJECT* oid = OBJ_txt2obj(v.c_str(), 1);  // numeric form only
                        ASN1_OBJECT_free(oid);
                        if (oid == nullptr) return "expects a policy OID in dotted form (2.5.29.32.0 is anyPolicy), got '" + v + "'";
                        o.policies.push_back(v);
                        return "";
                      }}},
        {"--explicit-policy", toggle<Options>(&Options::explicit_policy, true)},
        {"--inhibit-policy-mapping", toggle<Options>(&Options::inhibit_policy_mapping, true)},
        {"--inhibit-any-policy", toggle<Options>(&Options::inhibit_any_policy, true)},
        {"--ocsp-staple", staple_policy()},
        {"--cert", text<Options>(&Options::client_cert)},
        {"--key", text<Options>(&Options::client_key)},
        {"--pin-sha256", {true, [](Options& o, const std::string& v) -> std::string {
                            std::string raw;
                            if (!decode_pin(v, &raw)) return "expects the base64 of 32 bytes (RFC 7469), got '" + v + "'";
                            o.pins.push_back(raw);
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

// A --name the caller gave: a bare IP literal, or a host name as a DNS query could carry it
// (dns::name_text_problem: at most 253 characters, labels of 1..63 letters, digits, '-' and '_'; its
// A-label when IDNA made one). A bracketed literal is TARGET:PORT's form, not a name. TARGET taken as the
// name is not checked here: over --ns its lookup ends with its own code (dns/dns.toml code/bad-name).
std::string check_given_name(const Options& o) {
  if (is_ip_literal(o.name)) return "";
  if (o.name.front() == '[' && o.name.back() == ']') {  // o.name is not empty: --name refuses an empty value
    std::string inside = o.name.substr(1, o.name.size() - 2);
    if (is_ip_literal(inside))
      return "--name '" + o.name + "': an IP literal goes bare (--name " + inside + "); brackets are for TARGET:PORT";
  }
  std::string problem = dns::name_text_problem(o.name);
  if (problem.empty()) return "";
  if (o.name_unicode.empty()) return "--name: " + problem;
  return "--name '" + o.name_unicode + "' (its A-label '" + o.name + "'): " + problem;  // its offsets count in the A-label
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
  const bool name_given = !o.name.empty();
  if (o.name.empty()) o.name = o.target;
  if (std::string err = to_wire_names(o); !err.empty()) {
    result.error = err;
    return result;
  }
  if (std::string err = name_given ? check_given_name(o) : ""; !err.empty()) {
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
  if (std::string err = check_trust_choices(o); !err.empty()) {
    result.error = err;
    return result;
  }
  result.options = o;
  return result;
}

const char* usage() {
  return R"(usage: tlsnb [options] TARGET:PORT

A non-blocking TLS client: one thread, epoll, many attempts as state machines.
TARGET is an IP literal (IPv6 in brackets: [::1]:443) or a name (a name needs --connect or --ns).

  --name NAME           name the certificate must carry; SNI (default TARGET): a host name (at most
                        253 characters, labels of 63: letters, digits, '-', '_') or a bare IP literal
  --connect IP          dial this IPv4 or IPv6 address; TARGET is then only the name
  --ns IP:PORT          resolve TARGET over DNS (TCP) on the event loop with this server,
                        judge every address, pin one, dial it as a literal
  --dns-udp             with --ns: ask over UDP first, retry over TCP when truncated
  --dns-timeout-ms MS   with --ns: a lookup's own deadline (default 1000; lookup/-203 when it passes)
  --head-start-ms MS    with --ns: IPv6's lead over IPv4 when a name has both (RFC 8305; default 250)
  --allow-private       accept private, loopback and other special-purpose addresses
  --cafile PATH         trust anchors (PEM); without it the system store is used
  --system-trust        also load the system's default trust paths
  --no-verify           do not verify the peer (controls only)
  --no-verify-name      verify the chain as ever but match no name: the leaf's DNS or IP SANs are
                        not checked against --name/TARGET (SNI still sent for a name); not with --no-verify
  --partial-chain       accept a chain ending at any trusted certificate (X509_V_FLAG_PARTIAL_CHAIN)
  --verify-depth N      maximum chain depth (OpenSSL's default when absent)
  --crl FILE            a CRL (PEM; repeatable): the leaf's issuer must have a valid one (CRL_CHECK)
  --crl-all             every certificate of the chain needs its issuer's CRL (CRL_CHECK_ALL)
  --policy OID          a policy of the initial policy set (RFC 5280 6.1.1; repeatable; 2.5.29.32.0 is
                        anyPolicy); it, or any of the three below, turns policy processing on
                        (X509_V_FLAG_POLICY_CHECK); without them certificate policies are not processed
  --explicit-policy     initial-explicit-policy: the path must be valid for a policy of the set
  --inhibit-policy-mapping
                        initial-policy-mapping-inhibit: policy mappings are not followed
  --inhibit-any-policy  initial-any-policy-inhibit: anyPolicy in a certificate stands for nothing
  --ocsp-staple off|check|require
                        off (default): ask for no staple; check: ask, and a staple that comes must
                        verify (signature, responder authorised, times within 300 s, the leaf's id,
                        status good); require: one must come. A must-staple leaf makes check require.
                        A resumed session is not checked again: it was cached only after a full
                        handshake whose staple passed
  --cert FILE --key FILE
                        a client certificate (chain, PEM) and its key, sent when the server asks
                        and names its issuer (or names none); a key that does not match: exit 2
  --pin-sha256 BASE64   SPKI SHA-256 pin (RFC 7469; repeatable): after verification, a certificate
                        of the verified chain must match one (handshake/50 when none does)
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
-1 peer closed without an alert (revocation: 23 revoked, 3 no CRL, 12 CRL expired, 11 CRL not
yet valid, 8 CRL signature, 35 issuer without cRLSign; staple: 23 revoked, 75 unknown, 73 none
came, an OCSP_R_ code when it does not verify; 50 no pin matched); write/code or errno; read/code or errno, -1 closed without
close_notify, -2 chunked response, -3 malformed response, 0 close_notify before the end;
setup/what; lookup/negative resolver code; refused/packed IPv4 (IPv6: -6, the address in the text); deadline/stage interrupted.
Exit: 0 every attempt ok, 1 any failed, 2 bad usage or unusable configuration.
)";
}

}  // namespace tlsnb
