#include "error_map.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace tlsnb_curl {

namespace {

// CURLcode names of 7.88 (curl.h), by value.
const char* const code_names[] = {
    "CURLE_OK", "CURLE_UNSUPPORTED_PROTOCOL", "CURLE_FAILED_INIT", "CURLE_URL_MALFORMAT",
    "CURLE_NOT_BUILT_IN", "CURLE_COULDNT_RESOLVE_PROXY", "CURLE_COULDNT_RESOLVE_HOST", "CURLE_COULDNT_CONNECT",
    "CURLE_WEIRD_SERVER_REPLY", "CURLE_REMOTE_ACCESS_DENIED", "CURLE_FTP_ACCEPT_FAILED", "CURLE_FTP_WEIRD_PASS_REPLY",
    "CURLE_FTP_ACCEPT_TIMEOUT", "CURLE_FTP_WEIRD_PASV_REPLY", "CURLE_FTP_WEIRD_227_FORMAT", "CURLE_FTP_CANT_GET_HOST",
    "CURLE_HTTP2", "CURLE_FTP_COULDNT_SET_TYPE", "CURLE_PARTIAL_FILE", "CURLE_FTP_COULDNT_RETR_FILE",
    "CURLE_OBSOLETE20", "CURLE_QUOTE_ERROR", "CURLE_HTTP_RETURNED_ERROR", "CURLE_WRITE_ERROR",
    "CURLE_OBSOLETE24", "CURLE_UPLOAD_FAILED", "CURLE_READ_ERROR", "CURLE_OUT_OF_MEMORY",
    "CURLE_OPERATION_TIMEDOUT", "CURLE_OBSOLETE29", "CURLE_FTP_PORT_FAILED", "CURLE_FTP_COULDNT_USE_REST",
    "CURLE_OBSOLETE32", "CURLE_RANGE_ERROR", "CURLE_HTTP_POST_ERROR", "CURLE_SSL_CONNECT_ERROR",
    "CURLE_BAD_DOWNLOAD_RESUME", "CURLE_FILE_COULDNT_READ_FILE", "CURLE_LDAP_CANNOT_BIND", "CURLE_LDAP_SEARCH_FAILED",
    "CURLE_OBSOLETE40", "CURLE_FUNCTION_NOT_FOUND", "CURLE_ABORTED_BY_CALLBACK", "CURLE_BAD_FUNCTION_ARGUMENT",
    "CURLE_OBSOLETE44", "CURLE_INTERFACE_FAILED", "CURLE_OBSOLETE46", "CURLE_TOO_MANY_REDIRECTS",
    "CURLE_UNKNOWN_OPTION", "CURLE_SETOPT_OPTION_SYNTAX", "CURLE_OBSOLETE50", "CURLE_OBSOLETE51",
    "CURLE_GOT_NOTHING", "CURLE_SSL_ENGINE_NOTFOUND", "CURLE_SSL_ENGINE_SETFAILED", "CURLE_SEND_ERROR",
    "CURLE_RECV_ERROR", "CURLE_OBSOLETE57", "CURLE_SSL_CERTPROBLEM", "CURLE_SSL_CIPHER",
    "CURLE_PEER_FAILED_VERIFICATION", "CURLE_BAD_CONTENT_ENCODING", "CURLE_OBSOLETE62", "CURLE_FILESIZE_EXCEEDED",
    "CURLE_USE_SSL_FAILED", "CURLE_SEND_FAIL_REWIND", "CURLE_SSL_ENGINE_INITFAILED", "CURLE_LOGIN_DENIED",
    "CURLE_TFTP_NOTFOUND", "CURLE_TFTP_PERM", "CURLE_REMOTE_DISK_FULL", "CURLE_TFTP_ILLEGAL",
    "CURLE_TFTP_UNKNOWNID", "CURLE_REMOTE_FILE_EXISTS", "CURLE_TFTP_NOSUCHUSER", "CURLE_OBSOLETE75",
    "CURLE_OBSOLETE76", "CURLE_SSL_CACERT_BADFILE", "CURLE_REMOTE_FILE_NOT_FOUND", "CURLE_SSH",
    "CURLE_SSL_SHUTDOWN_FAILED", "CURLE_AGAIN", "CURLE_SSL_CRL_BADFILE", "CURLE_SSL_ISSUER_ERROR",
    "CURLE_FTP_PRET_FAILED", "CURLE_RTSP_CSEQ_ERROR", "CURLE_RTSP_SESSION_ERROR", "CURLE_FTP_BAD_FILE_LIST",
    "CURLE_CHUNK_FAILED", "CURLE_NO_CONNECTION_AVAILABLE", "CURLE_SSL_PINNEDPUBKEYNOTMATCH", "CURLE_SSL_INVALIDCERTSTATUS",
    "CURLE_HTTP2_STREAM", "CURLE_RECURSIVE_API_CALL", "CURLE_AUTH_ERROR", "CURLE_HTTP3",
    "CURLE_QUIC_CONNECT_ERROR", "CURLE_PROXY", "CURLE_SSL_CLIENTCERT", "CURLE_UNRECOVERABLE_POLL",
};

constexpr long x509_hostname_mismatch = 62;  // X509_V_ERR_HOSTNAME_MISMATCH
constexpr long x509_ip_mismatch = 64;        // X509_V_ERR_IP_ADDRESS_MISMATCH
constexpr long x509_application = 50;        // X509_V_ERR_APPLICATION_VERIFICATION: tlsnb's pin detail
constexpr long x509_ocsp_failed = 74;        // X509_V_ERR_OCSP_VERIFY_FAILED
using details::early_close_notify;
using details::http_malformed;
using details::peer_closed;
constexpr long setup_set_host = 5;
constexpr long setup_out_of_memory = 8;
constexpr long setup_context = 9;

bool is_unexpected_eof(unsigned long code) {
  return ERR_GET_LIB(code) == ERR_LIB_SSL && ERR_GET_REASON(code) == SSL_R_UNEXPECTED_EOF_WHILE_READING;
}

Outcome verified(Stage stage, long detail, int depth, std::string text) {
  Outcome o = make_outcome(stage, detail, std::move(text));
  o.verify_depth = depth;
  return o;
}

}  // namespace

