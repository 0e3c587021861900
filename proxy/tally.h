// What the proxy did, for the one `REPORT {json}` line it prints when it stops (README.md, "REPORT").
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fault_spec.h"

namespace tlsproxy {

// One connection as it ended: bytes written to each direction's receiver, bytes dropped, why it ended.
struct ConnRecord {
  long index = 0;
  std::array<uint64_t, 2> bytes{};    // by Direction
  std::array<uint64_t, 2> dropped{};  // read and not passed on (blackhole, half_close, a limit)
  std::string end;                    // closed, limit_data, reset_peer, aborted, dial_failed, stopped
  std::vector<std::string> faults;    // "downstream:slicer", ...
};

class Tally {
 public:
  // Per-connection records are kept for this many connections; past it the REPORT says how many it left out.
  static constexpr size_t records_kept = 64;

  void accepted() { ++connections_; }
  void refused() { ++refused_; }
  void armed(FaultKind kind) { ++faults_[static_cast<size_t>(kind)].armed; }
  void fired(FaultKind kind, uint64_t times = 1) { faults_[static_cast<size_t>(kind)].fired += times; }
  void buffered(size_t bytes);
  void ended(const ConnRecord& record);
  // The JSON object after `REPORT `, with the descriptors open at start and left at exit.
  std::string json(uint64_t seed, bool seed_given, long fds_at_start, long fds_open) const;

 private:
  struct FaultCount {
    uint64_t armed = 0;  // connection directions it was set on
    uint64_t fired = 0;  // times it acted (README.md says what a time is for each fault)
  };
  uint64_t connections_ = 0;
  uint64_t refused_ = 0;
  std::array<uint64_t, 2> bytes_{};
  std::array<uint64_t, 2> dropped_{};
  size_t buffer_peak_ = 0;
  std::array<FaultCount, fault_kinds> faults_{};
  std::map<std::string, uint64_t> ends_;
  std::vector<ConnRecord> records_;
  uint64_t records_left_out_ = 0;
};

}  // namespace tlsproxy
