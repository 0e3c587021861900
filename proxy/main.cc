// tlslab-proxy: a TCP fault proxy between a client and a server on loopback (README.md).
#include <arpa/inet.h>
#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "client/process_figures.h"
#include "options.h"
#include "relay_loop.h"
#include "socket_ops.h"
#include "tally.h"

namespace tlsproxy {
namespace {

constexpr int exit_cannot_listen = 1;
constexpr int exit_usage = 2;

// Two descriptors a connection: --max-conns must not meet the default soft limit of 1,024 first.
void raise_descriptor_limit(long max_conns) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  rlim_t wanted = static_cast<rlim_t>(max_conns) * 2 + 64;
  if (limit.rlim_cur >= wanted) return;
  limit.rlim_cur = limit.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, limit.rlim_max);
  setrlimit(RLIMIT_NOFILE, &limit);
}

// SIGTERM and SIGINT wait in a signalfd; blocked before READY so that one sent at once is not lost.
void block_stop_signals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigprocmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

std::string address_text(const sockaddr_in& addr) {
  char ip[INET_ADDRSTRLEN] = "";
  inet_ntop(AF_INET, &addr.sin_addr, ip, sizeof ip);
  return std::string(ip) + ":" + std::to_string(ntohs(addr.sin_port));
}

int run(const Options& o) {
  block_stop_signals();
  raise_descriptor_limit(o.max_conns);
  long fds_at_start = tlsnb::count_open_fds();
  Tally tally;
  std::string error;
  {
    Opened listener = listen_on(o.listen);
    if (listener.err != 0) {
      std::fprintf(stderr, "tlslab-proxy: cannot listen on %s: %s\n", address_text(o.listen).c_str(),
                   std::strerror(listener.err));
      return exit_cannot_listen;
    }
    uint16_t port = local_port(listener.fd.get());
    RelayLoop loop(o, std::move(listener.fd), tally);
    error = loop.open();
    if (!error.empty()) {
      std::fprintf(stderr, "tlslab-proxy: %s\n", error.c_str());
      return exit_cannot_listen;
    }
    std::printf("READY %u\n", port);
    std::fflush(stdout);
    error = loop.run();
  }
  std::printf("REPORT %s\n", tally.json(o.seed, o.seed_given, fds_at_start, tlsnb::count_open_fds()).c_str());
  std::fflush(stdout);
  if (!error.empty()) std::fprintf(stderr, "tlslab-proxy: %s\n", error.c_str());
  return error.empty() ? 0 : 1;
}

}  // namespace
}  // namespace tlsproxy

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  tlsproxy::ParseResult parsed = tlsproxy::parse_options(args);
  if (parsed.help) {
    std::fputs(tlsproxy::usage().c_str(), stdout);
    return 0;
  }
  if (!parsed.options) {
    std::fprintf(stderr, "tlslab-proxy: %s\n", parsed.error.c_str());
    return tlsproxy::exit_usage;
  }
  return tlsproxy::run(*parsed.options);
}
