#include "runner.h"
#include "runner_state.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "client/http_request.h"
#include "client/process_figures.h"

namespace tlsnb_curl {

Runner::Runner(const Options& options, contract::Report& report) : o_(options), report_(report) {
  fd_baseline_ = tlsnb::count_open_fds();
}

Runner::~Runner() {
  for (auto& slot : slots_) {
    if (!slot) continue;
    if (slot->attempt && slot->attempt->easy) {
      if (slot->attempt->in_multi) curl_multi_remove_handle(slot->multi, slot->attempt->easy);
      curl_easy_cleanup(slot->attempt->easy);
    }
    if (slot->multi) curl_multi_cleanup(slot->multi);
  }
  if (share_) curl_share_cleanup(share_);
  curl_slist_free_all(headers_);
  curl_slist_free_all(resolve_);
  if (epfd_ >= 0) close(epfd_);
}

bool Runner::prepare(std::string* error) {
  epfd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epfd_ < 0) return *error = std::string("epoll_create1: ") + std::strerror(errno), false;
  std::string dial = o_.dial_ip();
  host_is_ip_ = o_.name_is_ip();
  addr_text_ = dial + ":" + std::to_string(o_.port);
  url_ = "https://" + o_.name + ":" + std::to_string(o_.port) + "/";
  for (const std::string& pin : o_.pins) pinned_ += (pinned_.empty() ? "sha256//" : ";sha256//") + pin;
  // The URL carries the name (SNI, certificate check); CURLOPT_RESOLVE puts the literal in the
  // multi's DNS cache under that name, so libcurl finds it there and never starts a lookup.
  // A U-label NAME is looked up in its A-label form: an entry for each. An IP literal too
  // (7.88 would otherwise call the resolver-start callback for it, which refuses every lookup).
  std::vector<std::string> hosts{o_.name};
  if (!o_.name_alabel.empty() && o_.name_alabel != o_.name) hosts.push_back(o_.name_alabel);
  for (const std::string& host : hosts) {
    std::string entry = host + ":" + std::to_string(o_.port) + ":" + dial;
    curl_slist* next = curl_slist_append(resolve_, entry.c_str());
    if (!next) return *error = "curl_slist_append failed", false;
    resolve_ = next;
  }
  // The request tlsnb sends: Host without the port, keep-alive, no Accept, no Expect.
  const std::string lines[] = {"Host: " + o_.name, "Connection: keep-alive", "Accept:", "Expect:",
                               "Content-Type: application/octet-stream"};
  for (size_t i = 0; i < (o_.body > 0 ? 5u : 3u); ++i) {
    curl_slist* next = curl_slist_append(headers_, lines[i].c_str());
    if (!next) return *error = "curl_slist_append failed", false;
    headers_ = next;
  }
  body_ = tlsnb::request_body(o_.body, o_.seed);
  if (o_.resume) {
    share_ = curl_share_init();
    if (!share_ || curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) != CURLSHE_OK)
      return *error = "curl_share_init/CURL_LOCK_DATA_SSL_SESSION failed", false;
  }
  long slots = o_.parallel < o_.count ? o_.parallel : o_.count;
  slots_.resize(static_cast<size_t>(slots));
  for (long i = slots - 1; i >= 0; --i) free_slots_.push_back(static_cast<int>(i));
  return true;
}

// ---- attempts ---------------------------------------------------------------------------

void Runner::set_timer(Timers& timers, int64_t* due, int index, int64_t when) {
  if (*due != none) timers.erase({*due, index});
  *due = when;
  if (when != none) timers.insert({when, index});
}

bool Runner::make_multi(Slot& slot) {
  slot.multi = curl_multi_init();
  if (!slot.multi) return false;
  ++stats_.multis;
  curl_multi_setopt(slot.multi, CURLMOPT_SOCKETFUNCTION, &Runner::on_socket);
  curl_multi_setopt(slot.multi, CURLMOPT_SOCKETDATA, &slot);
  curl_multi_setopt(slot.multi, CURLMOPT_TIMERFUNCTION, &Runner::on_timer);
  curl_multi_setopt(slot.multi, CURLMOPT_TIMERDATA, &slot);
  return true;
}

