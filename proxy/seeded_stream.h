// One stream of seeded numbers per (seed, connection, direction): the same seed replays the
// same jitter and segment sizes on every connection, whatever order the loop serves them in.
#pragma once

#include <cstdint>

namespace tlsproxy {

class SeededStream {
 public:
  SeededStream(uint64_t seed, uint64_t conn, uint64_t direction)
      : state_(seed * 0x9E3779B97F4A7C15ULL ^ (conn + 1) * 0xBF58476D1CE4E5B9ULL ^ (direction + 1)) {}
  // splitmix64: small, and the same on every platform (std:: distributions are not).
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in -spread..+spread.
  long around(long spread) {
    if (spread <= 0) return 0;
    return static_cast<long>(next() % static_cast<uint64_t>(2 * spread + 1)) - spread;
  }

 private:
  uint64_t state_;
};

}  // namespace tlsproxy
