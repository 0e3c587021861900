// Anything the event loop wakes for readiness: an attempt's socket, a lookup's socket.
#pragma once

#include <sys/epoll.h>

#include <cstdint>

namespace tlsnb {

class Watcher {
 public:
  virtual ~Watcher() = default;
  virtual void on_event(uint32_t events) = 0;
};

// Adds or modifies `fd` in the epoll set, waking `watcher`; epoll_ctl's result.
inline int epoll_watch(int epfd, int op, int fd, uint32_t events, Watcher* watcher) {
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = watcher;
  return epoll_ctl(epfd, op, fd, &ev);
}

}  // namespace tlsnb
