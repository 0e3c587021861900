// libcurl's result for an attempt -> the lab's (stage, detail). The text keeps libcurl's own
// words ("CURLE_x: errbuf"); the number may lose information (profile.toml [error_map]).
#pragma once

#include <curl/curl.h>

#include <string>

#include "client/outcome.h"

namespace tlsnb_curl {

// The lab's stages, details and outcomes are the reference's (client/outcome.h, one copy).
using tlsnb::make_outcome;
using tlsnb::Outcome;
using tlsnb::Stage;
using tlsnb::stage_name;
namespace details = tlsnb::details;

// How far an attempt got, as far as the adapter can tell.
struct Progress {
  bool tcp_connected = false;  // CURLINFO_CONNECT_TIME_T > 0 on the attempt's first transfer
  bool tls_done = false;       // SSL_CB_HANDSHAKE_DONE seen, or CURLINFO_APPCONNECT_TIME_T > 0
  bool sending_body = false;   // a POST whose body libcurl has not passed on in full
  bool host_is_ip = false;     // the URL's host is an IP literal (curl checks IP SANs)
  bool verify_on = true;        // --no-verify not given
  long x509_error = 0;          // the first error OpenSSL's chain verification reported (observed only)
  int x509_depth = -1;          // and its depth
  bool close_notify_seen = false;  // the peer's close_notify alert arrived (SSL_CB_READ_ALERT)
  int fatal_alert = 0;           // the description of the peer's fatal alert (SSL_CB_READ_ALERT), 0 if none
  bool resolve_refused = false;  // libcurl started a name lookup; the resolver-start callback refused it
  bool second_connection_refused = false;  // libcurl wanted a new connection mid-attempt
  long request_no = 1;         // the request running (1-based)
};

const char* curl_code_name(CURLcode code);
// The stage running now (deadline/<stage>).
Stage running_stage(const Progress& p);
// The packed OpenSSL code in curl's errbuf ("... error:0A00010B:SSL routines::..."), 0 if none.
unsigned long openssl_code_in(const std::string& text);
// The errno whose strerror() text libcurl put in errbuf ("Recv failure: Connection reset by peer"), 0 if none.
long errno_in_text(const std::string& text);
Outcome map_curl_error(CURLcode code, const std::string& errbuf, long verify_result, long os_errno, const Progress& p);

}  // namespace tlsnb_curl
