// libcurl's callbacks: sockets and timers onto the epoll loop, socket accounting, and the
// observations made through OpenSSL (handshake end, alerts, verify errors) for the attempt.
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>

#include "client/process_figures.h"
#include "runner.h"
#include "runner_state.h"

namespace tlsnb_curl {

namespace {

int slot_index_ex() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

}  // namespace

// ---- libcurl's callbacks ----------------------------------------------------------------

int Runner::on_socket(CURL*, curl_socket_t s, int what, void* userp, void*) {
  auto* slot = static_cast<Slot*>(userp);
  int epfd = slot->runner->epfd_;
  if (what == CURL_POLL_REMOVE) {
    epoll_ctl(epfd, EPOLL_CTL_DEL, s, nullptr);  // may already be closed: nothing to undo then
    return 0;
  }
  epoll_event ev{};
  ev.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0u);
  ev.data.u64 = static_cast<uint64_t>(slot->index) << 32 | static_cast<uint32_t>(s);
  if (epoll_ctl(epfd, EPOLL_CTL_MOD, s, &ev) != 0 && errno == ENOENT) epoll_ctl(epfd, EPOLL_CTL_ADD, s, &ev);
  return 0;
}

int Runner::on_timer(CURLM*, long timeout_ms, void* userp) {
  auto* slot = static_cast<Slot*>(userp);
  set_timer(slot->runner->curl_timers_, &slot->timer_due, slot->index,
            timeout_ms < 0 ? none : now_us() + static_cast<int64_t>(timeout_ms) * 1000);
  return 0;
}

// Every connection socket is made here: counted, and one per attempt at most (a second one
// would be libcurl replacing a lost keep-alive connection, which the lab counts as a failure).
curl_socket_t Runner::on_open_socket(void* clientp, curlsocktype, curl_sockaddr* address) {
  auto* slot = static_cast<Slot*>(clientp);
  Runner* r = slot->runner;
  Attempt* a = slot->attempt.get();
  if (a != nullptr && a->connections > 0) {
    a->progress.second_connection_refused = true;
    return CURL_SOCKET_BAD;
  }
  int fd = socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
  if (fd < 0) return CURL_SOCKET_BAD;
  if (a != nullptr) {
    ++a->connections;
    a->fd = fd;
  }
  ++slot->open_sockets;
  ++r->stats_.connections;
  // /proc/self/fd is read when the open sockets reach their peak (so far): the descriptor
  // count peaks there too, and 2,000 connections do not mean 2,000 directory scans.
  if (++r->open_sockets_ >= r->stats_.peak_sockets) {
    r->stats_.peak_sockets = r->open_sockets_;
    long fds = tlsnb::count_open_fds() - r->fd_baseline_;
    if (fds > r->stats_.peak_fds) r->stats_.peak_fds = fds;
  }
  return fd;
}

int Runner::on_close_socket(void* clientp, curl_socket_t item) {
  auto* slot = static_cast<Slot*>(clientp);
  if (slot->attempt && slot->attempt->fd == item) slot->attempt->fd = -1;
  --slot->open_sockets;
  --slot->runner->open_sockets_;
  return close(item);
}

// libcurl makes one SSL_CTX per connection; this marks it with the slot, so the handshake's
// end (version, cipher, resumption) is recorded for the attempt running there.
CURLcode Runner::on_ssl_ctx(CURL*, void* ssl_ctx, void* userp) {
  auto* ctx = static_cast<SSL_CTX*>(ssl_ctx);
  SSL_CTX_set_ex_data(ctx, slot_index_ex(), userp);
  // Observes chain verification (the first error and its depth) and returns OpenSSL's own
  // verdict unchanged: libcurl's verify mode stays as libcurl set it.
  SSL_CTX_set_verify(ctx, SSL_CTX_get_verify_mode(ctx), [](int ok, X509_STORE_CTX* store) {
    if (ok) return ok;
    auto* ssl = static_cast<SSL*>(X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
    auto* slot = ssl ? static_cast<Slot*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), slot_index_ex())) : nullptr;
    Attempt* a = slot != nullptr ? slot->attempt.get() : nullptr;
    if (a != nullptr && a->progress.x509_error == 0) {
      a->progress.x509_error = X509_STORE_CTX_get_error(store);
      a->progress.x509_depth = X509_STORE_CTX_get_error_depth(store);
    }
    return ok;
  });
  SSL_CTX_set_info_callback(ctx, [](const SSL* ssl, int where, int ret) {
    bool alert = (where & SSL_CB_READ_ALERT) == SSL_CB_READ_ALERT;
    if (!alert && !(where & SSL_CB_HANDSHAKE_DONE)) return;
    auto* slot = static_cast<Slot*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), slot_index_ex()));
    Attempt* a = slot != nullptr ? slot->attempt.get() : nullptr;
    if (a == nullptr) return;
    if (alert) {
      if ((ret & 0xff) == SSL_AD_CLOSE_NOTIFY) a->progress.close_notify_seen = true;
      if ((ret >> 8) == SSL3_AL_FATAL) a->progress.fatal_alert = ret & 0xff;
      return;
    }
    if (a->progress.tls_done) return;  // TLS 1.3 tickets call it again
    a->progress.tls_done = true;
    a->progress.tcp_connected = true;
    a->tls_done_us = now_us();
    a->tls_version = SSL_get_version(ssl);
    a->cipher = SSL_CIPHER_get_name(SSL_get_current_cipher(ssl));
    a->resumed = SSL_session_reused(ssl) == 1;
  });
  return CURLE_OK;
}

size_t Runner::on_body(char*, size_t size, size_t nmemb, void*) { return size * nmemb; }

size_t Runner::on_header(char* data, size_t size, size_t nmemb, void* userp) {
  size_t len = size * nmemb;
  static const char te[] = "transfer-encoding:";
  if (len > sizeof te && strncasecmp(data, te, sizeof te - 1) == 0) {
    std::string value(data + sizeof te - 1, len - (sizeof te - 1));
    for (char& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (value.find("chunked") != std::string::npos) static_cast<Attempt*>(userp)->chunked = true;
  }
  return len;
}

// libcurl is never to resolve a name (CURLOPT_RESOLVE names the address): should it try anyway,
// the lookup is refused before any query is made (the transfer fails COULDNT_RESOLVE_HOST).
int Runner::on_resolver_start(void*, void*, void* userp) {
  static_cast<Attempt*>(userp)->progress.resolve_refused = true;
  return 1;
}

}  // namespace tlsnb_curl