const char* curl_code_name(CURLcode code) {
  auto i = static_cast<size_t>(code);
  return i < sizeof code_names / sizeof code_names[0] ? code_names[i] : "CURLE_(unknown)";
}

Stage running_stage(const Progress& p) {
  if (!p.tcp_connected) return Stage::connect;
  if (!p.tls_done) return Stage::handshake;
  if (p.sending_body) return Stage::write;
  return Stage::read;
}

unsigned long openssl_code_in(const std::string& text) {
  for (size_t at = text.find("error:"); at != std::string::npos; at = text.find("error:", at + 1)) {
    size_t start = at + 6, end = start;
    while (end < text.size() && std::isxdigit(static_cast<unsigned char>(text[end]))) ++end;
    if (end - start == 8 && end < text.size() && text[end] == ':')
      return std::strtoul(text.substr(start, 8).c_str(), nullptr, 16);
  }
  return 0;
}

long errno_in_text(const std::string& text) {
  long best = 0;
  size_t best_len = 0;
  for (int e = 1; e < 134; ++e) {
    const char* words = std::strerror(e);
    size_t len = std::strlen(words);
    if (len > best_len && std::strncmp(words, "Unknown error", 13) != 0 && text.find(words) != std::string::npos) {
      best = e;
      best_len = len;
    }
  }
  return best;
}

