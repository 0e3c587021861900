// What the loop and libcurl's callbacks share about one slot and the attempt running in it.
#pragma once

#include <curl/curl.h>
#include <time.h>

#include <cstdint>
#include <memory>
#include <string>

#include "error_map.h"
#include "runner.h"

namespace tlsnb_curl {

inline int64_t now_us() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

constexpr int64_t none = -1;  // no timer armed

struct Runner::Attempt {
  long conn = 0;
  int64_t start_us = 0;
  int64_t tls_done_us = 0;  // when SSL_CB_HANDSHAKE_DONE came (--hold-ms counts from there)
  CURL* easy = nullptr;
  bool in_multi = false;
  Progress progress;
  long requests_done = 0;
  long http_status = 0;
  bool resumed = false;
  bool chunked = false;
  long connections = 0;
  int fd = -1;  // the attempt's socket while libcurl holds it open
  std::string tls_version, cipher;
  char errbuf[CURL_ERROR_SIZE] = {};
};

struct Runner::Slot {
  Runner* runner = nullptr;
  int index = 0;
  CURLM* multi = nullptr;
  std::unique_ptr<Attempt> attempt;
  int64_t timer_due = none, deadline_due = none, hold_due = none;
  long open_sockets = 0;
};

}  // namespace tlsnb_curl
