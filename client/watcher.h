// Anything the event loop wakes for readiness: an attempt's socket, a lookup's socket.
#pragma once

#include <cstdint>

namespace tlsnb {

class Watcher {
 public:
  virtual ~Watcher() = default;
  virtual void on_event(uint32_t events) = 0;
};

}  // namespace tlsnb