Outcome map_curl_error(CURLcode code, const std::string& errbuf, long verify_result, long os_errno, const Progress& p) {
  std::string text = std::string(curl_code_name(code)) + ": " + (errbuf.empty() ? curl_easy_strerror(code) : errbuf);
  Stage stage = running_stage(p);
  unsigned long ossl = openssl_code_in(errbuf);
  switch (code) {
    case CURLE_SETOPT_OPTION_SYNTAX:  // a CURLOPT_RESOLVE entry libcurl cannot parse
    case CURLE_URL_MALFORMAT:
    case CURLE_COULDNT_RESOLVE_HOST:  // only when the guard refused a lookup: no DNS leaves the process
      return make_outcome(Stage::setup, setup_set_host,
                          text + (p.resolve_refused ? " (tlsnb-curl refused libcurl's name lookup)" : ""));
    case CURLE_COULDNT_CONNECT:
      if (p.second_connection_refused)  // the kept-alive connection was gone when the next request wanted it
        return make_outcome(Stage::read, p.close_notify_seen ? early_close_notify : peer_closed,
                            text + " (libcurl wanted a new connection for request " + std::to_string(p.request_no) +
                                ": the keep-alive connection was closed; tlsnb-curl refused the second socket)");
      // A reset can only follow an accepted connection: the peer closed before any TLS byte.
      // libcurl calls it a failed connect when the RST is already pending (SO_ERROR) as it
      // checks the connect, a handshake failure when it is not: the same peer, either way.
      if (os_errno == ECONNRESET) return make_outcome(Stage::handshake, peer_closed, text + " (ECONNRESET after the TCP accept)");
      return make_outcome(Stage::connect, os_errno != 0 ? os_errno : -1, text);
    case CURLE_OPERATION_TIMEDOUT:
      return make_outcome(Stage::deadline, static_cast<long>(stage), text);
    case CURLE_PEER_FAILED_VERIFICATION:  // == CURLE_SSL_CACERT since 7.62
      // 7.88 records SSL_get_verify_result only when the handshake failed on it, or after its own
      // name check passed; until then CURLINFO_SSL_VERIFYRESULT reads 1 (its "!X509_V_OK").
      if (verify_result > 1) return verified(Stage::handshake, verify_result, p.x509_depth, text);
      if (p.x509_error != 0) return verified(Stage::handshake, p.x509_error, p.x509_depth, text);
      // 7.88 names the server's certificate_expired alert so too (ossl_connect_step2), with a clean
      // verify result: the peer's fatal alert is the cause, as tlsnb reports it (matrix client-cert-expired).
      if (p.fatal_alert != 0)
        return make_outcome(Stage::handshake, static_cast<long>(ERR_PACK(ERR_LIB_SSL, 0, SSL_AD_REASON_OFFSET + p.fatal_alert)),
                            text + " (the peer's fatal alert " + SSL_alert_desc_string_long(p.fatal_alert) + ")");
      // The chain verified; libcurl's own name check, after the handshake, refused the name.
      return verified(Stage::handshake, p.host_is_ip ? x509_ip_mismatch : x509_hostname_mismatch, 0, text);
    case CURLE_SSL_CONNECT_ERROR:
      // 7.88 classifies a failed handshake by the OLDEST error on OpenSSL's queue: a bad
      // signature leaves an ASN1 "EVP lib" error under CERTIFICATE_VERIFY_FAILED, so it says
      // SSL_CONNECT_ERROR, not PEER_FAILED_VERIFICATION. The verify error is the cause.
      if (p.verify_on && p.x509_error != 0)
        return verified(Stage::handshake, p.x509_error, p.x509_depth,
                        text + " [X509 verify: " + X509_verify_cert_error_string(p.x509_error) + ", depth " +
                            std::to_string(p.x509_depth) + "]");
      if (ossl != 0 && !is_unexpected_eof(ossl)) return make_outcome(Stage::handshake, static_cast<long>(ossl), text);
      return make_outcome(Stage::handshake, peer_closed, text);  // SSL_ERROR_SYSCALL: EOF, reset or EPIPE, no alert
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:  // checked against the leaf's key only, after the chain verified
      return verified(Stage::handshake, x509_application, 0, text);
    case CURLE_SSL_INVALIDCERTSTATUS:  // LOSSY: no staple, a bad one, revoked, unknown: one code
      return verified(Stage::handshake, x509_ocsp_failed, 0, text);
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
      return make_outcome(Stage::setup, setup_context, text);
    case CURLE_OUT_OF_MEMORY:
      return make_outcome(Stage::setup, setup_out_of_memory, text);
    // libcurl reads a FIN without close_notify as the same end of stream as a close_notify;
    // the adapter tells them apart by the close_notify alert its info callback saw.
    case CURLE_GOT_NOTHING:  // the stream ended before any response byte
      if (!p.tls_done) return make_outcome(Stage::handshake, peer_closed, text);
      return make_outcome(Stage::read, p.close_notify_seen ? early_close_notify : peer_closed, text);
    case CURLE_PARTIAL_FILE:  // the stream ended before Content-Length was read
      return make_outcome(Stage::read, p.close_notify_seen ? early_close_notify : peer_closed, text);
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
      if (!p.tls_done) {
        if (ossl != 0 && !is_unexpected_eof(ossl)) return make_outcome(Stage::handshake, static_cast<long>(ossl), text);
        return make_outcome(Stage::handshake, peer_closed, text);
      }
      if (code == CURLE_SEND_ERROR && stage == Stage::read) stage = Stage::write;
      // The errno named in errbuf first: CURLINFO_OS_ERRNO is overwritten when libcurl's close
      // then fails too (a reset socket: ECONNRESET read, then EPIPE writing close_notify).
      if (long e = errno_in_text(errbuf); e != 0) return make_outcome(stage, e, text);
      if (os_errno != 0) return make_outcome(stage, os_errno, text);
      if (ossl != 0 && !is_unexpected_eof(ossl)) return make_outcome(stage, static_cast<long>(ossl), text);
      return make_outcome(stage, peer_closed, text);
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_UNSUPPORTED_PROTOCOL:  // e.g. an HTTP/0.9 reply, refused by default since 7.66
    case CURLE_BAD_CONTENT_ENCODING:
      return make_outcome(Stage::read, http_malformed, text);
    default:  // the running stage, with libcurl's own code as the detail (lossy: profile.toml)
      return make_outcome(stage, static_cast<long>(code), text);
  }
}

}  // namespace tlsnb_curl