void Runner::admit() {
  while (started_ < o_.count && !free_slots_.empty()) {
    int index = free_slots_.back();
    free_slots_.pop_back();
    auto& slot = slots_[static_cast<size_t>(index)];
    if (!slot) {
      slot = std::make_unique<Slot>();
      slot->runner = this;
      slot->index = index;
    }
    start(*slot);
  }
}

void Runner::start(Slot& slot) {
  slot.attempt = std::make_unique<Attempt>();
  Attempt& a = *slot.attempt;
  a.conn = started_++;
  a.start_us = now_us();
  a.progress.host_is_ip = host_is_ip_;
  a.progress.verify_on = o_.verify;
  set_timer(deadlines_, &slot.deadline_due, slot.index, a.start_us + o_.deadline_ms * 1000);
  Outcome setup;
  setup.stage = Stage::setup;
  if (!slot.multi && !make_multi(slot)) {
    setup.detail = 9, setup.text = "curl_multi_init failed";
    return finish(slot, setup);
  }
  a.easy = curl_easy_init();
  if (!a.easy) {
    setup.detail = 1, setup.text = "curl_easy_init failed";
    return finish(slot, setup);
  }
  if (!configure(a, slot)) {
    setup.detail = 9, setup.text = std::string("curl_easy_setopt refused an option: ") + a.errbuf;
    return finish(slot, setup);
  }
  CURLMcode m = curl_multi_add_handle(slot.multi, a.easy);
  if (m != CURLM_OK) {
    setup.detail = 9, setup.text = std::string("curl_multi_add_handle: ") + curl_multi_strerror(m);
    return finish(slot, setup);
  }
  a.in_multi = true;
}

