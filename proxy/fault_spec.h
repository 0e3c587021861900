// The proxy's fault catalogue and its flag grammar: every fault named, documented and
// parsed from `DIRECTION:NAME[:KEY=VALUE[,KEY=VALUE...]]` (README.md, "Faults").
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace tlsproxy {

// upstream: bytes the client sends toward the server; downstream: the server's reply.
enum class Direction { upstream = 0, downstream = 1 };
const char* direction_name(Direction direction);

enum class FaultKind { slicer, latency, bandwidth, limit_data, reset_peer, blackhole, half_close, slow_close };
constexpr size_t fault_kinds = 8;
const char* fault_name(FaultKind kind);

// One --fault, its settings in fields a fault may leave unused (0 then).
struct FaultSpec {
  FaultKind kind = FaultKind::slicer;
  Direction direction = Direction::upstream;
  long conn = -1;       // the 0-based connection it applies to; -1: every connection
  bool conn_given = false;  // conn= was in the spec (--only-conn does not override it)
  long size = 0;        // slicer: bytes a segment
  long variation = 0;   // slicer: a segment is size +- variation (seeded), at least 1
  long delay_ms = 0;    // slicer: pause between segments; slow_close: how long the close waits
  long latency_ms = 0;  // latency: added to each chunk
  long jitter_ms = 0;   // latency: +- this much, seeded
  long rate_kbs = 0;    // bandwidth: KB/s (1 KB = 1000 bytes)
  long at = 0;          // limit_data, reset_peer, half_close: the byte count that triggers it
};

// One setting a fault takes: its key in the grammar, the field it fills, its range.
struct Setting {
  const char* key;
  long FaultSpec::*field;
  long lo;
  long hi;
  bool required;
  const char* meaning;
};

// A fault as the catalogue documents it (usage() and README.md's table come from the same words).
struct FaultInfo {
  FaultKind kind;
  const char* name;
  const char* effect;
  std::vector<Setting> settings;
};

const std::vector<FaultInfo>& fault_catalogue();

// `DIRECTION:NAME[:SETTINGS]`: one spec (two for DIRECTION `both`), or one error line in *error.
std::vector<FaultSpec> parse_fault(const std::string& text, std::string* error);

// A whole number in lo..hi, digits only.
std::optional<long> parse_number(const std::string& text, long lo, long hi);

// The faults that act on one direction of one connection, by kind (at most one each).
class FlowPlan {
 public:
  FlowPlan() = default;
  FlowPlan(const std::vector<FaultSpec>& faults, long conn, Direction direction);
  const FaultSpec* get(FaultKind kind) const { return slots_[static_cast<size_t>(kind)]; }
  bool has(FaultKind kind) const { return get(kind) != nullptr; }
  bool empty() const;

 private:
  std::array<const FaultSpec*, fault_kinds> slots_{};
};

}  // namespace tlsproxy
