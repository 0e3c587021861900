#include "fault_spec.h"

#include <cerrno>
#include <cstdlib>

namespace tlsproxy {

namespace {

constexpr long max_bytes = 1L << 40;  // a byte count no test reaches
constexpr long max_ms = 3600L * 1000;

// The conn= setting every fault takes.
const Setting conn_setting{"conn", &FaultSpec::conn, 0, 1L << 30, false,
                           "only the connection with this 0-based accept index (default: all, or --only-conn)"};

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t at = text.find(sep); at != std::string::npos; at = text.find(sep, start)) {
    parts.push_back(text.substr(start, at - start));
    start = at + 1;
  }
  parts.push_back(text.substr(start));
  return parts;
}

const FaultInfo* find_fault(const std::string& name) {
  for (const FaultInfo& info : fault_catalogue())
    if (name == info.name) return &info;
  return nullptr;
}

std::string fault_names() {
  std::string names;
  for (const FaultInfo& info : fault_catalogue()) names += (names.empty() ? "" : ", ") + std::string(info.name);
  return names;
}

const Setting* find_setting(const FaultInfo& info, const std::string& key) {
  if (key == conn_setting.key) return &conn_setting;
  for (const Setting& s : info.settings)
    if (key == s.key) return &s;
  return nullptr;
}

// Fills SPEC from `key=value,key=value`; "" or the error.
std::string apply_settings(const FaultInfo& info, const std::string& text, FaultSpec* spec) {
  std::vector<std::string> given;
  if (!text.empty()) {
    for (const std::string& item : split(text, ',')) {
      size_t eq = item.find('=');
      std::string key = item.substr(0, eq);
      const Setting* s = find_setting(info, key);
      if (eq == std::string::npos || s == nullptr) return std::string(info.name) + ": unknown setting '" + item + "'";
      std::optional<long> value = parse_number(item.substr(eq + 1), s->lo, s->hi);
      if (!value)
        return std::string(info.name) + ": " + key + " expects a whole number in " + std::to_string(s->lo) + ".." +
               std::to_string(s->hi) + ", got '" + item.substr(eq + 1) + "'";
      spec->*(s->field) = *value;
      if (s == &conn_setting) spec->conn_given = true;
      given.push_back(key);
    }
  }
  for (const Setting& s : info.settings) {
    bool present = false;
    for (const std::string& key : given) present = present || key == s.key;
    if (s.required && !present) return std::string(info.name) + ": " + s.key + "= is required";
  }
  return "";
}

}  // namespace

const char* direction_name(Direction direction) {
  return direction == Direction::upstream ? "upstream" : "downstream";
}

const std::vector<FaultInfo>& fault_catalogue() {
  static const std::vector<FaultInfo> catalogue = {
      {FaultKind::slicer, "slicer",
       "cuts the stream into segments written one send() each (TCP_NODELAY), with a pause between them",
       {{"size", &FaultSpec::size, 1, 1 << 20, true, "bytes a segment"},
        {"variation", &FaultSpec::variation, 0, 1 << 20, false, "a segment is size +- this (seeded), at least 1"},
        {"delay_ms", &FaultSpec::delay_ms, 0, max_ms, false, "pause after each segment (default 0)"}}},
      {FaultKind::latency, "latency", "holds every chunk it reads for a time before it may leave, order kept",
       {{"ms", &FaultSpec::latency_ms, 0, max_ms, true, "added to each chunk"},
        {"jitter", &FaultSpec::jitter_ms, 0, max_ms, false, "+- this much more, seeded (default 0)"}}},
      {FaultKind::bandwidth, "bandwidth", "paces the stream to a rate, 10 ms worth of bytes a write",
       {{"rate", &FaultSpec::rate_kbs, 1, 1L << 30, true, "KB/s, 1 KB = 1000 bytes"}}},
      {FaultKind::limit_data, "limit_data", "passes K bytes in its direction, then closes both sides (FIN)",
       {{"bytes", &FaultSpec::at, 0, max_bytes, true, "K: the bytes that pass before both sides close"}}},
      {FaultKind::reset_peer, "reset_peer",
       "when byte K has passed in its direction, resets the client (SO_LINGER {1,0}) and closes the server",
       {{"at", &FaultSpec::at, 0, max_bytes, true, "K: the bytes that pass before the reset"}}},
      {FaultKind::blackhole, "blackhole", "reads and drops everything in its direction, its end of file too: silence",
       {}},
      {FaultKind::half_close, "half_close",
       "after K bytes, shutdown(SHUT_WR) toward the direction's receiver; later bytes are dropped, the other "
       "direction goes on",
       {{"at", &FaultSpec::at, 0, max_bytes, true, "K: the bytes that pass before the shutdown"}}},
      {FaultKind::slow_close, "slow_close", "when the sender closes, holds the close for a time before passing it on",
       {{"delay_ms", &FaultSpec::delay_ms, 0, max_ms, true, "how long the close waits"}}},
  };
  return catalogue;
}

const char* fault_name(FaultKind kind) { return fault_catalogue()[static_cast<size_t>(kind)].name; }

std::optional<long> parse_number(const std::string& text, long lo, long hi) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  errno = 0;
  long value = std::strtol(text.c_str(), nullptr, 10);
  if (errno != 0 || value < lo || value > hi) return std::nullopt;
  return value;
}

std::vector<FaultSpec> parse_fault(const std::string& text, std::string* error) {
  std::vector<std::string> parts = split(text, ':');
  if (parts.size() < 2 || parts.size() > 3) {
    *error = "--fault '" + text + "': expected DIRECTION:NAME[:KEY=VALUE,...]";
    return {};
  }
  const std::string& dir = parts[0];
  if (dir != "upstream" && dir != "downstream" && dir != "both") {
    *error = "--fault '" + text + "': direction must be upstream, downstream or both, got '" + dir + "'";
    return {};
  }
  const FaultInfo* info = find_fault(parts[1]);
  if (info == nullptr) {
    *error = "--fault '" + text + "': unknown fault '" + parts[1] + "' (one of " + fault_names() + ")";
    return {};
  }
  FaultSpec spec;
  spec.kind = info->kind;
  std::string why = apply_settings(*info, parts.size() == 3 ? parts[2] : "", &spec);
  if (!why.empty()) {
    *error = "--fault '" + text + "': " + why;
    return {};
  }
  std::vector<FaultSpec> specs;
  for (Direction d : {Direction::upstream, Direction::downstream}) {
    if (dir != "both" && dir != direction_name(d)) continue;
    spec.direction = d;
    specs.push_back(spec);
  }
  return specs;
}

FlowPlan::FlowPlan(const std::vector<FaultSpec>& faults, long conn, Direction direction) {
  for (const FaultSpec& f : faults)
    if (f.direction == direction && (f.conn < 0 || f.conn == conn)) slots_[static_cast<size_t>(f.kind)] = &f;
}

bool FlowPlan::empty() const {
  for (const FaultSpec* f : slots_)
    if (f != nullptr) return false;
  return true;
}

}  // namespace tlsproxy