bool Runner::configure(Attempt& a, Slot& slot) {
  CURL* e = a.easy;
  bool ok = true;
  auto set = [&](CURLoption opt, auto value) {
    CURLcode rc = curl_easy_setopt(e, opt, value);
    if (rc != CURLE_OK && ok) {
      ok = false;
      std::snprintf(a.errbuf, sizeof a.errbuf, "option %d: %s", static_cast<int>(opt), curl_easy_strerror(rc));
    }
  };
  set(CURLOPT_ERRORBUFFER, a.errbuf);
  set(CURLOPT_PRIVATE, static_cast<void*>(&a));
  set(CURLOPT_URL, url_.c_str());
  set(CURLOPT_PROTOCOLS_STR, "https");
  set(CURLOPT_PROXY, "");  // no proxy from the environment (https_proxy, ALL_PROXY): only the lab's peer is dialled
  set(CURLOPT_IPRESOLVE, static_cast<long>(CURL_IPRESOLVE_V4));
  set(CURLOPT_RESOLVE, resolve_);
  set(CURLOPT_RESOLVER_START_FUNCTION, &Runner::on_resolver_start);
  set(CURLOPT_RESOLVER_START_DATA, static_cast<void*>(&a));
  set(CURLOPT_NOSIGNAL, 1L);  // libcurl leaves SIGPIPE's disposition alone (it sends with MSG_NOSIGNAL)
  set(CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
  set(CURLOPT_SSL_ENABLE_ALPN, 0L);  // as tlsnb: no ALPN (7.88 would offer h2 + http/1.1)
  set(CURLOPT_SSLVERSION, static_cast<long>(CURL_SSLVERSION_TLSv1_2 |
                                            (o_.tls_max == 12 ? CURL_SSLVERSION_MAX_TLSv1_2 : CURL_SSLVERSION_MAX_TLSv1_3)));
  set(CURLOPT_SSL_VERIFYPEER, o_.verify ? 1L : 0L);
  // --no-verify-name: VERIFYHOST 0 with VERIFYPEER 1, libcurl's own split (the chain still verified)
  set(CURLOPT_SSL_VERIFYHOST, o_.verify && o_.verify_name ? 2L : 0L);
  if (!o_.cafile.empty()) {
    set(CURLOPT_CAINFO, o_.cafile.c_str());
    set(CURLOPT_CAPATH, static_cast<const char*>(nullptr));  // only the file, unless --system-trust
  }
  if (o_.system_trust) {
    char* capath = nullptr;
    curl_easy_getinfo(e, CURLINFO_CAPATH, &capath);  // the built-in default
    if (capath != nullptr) {
      std::string path = capath;
      set(CURLOPT_CAPATH, path.c_str());
    }
  }
  // libcurl turns X509_V_FLAG_PARTIAL_CHAIN on by default; tlsnb does not.
  set(CURLOPT_SSL_OPTIONS, o_.partial_chain ? 0L : static_cast<long>(CURLSSLOPT_NO_PARTIALCHAIN));
  set(CURLOPT_SSL_SESSIONID_CACHE, o_.resume ? 1L : 0L);
  if (!o_.crls.empty()) set(CURLOPT_CRLFILE, o_.crls.front().c_str());  // CRL_CHECK | CRL_CHECK_ALL
  if (o_.ocsp_staple == "require") set(CURLOPT_SSL_VERIFYSTATUS, 1L);
  if (!o_.client_cert.empty()) {
    set(CURLOPT_SSLCERT, o_.client_cert.c_str());
    set(CURLOPT_SSLKEY, o_.client_key.c_str());
  }
  if (!pinned_.empty()) set(CURLOPT_PINNEDPUBLICKEY, pinned_.c_str());
  if (share_) set(CURLOPT_SHARE, share_);
  set(CURLOPT_SSL_CTX_FUNCTION, &Runner::on_ssl_ctx);
  set(CURLOPT_SSL_CTX_DATA, static_cast<void*>(&slot));
  set(CURLOPT_OPENSOCKETFUNCTION, &Runner::on_open_socket);
  set(CURLOPT_OPENSOCKETDATA, static_cast<void*>(&slot));
  set(CURLOPT_CLOSESOCKETFUNCTION, &Runner::on_close_socket);
  set(CURLOPT_CLOSESOCKETDATA, static_cast<void*>(&slot));
  set(CURLOPT_WRITEFUNCTION, &Runner::on_body);
  set(CURLOPT_HEADERFUNCTION, &Runner::on_header);
  set(CURLOPT_HEADERDATA, static_cast<void*>(&a));
  set(CURLOPT_HTTPHEADER, headers_);
  if (o_.body > 0) {
    set(CURLOPT_POSTFIELDS, body_.data());
    set(CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(o_.body));
  }
  if (o_.requests == 0) set(CURLOPT_CONNECT_ONLY, 1L);  // TCP + TLS handshake, no request
  set(CURLOPT_FRESH_CONNECT, 1L);
  // The last request closes the connection (with --hold-ms it stays until the hold is over).
  set(CURLOPT_FORBID_REUSE, o_.requests <= 1 && o_.hold_ms == 0 ? 1L : 0L);
  return ok;
}

void Runner::action(Slot& slot, curl_socket_t fd, int bits) {
  int running = 0;
  curl_multi_socket_action(slot.multi, fd, bits, &running);
  drain(slot);
}

void Runner::drain(Slot& slot) {
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(slot.multi, &left)) {
    if (msg->msg != CURLMSG_DONE) continue;
    CURLcode result = msg->data.result;
    Attempt* a = nullptr;
    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &a);
    if (a != nullptr && a == slot.attempt.get()) on_done(slot, *a, result);
  }
}

void Runner::note_progress(Attempt& a) {
  // 7.88 stamps CONNECT_TIME only when the whole filter chain (TCP + TLS) is up: whether the
  // TCP connect alone finished is asked of the socket.
  sockaddr_storage peer{};
  socklen_t len = sizeof peer;
  if (!a.progress.tcp_connected && a.fd >= 0 && getpeername(a.fd, reinterpret_cast<sockaddr*>(&peer), &len) == 0)
    a.progress.tcp_connected = true;
  curl_off_t t = 0;
  if (!a.progress.tcp_connected && curl_easy_getinfo(a.easy, CURLINFO_CONNECT_TIME_T, &t) == CURLE_OK && t > 0)
    a.progress.tcp_connected = true;
  t = 0;
  if (!a.progress.tls_done && curl_easy_getinfo(a.easy, CURLINFO_APPCONNECT_TIME_T, &t) == CURLE_OK && t > 0)
    a.progress.tls_done = a.progress.tcp_connected = true;
  curl_off_t up = 0;
  a.progress.sending_body = o_.body > 0 && o_.requests > 0 &&
                            curl_easy_getinfo(a.easy, CURLINFO_SIZE_UPLOAD_T, &up) == CURLE_OK && up < o_.body;
}

