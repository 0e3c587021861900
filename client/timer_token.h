// What a DeadlineQueue entry of the loop wakes: an attempt (by conn) and which of its timers.
// Encoded in the entry's 64-bit token as conn << 2 | kind.
#pragma once

#include <cstdint>

namespace tlsnb {

enum class TimerKind : uint64_t {
  deadline = 0,  // the attempt's --deadline-ms
  hold = 1,      // the end of --hold-ms after the handshake
  lookup = 2,    // the lookup's own --dns-timeout-ms
  fallback = 3,  // RFC 8305: the IPv4 dial, when the IPv6 one has not connected after its head start
};

struct TimerToken {
  uint64_t conn = 0;
  TimerKind kind = TimerKind::deadline;
};

constexpr uint64_t encode_timer(uint64_t conn, TimerKind kind) { return conn << 2 | static_cast<uint64_t>(kind); }

constexpr TimerToken decode_timer(uint64_t token) { return TimerToken{token >> 2, static_cast<TimerKind>(token & 3)}; }

}  // namespace tlsnb
