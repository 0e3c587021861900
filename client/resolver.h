// Name lookups on the client's own epoll loop: DNS over TCP (or UDP, retried over TCP
// when truncated) to one server, in a fixed number of slots, each with its own deadline.
// A lookup asks A and AAAA at once (two queries, two slots); its answer is the union.
// getaddrinfo is never called: it would stop the loop (gaps/getaddrinfo_blocks).
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dns_judge.h"
#include "dns_message.h"
#include "run_config.h"
#include "run_state.h"

namespace tlsnb {

struct Lookup {
  uint64_t conn = 0;
  int code = 0;                 // 0, or a negative dns::Error
  std::vector<dns::Address> addrs;  // the A answer's addresses, then the AAAA answer's, in answer order
};

class Resolver {
 public:
  static constexpr int slots = 32;  // queries: 16 lookups of two
  Resolver(RunState& shared, const RunConfig& config);
  ~Resolver();
  Resolver(const Resolver&) = delete;
  Resolver& operator=(const Resolver&) = delete;

  bool has_free_slot() const;
  size_t busy() const;
  // Starts a lookup of config.target for `conn` (A and AAAA); the result arrives in take_done().
  void start(uint64_t conn);
  // Abandons conn's lookup (its attempt hit its deadline).
  void cancel(uint64_t conn);
  // Ends conn's lookup as dns::timeout (the lookup's own deadline, --dns-timeout-ms).
  void expire(uint64_t conn);
  // Lookups that ended since the last call.
  std::vector<Lookup> take_done();
  long queries_sent() const { return queries_; }

  class Query;

 private:
  friend class Query;
  // Half of a lookup: the union once both queries ended.
  struct Halves {
    int left = 2;
    int code4 = 0, code6 = 0;
    std::vector<dns::Address> v4, v6;
  };
  void complete(Query* query, int code, const dns::Answer& answer);

  RunState& shared_;
  const RunConfig& config_;
  sockaddr_storage server_{};
  socklen_t server_len_ = 0;
  std::vector<std::unique_ptr<Query>> slots_;
  std::vector<Lookup> done_;
  std::map<uint64_t, Halves> halves_;
  std::vector<std::unique_ptr<Query>> retired_;  // freed after the epoll batch
  uint16_t next_id_;
  long queries_ = 0;
};

}  // namespace tlsnb