void Runner::on_done(Slot& slot, Attempt& a, CURLcode result) {
  note_progress(a);
  if (result != CURLE_OK) {
    long verify = 0, os_errno = 0;
    curl_easy_getinfo(a.easy, CURLINFO_SSL_VERIFYRESULT, &verify);
    curl_easy_getinfo(a.easy, CURLINFO_OS_ERRNO, &os_errno);
    a.progress.sending_body = false;  // libcurl says which way failed (SEND/RECV)
    a.progress.request_no = a.requests_done + 1;
    return finish(slot, map_curl_error(result, a.errbuf, verify, os_errno, a.progress));
  }
  if (o_.requests > 0) {
    curl_easy_getinfo(a.easy, CURLINFO_RESPONSE_CODE, &a.http_status);
    ++a.requests_done;
  }
  if (a.requests_done < o_.requests) {  // the next request on the same connection
    curl_multi_remove_handle(slot.multi, a.easy);
    a.in_multi = false;
    curl_easy_setopt(a.easy, CURLOPT_FRESH_CONNECT, 0L);
    curl_easy_setopt(a.easy, CURLOPT_FORBID_REUSE, a.requests_done + 1 == o_.requests && o_.hold_ms == 0 ? 1L : 0L);
    CURLMcode m = curl_multi_add_handle(slot.multi, a.easy);
    if (m != CURLM_OK) {
      Outcome setup;
      setup.stage = Stage::setup;
      setup.detail = 9;
      setup.text = std::string("curl_multi_add_handle: ") + curl_multi_strerror(m);
      return finish(slot, setup);
    }
    a.in_multi = true;
    return;
  }
  // Every response is in (with --requests 0, CONNECT_ONLY's handshake). --hold-ms keeps the
  // connection open until hold_ms after the handshake: libcurl cannot wait between the
  // handshake and the first request, so the hold comes after the requests (tlsnb: before).
  if (o_.hold_ms > 0) {
    int64_t until = (a.tls_done_us != 0 ? a.tls_done_us : now_us()) + o_.hold_ms * 1000;
    if (until > now_us()) {
      set_timer(holds_, &slot.hold_due, slot.index, until);
      return;
    }
  }
  finish(slot, ok_outcome(a));
}

Outcome Runner::ok_outcome(const Attempt& a) {
  Outcome ok;
  ok.text = a.chunked ? "ok (libcurl decoded a chunked response)" : "ok";
  return ok;
}

void Runner::expire(Slot& slot) {
  Attempt& a = *slot.attempt;
  if (a.easy) note_progress(a);
  Stage stage = running_stage(a.progress);
  Outcome o;
  o.stage = Stage::deadline;
  o.detail = static_cast<long>(stage);
  o.text = std::string("deadline during ") + stage_name(stage) + " (tlsnb-curl's per-attempt timer; the transfer was removed)";
  finish(slot, o);
}

