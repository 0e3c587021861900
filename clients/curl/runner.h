// The event loop: one epoll, one thread, libcurl's multi interface driven by
// curl_multi_socket_action. One multi handle per concurrency slot, so a connection kept
// alive between an attempt's requests can never be picked up by another attempt (a
// multi's connection cache is its own); the attempt's first transfer sets
// CURLOPT_FRESH_CONNECT and its last CURLOPT_FORBID_REUSE, so nothing outlives it.
#pragma once

#include <curl/curl.h>

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "client/run_totals.h"
#include "clients/contract/contract_report.h"
#include "error_map.h"
#include "options.h"

namespace tlsnb_curl {

// The run's totals (the summary's), plus what only libcurl's connections show.
struct RunStats : tlsnb::RunTotals {
  long peak_sockets = 0;  // most connection sockets open at once
  long connections = 0;   // sockets libcurl opened in all
  long multis = 0;        // multi handles made (one per slot, remade when a connection lingered)
};

class Runner {
 public:
  Runner(const Options& options, contract::Report& report);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Builds the shared pieces (epoll, headers, body, share). false: *error says why (setup).
  bool prepare(std::string* error);
  // Runs every attempt; false only when the loop itself failed (*error).
  bool run(RunStats* stats, std::string* error);

 private:
  struct Slot;
  struct Attempt;
  using Timers = std::set<std::pair<int64_t, int>>;  // (due in µs, slot index)

  static int on_socket(CURL* easy, curl_socket_t s, int what, void* userp, void* socketp);
  static int on_timer(CURLM* multi, long timeout_ms, void* userp);
  static curl_socket_t on_open_socket(void* clientp, curlsocktype purpose, curl_sockaddr* address);
  static int on_close_socket(void* clientp, curl_socket_t item);
  static CURLcode on_ssl_ctx(CURL* easy, void* ssl_ctx, void* userp);
  static size_t on_body(char* data, size_t size, size_t nmemb, void* userp);
  static size_t on_header(char* data, size_t size, size_t nmemb, void* userp);
  static int on_resolver_start(void* resolver_state, void* reserved, void* userp);

  bool make_multi(Slot& slot);
  void admit();
  void start(Slot& slot);
  bool configure(Attempt& a, Slot& slot);
  void action(Slot& slot, curl_socket_t fd, int bits);
  void drain(Slot& slot);
  void on_done(Slot& slot, Attempt& a, CURLcode result);
  void note_progress(Attempt& a);
  void expire(Slot& slot);
  static Outcome ok_outcome(const Attempt& a);
  void finish(Slot& slot, Outcome outcome);
  static void set_timer(Timers& timers, int64_t* due, int index, int64_t when);

  const Options& o_;
  contract::Report& report_;
  int epfd_ = -1;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<int> free_slots_;
  Timers curl_timers_;  // each multi's CURLMOPT_TIMERFUNCTION
  Timers deadlines_;    // each attempt's --deadline-ms
  Timers holds_;        // --hold-ms
  CURLSH* share_ = nullptr;
  curl_slist* headers_ = nullptr;
  curl_slist* resolve_ = nullptr;
  std::string url_;
  std::string pinned_;  // CURLOPT_PINNEDPUBLICKEY: "sha256//PIN;sha256//PIN" from --pin-sha256
  std::string body_;
  std::string addr_text_;
  bool host_is_ip_ = false;
  long started_ = 0;
  long open_sockets_ = 0;
  long fd_baseline_ = 0;
  RunStats stats_;
};

}  // namespace tlsnb_curl
