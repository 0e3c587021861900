// tlsnb-curl: a client under test for tlslab (clients/README.md): libcurl 7.88's multi
// interface on the program's own epoll loop, one thread, speaking the lab's contract.
#include <curl/curl.h>

#include <langinfo.h>
#include <strings.h>

#include <clocale>
#include <cstring>
#include <cstdio>
#include <string>
#include <vector>

#include "client/process_figures.h"
#include "clients/contract/contract_report.h"
#include "options.h"
#include "runner.h"

namespace tlsnb_curl {
namespace {

using contract::exit_usage;
constexpr int exit_cannot = contract::exit_lacking;

// libcurl must be the OpenSSL build: the adapter reads OpenSSL's SSL_CTX and verify codes.
bool openssl_backend(std::string* why) {
  const curl_version_info_data* info = curl_version_info(CURLVERSION_NOW);
  std::string ssl = info->ssl_version ? info->ssl_version : "";
  if (ssl.rfind("OpenSSL/", 0) != 0) {
    *why = "libcurl's TLS backend is '" + ssl + "', not OpenSSL";
    return false;
  }
  return true;
}

// --system-trust adds libcurl's built-in CA path; a build without one cannot honour it.
bool has_default_capath(std::string* why) {
  CURL* e = curl_easy_init();
  if (!e) return *why = "curl_easy_init failed", false;
  char* capath = nullptr;
  curl_easy_getinfo(e, CURLINFO_CAPATH, &capath);
  bool ok = capath != nullptr && *capath != '\0';
  curl_easy_cleanup(e);
  if (!ok) *why = "--system-trust: this libcurl was built without a default CA path";
  return ok;
}

// The URL https://NAME:PORT/ must be one libcurl parses back to NAME and PORT: otherwise the
// transfer would go to another host than the one asked for (e.g. NAME "a/b" is host "a").
// Also learns the A-label libcurl will look up for a U-label NAME (CURLOPT_RESOLVE needs it too).
bool check_url(Options* o, std::string* why) {
  if (!o->name.empty() && o->name[0] == '[')
    return *why = "--name '" + o->name + "': an IPv6 literal; tlsnb-curl dials IPv4 through CURLOPT_RESOLVE only", false;
  std::string text = "https://" + o->name + ":" + std::to_string(o->port) + "/";
  CURLU* url = curl_url();
  if (!url) return *why = "curl_url failed", false;
  char* host = nullptr;
  char* port = nullptr;
  char* alabel = nullptr;
  CURLUcode uc = curl_url_set(url, CURLUPART_URL, text.c_str(), 0);
  if (uc == CURLUE_OK) uc = curl_url_get(url, CURLUPART_HOST, &host, 0);
  if (uc == CURLUE_OK) uc = curl_url_get(url, CURLUPART_PORT, &port, 0);
  if (uc == CURLUE_OK) uc = curl_url_get(url, CURLUPART_HOST, &alabel, CURLU_PUNYCODE);
  bool ok = uc == CURLUE_OK && strcasecmp(host, o->name.c_str()) == 0 && std::to_string(o->port) == port;
  if (ok) o->name_alabel = alabel;
  else if (uc != CURLUE_OK) *why = "--name '" + o->name + "': libcurl's URL API refuses it as a host (" + curl_url_strerror(uc) + ")";
  else *why = "--name '" + o->name + "': libcurl parses https://NAME:PORT/ as host '" + host + "' port '" + port + "'";
  curl_free(host);
  curl_free(port);
  curl_free(alabel);
  curl_url_cleanup(url);
  return ok;
}

// The summary's own figures: libcurl's sockets, connections and multi handles, after peak_fds.
contract::OwnFigures own_figures(const RunStats& s) {
  contract::OwnFigures own;
  own.after_peak_fds = [&s](tlsnb::JsonLine& line) {
    line.num("peak_sockets", s.peak_sockets).num("connections", s.connections).num("multis", s.multis);
  };
  own.text_after_peak_fds = "peak_sockets=" + std::to_string(s.peak_sockets) + " ";
  return own;
}

int run(const std::vector<std::string>& args) {
  ParseResult parsed = parse_options(args);
  if (int code = 0; !contract::ready_to_run(parsed, "tlsnb-curl", usage(), &code)) return code;
  Options o{*parsed.options, /*name_alabel=*/""};
  contract::apply_sigpipe(o.sigpipe);

  // As the curl tool does: the environment's locale, so libidn2 can convert a U-label NAME;
  // C.UTF-8 when that is not UTF-8 (the lab runs with no LANG).
  std::setlocale(LC_CTYPE, "");
  if (std::strcmp(nl_langinfo(CODESET), "UTF-8") != 0) std::setlocale(LC_CTYPE, "C.UTF-8");
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    std::fprintf(stderr, "tlsnb-curl: curl_global_init failed\n");
    return exit_usage;
  }
  int code = 0;
  std::string why;
  if (!openssl_backend(&why) || (o.system_trust && !has_default_capath(&why)) || !check_url(&o, &why))
    code = exit_cannot;
  if (code != 0) {
    std::fprintf(stderr, "tlsnb-curl: %s\n", why.c_str());
    curl_global_cleanup();
    return code;
  }

  contract::Report report(o.json);
  RunStats stats;
  {
    Runner runner(o, report);
    std::string error;
    if (!runner.prepare(&error) || !runner.run(&stats, &error)) {
      std::fprintf(stderr, "tlsnb-curl: %s\n", error.c_str());
      code = exit_usage;
    }
  }  // every easy handle, multi and share is cleaned here
  if (code == 0) {
    report.summary(stats, tlsnb::read_process_figures(), own_figures(stats));
    code = stats.failed == 0 ? 0 : 1;
  }
  std::fflush(stdout);
  curl_global_cleanup();
  return code;
}

}  // namespace
}  // namespace tlsnb_curl

int main(int argc, char** argv) { return tlsnb_curl::run(std::vector<std::string>(argv + 1, argv + argc)); }
