// gaps/v4mapped_reaches_loopback: an IPv6 socket on Linux dials the IPv4 address inside
// ::ffff:a.b.c.d, so ::ffff:127.0.0.1 reaches a listener on 127.0.0.1, and connect() to
// :: reaches a listener on ::1 (the unspecified address is taken as the loopback). An
// AAAA record can therefore carry a loopback or private IPv4 past a judge that reads
// IPv6 blocks alone. The control: IPV6_V6ONLY on the dialling socket refuses the mapped
// address (ENETUNREACH). Loopback only, no OpenSSL.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "gaplib.h"

namespace {

// A listener on `text` (either family), port 0; its port.
gap::Fd listen_on(const char* text, int family, uint16_t* port) {
  gap::Fd fd(socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (family == AF_INET6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    inet_pton(AF_INET6, text, &a->sin6_addr);
    len = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    inet_pton(AF_INET, text, &a->sin_addr);
    len = sizeof *a;
  }
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0 || listen(fd.get(), 4) != 0)
    gap::die(std::string("cannot listen on ") + text + ": " + strerror(errno));
  getsockname(fd.get(), reinterpret_cast<sockaddr*>(&ss), &len);
  *port = ntohs(family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                                   : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  return fd;
}

// Connects an IPv6 socket to [text]:port (blocking, loopback): "connected" or the errno's name.
std::string dial6(const char* text, uint16_t port, bool v6only) {
  gap::Fd fd(socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int on = v6only ? 1 : 0;
  setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_port = htons(port);
  inet_pton(AF_INET6, text, &a.sin6_addr);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return "connected";
  return errno == ENETUNREACH ? "ENETUNREACH" : errno == ECONNREFUSED ? "ECONNREFUSED" : std::to_string(errno);
}

}  // namespace

int main(int argc, char** argv) {
  gap::init(argc, argv);
  gap::Observation obs;
  uint16_t port4 = 0, port6 = 0;
  gap::Fd listener4 = listen_on("127.0.0.1", AF_INET, &port4);
  gap::Fd listener6 = listen_on("::1", AF_INET6, &port6);
  obs.add("::ffff:127.0.0.1_to_127.0.0.1_listener", dial6("::ffff:127.0.0.1", port4, false));
  obs.add("::_to_::1_listener", dial6("::", port6, false));
  obs.add("::ffff:127.0.0.1+IPV6_V6ONLY", dial6("::ffff:127.0.0.1", port4, true));
  return obs.print();
}