void Runner::finish(Slot& slot, Outcome outcome) {
  Attempt& a = *slot.attempt;
  if (a.easy) {
    if (a.in_multi) curl_multi_remove_handle(slot.multi, a.easy);  // aborts a transfer still running
    curl_easy_cleanup(a.easy);
    a.easy = nullptr;
  }
  set_timer(deadlines_, &slot.deadline_due, slot.index, none);
  set_timer(holds_, &slot.hold_due, slot.index, none);
  tlsnb::AttemptRecord record;
  record.conn = static_cast<uint64_t>(a.conn);
  record.slot = slot.index;
  record.outcome = std::move(outcome);
  record.addr = addr_text_;
  record.ms = static_cast<double>(now_us() - a.start_us) / 1000.0;
  record.resumed = a.resumed;
  record.tls_version = a.tls_version;
  record.cipher = a.cipher;
  record.http_status = static_cast<int>(a.http_status);
  record.requests_done = a.requests_done;
  ++stats_.count;
  if (record.outcome.ok()) ++stats_.ok;
  else ++stats_.failed;
  if (a.resumed) ++stats_.resumed;
  // The TCP connections libcurl opened for the attempt (1 expected): this client's own field.
  report_.attempt(record, [&a](tlsnb::JsonLine& line) { line.num("connections", a.connections); });
  slot.attempt.reset();
  free_slots_.push_back(slot.index);
  // A connection the attempt left in the slot's cache would be a stale one for the next
  // attempt: close it with the multi and start the slot afresh.
  if (slot.open_sockets > 0 && slot.multi) {
    curl_multi_cleanup(slot.multi);
    slot.multi = nullptr;
    set_timer(curl_timers_, &slot.timer_due, slot.index, none);
  }
}

bool Runner::run(RunStats* stats, std::string* error) {
  int64_t begin = now_us();
  std::vector<epoll_event> events(256);
  int64_t woke = now_us();
  std::vector<int> due;
  while (stats_.count < o_.count) {
    admit();
    if (stats_.count >= o_.count) break;
    int64_t now = now_us();
    int64_t next = INT64_MAX;
    for (const Timers* t : {&curl_timers_, &deadlines_, &holds_})
      if (!t->empty() && t->begin()->first < next) next = t->begin()->first;
    int timeout = -1;
    if (next != INT64_MAX) timeout = next <= now ? 0 : static_cast<int>((next - now + 999) / 1000);
    double gap = static_cast<double>(now - woke) / 1000.0;
    if (gap > stats_.loop_gap_max_ms) stats_.loop_gap_max_ms = gap;
    int n = epoll_wait(epfd_, events.data(), static_cast<int>(events.size()), timeout);
    woke = now_us();
    if (n < 0 && errno != EINTR) return *error = std::string("epoll_wait: ") + std::strerror(errno), false;
    for (int i = 0; i < n; ++i) {
      const epoll_event& ev = events[static_cast<size_t>(i)];
      auto index = static_cast<size_t>(ev.data.u64 >> 32);
      auto fd = static_cast<curl_socket_t>(ev.data.u64 & 0xffffffffu);
      int bits = ((ev.events & EPOLLIN) ? CURL_CSELECT_IN : 0) | ((ev.events & EPOLLOUT) ? CURL_CSELECT_OUT : 0);
      if (ev.events & (EPOLLERR | EPOLLHUP)) bits |= CURL_CSELECT_IN | CURL_CSELECT_OUT;  // let libcurl find the error
      Slot* slot = slots_[index].get();
      if (slot != nullptr && slot->multi != nullptr) action(*slot, fd, bits);  // unknown sockets: libcurl ignores them
    }
    // Timers due by now: libcurl's, then deadlines, then holds (collected first: acting can re-arm).
    now = now_us();
    for (Timers* t : {&curl_timers_, &deadlines_, &holds_}) {
      due.clear();
      for (auto it = t->begin(); it != t->end() && it->first <= now; ++it) due.push_back(it->second);
      for (int index : due) {
        Slot& slot = *slots_[static_cast<size_t>(index)];
        if (t == &curl_timers_) {
          if (slot.timer_due == none || slot.timer_due > now || !slot.multi) continue;
          set_timer(curl_timers_, &slot.timer_due, index, none);
          action(slot, CURL_SOCKET_TIMEOUT, 0);
        } else if (t == &deadlines_) {
          if (slot.attempt && slot.deadline_due != none && slot.deadline_due <= now) expire(slot);
        } else if (slot.attempt && slot.hold_due != none && slot.hold_due <= now) {
          finish(slot, ok_outcome(*slot.attempt));
        }
      }
    }
  }
  stats_.wall_ms = static_cast<double>(now_us() - begin) / 1000.0;
  *stats = stats_;
  return true;
}

}  // namespace tlsnb_curl
