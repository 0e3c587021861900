#include "options.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstring>

namespace tlsnb_curl {

namespace {

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

ParseResult parse_options(const std::vector<std::string>& args) {
  static const contract::Lacks lacks = {
      {{"--verify-depth", true, "--verify-depth: libcurl 7.88 has no option for the chain depth "
                                "(only the CURLOPT_SSL_CTX_FUNCTION escape hatch into OpenSSL)"},
       {"--ns", true, "--ns: libcurl resolves with getaddrinfo on a thread (or c-ares, not built here); "
                      "it cannot be pointed at a DNS server per run"}},
      // libcurl gives OpenSSL its own BIO method, whose read and write are libcurl's recv and
      // send (MSG_NOSIGNAL): the application moves the bytes, as tlsnb's bio. OpenSSL's socket
      // BIO (fd) is never used.
      "--transport fd: libcurl always gives OpenSSL its own BIO (libcurl's recv/send); "
      "OpenSSL's socket BIO is never used",
      "(tlsnb-curl never lets libcurl resolve a name)"};
  ParseResult r = contract::parse_options(args, lacks);
  if (r.options) {
    // What libcurl's options cannot say (exit 89).
    const char* lacked = r.options->crls.size() > 1 ? "--crl: libcurl takes one CRL file (CURLOPT_CRLFILE)"
                         : r.options->crl_all && r.options->crls.empty()
                             ? "--crl-all without --crl: libcurl checks CRLs only with a CRL file (CURLOPT_CRLFILE); "
                               "it has no switch that fails a chain for want of one"
                         : r.options->ocsp_staple == "check"
                             ? "--ocsp-staple check: libcurl's CURLOPT_SSL_VERIFYSTATUS always requires a staple"
                             : nullptr;
    if (lacked != nullptr) {
      r.options.reset();
      r.exit_code = contract::exit_lacking;
      r.error = lacked;
      return r;
    }
  }
  if (r.options && !r.options->cafile.empty()) {
    if (std::string err = check_trust_file(r.options->cafile); !err.empty()) {
      r.options.reset();
      r.exit_code = contract::exit_usage;
      r.error = err;
    }
  }
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
  --no-verify-name      CURLOPT_SSL_VERIFYHOST = 0, CURLOPT_SSL_VERIFYPEER = 1: the chain verified, no name matched
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
  --crl FILE            CURLOPT_CRLFILE (one file); libcurl then sets CRL_CHECK and CRL_CHECK_ALL
  --crl-all             with --crl: libcurl's CRLFILE always checks the whole chain (alone: exit 89)
  --ocsp-staple require CURLOPT_SSL_VERIFYSTATUS (off: nothing; check: exit 89)
  --cert FILE --key FILE
                        CURLOPT_SSLCERT, CURLOPT_SSLKEY (sent to any server that asks)
  --pin-sha256 BASE64   CURLOPT_PINNEDPUBLICKEY sha256//BASE64;... (the leaf's key only)
Not available (exit 89): --transport fd, --verify-depth, --ns, a second --crl, --crl-all without --crl,
--ocsp-staple check.
Outcomes (stage/detail): as tlsnb (clients/README.md); detail_text is "CURLE_x: <errbuf>".
Exit: 0 every attempt ok, 1 any failed, 2 bad usage or unusable configuration, 89 cannot do.
)";
}

}  // namespace tlsnb_curl
