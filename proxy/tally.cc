#include "tally.h"

#include <algorithm>

namespace tlsproxy {

namespace {

std::string quoted(const std::string& text) { return "\"" + text + "\""; }  // our own names: nothing to escape

std::string pair(const std::string& key, const std::string& value) { return quoted(key) + ": " + value; }

std::string pair(const std::string& key, uint64_t value) { return pair(key, std::to_string(value)); }

std::string record_json(const ConnRecord& r) {
  std::string faults;
  for (const std::string& f : r.faults) faults += (faults.empty() ? "" : ", ") + quoted(f);
  return "{" + pair("conn", static_cast<uint64_t>(r.index)) + ", " + pair("bytes_upstream", r.bytes[0]) + ", " +
         pair("bytes_downstream", r.bytes[1]) + ", " + pair("dropped_upstream", r.dropped[0]) + ", " +
         pair("dropped_downstream", r.dropped[1]) + ", " + pair("end", quoted(r.end)) + ", " +
         pair("faults", "[" + faults + "]") + "}";
}

}  // namespace

void Tally::buffered(size_t bytes) { buffer_peak_ = std::max(buffer_peak_, bytes); }

void Tally::ended(const ConnRecord& record) {
  for (size_t d = 0; d < 2; ++d) {
    bytes_[d] += record.bytes[d];
    dropped_[d] += record.dropped[d];
  }
  ++ends_[record.end];
  if (records_.size() < records_kept) records_.push_back(record);
  else ++records_left_out_;
}

std::string Tally::json(uint64_t seed, bool seed_given, long fds_at_start, long fds_open) const {
  std::string ends;
  for (const auto& [why, count] : ends_) ends += (ends.empty() ? "" : ", ") + pair(why, count);
  std::string faults;
  for (size_t k = 0; k < fault_kinds; ++k) {
    if (faults_[k].armed == 0) continue;
    faults += (faults.empty() ? "" : ", ") +
              pair(fault_name(static_cast<FaultKind>(k)),
                   "{" + pair("armed", faults_[k].armed) + ", " + pair("fired", faults_[k].fired) + "}");
  }
  std::string conns;
  for (const ConnRecord& r : records_) conns += (conns.empty() ? "" : ", ") + record_json(r);
  return "{" + pair("connections", connections_) + ", " + pair("refused", refused_) + ", " +
         pair("bytes_upstream", bytes_[0]) + ", " + pair("bytes_downstream", bytes_[1]) + ", " +
         pair("dropped_upstream", dropped_[0]) + ", " + pair("dropped_downstream", dropped_[1]) + ", " +
         pair("buffer_peak", buffer_peak_) + ", " + pair("ends", "{" + ends + "}") + ", " +
         pair("faults", "{" + faults + "}") + ", " + pair("seed", seed) + ", " +
         pair("seed_given", seed_given ? "true" : "false") + ", " +
         pair("fds_at_start", std::to_string(fds_at_start)) + ", " + pair("fds_open", std::to_string(fds_open)) +
         ", " + pair("per_conn", "[" + conns + "]") + ", " + pair("per_conn_left_out", records_left_out_) + "}";
}

}  // namespace tlsproxy
