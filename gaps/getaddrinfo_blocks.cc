// gaps/getaddrinfo_blocks: getaddrinfo blocks its calling thread for the whole lookup, so
// an event loop that calls it stops for as long as the name server takes. Measured the
// seed's way (section 7): a loop ticking every millisecond, a lookup of a name the stub
// answers after kDelayMs, the longest gap between two ticks; the control runs the same
// lookup on another thread.
//
// The stub listens on 127.0.0.1:53 inside a private network and mount namespace of this
// process (unshare(CLONE_NEWNET | CLONE_NEWNS), root), where /etc/resolv.conf is a bind
// mount naming it: nothing leaks to or from the host's resolver. Exit 77 when the
// namespaces cannot be made (not root): the checker reports SKIP.
#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netdb.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "gaplib.h"

namespace {

constexpr int kDelayMs = 300;
const char* const kName = "slow.test";

// A private network (with its own lo) and a private view of /etc/resolv.conf.
bool private_resolver(std::string* tmpdir) {
  if (unshare(CLONE_NEWNET | CLONE_NEWNS) != 0) return false;
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) gap::die("cannot make / private");
  gap::Fd s(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  ifreq ifr{};
  strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  if (ioctl(s.get(), SIOCGIFFLAGS, &ifr) != 0) gap::die("no lo in the new namespace");
  ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
  if (ioctl(s.get(), SIOCSIFFLAGS, &ifr) != 0) gap::die("cannot bring lo up");
  char dir[] = "/tmp/gap-resolv-XXXXXX";
  if (!mkdtemp(dir)) gap::die("mkdtemp failed");
  *tmpdir = dir;
  std::string conf = *tmpdir + "/resolv.conf";
  FILE* f = std::fopen(conf.c_str(), "w");
  if (!f) gap::die("cannot write " + conf);
  std::fputs("nameserver 127.0.0.1\noptions timeout:5 attempts:1\n", f);
  std::fclose(f);
  if (mount(conf.c_str(), "/etc/resolv.conf", nullptr, MS_BIND, nullptr) != 0) {
    gap::die(std::string("cannot bind-mount resolv.conf: ") + strerror(errno));
  }
  return true;
}

// servers/dns_stub.py on port 53, answering kName after kDelayMs; returns its pid once READY.
pid_t start_stub(const std::string& stub) {
  int out[2];
  if (pipe(out) != 0) gap::die("pipe failed");
  std::string zone = std::string(kName) + "=slow:" + std::to_string(kDelayMs) + ":a:127.0.0.1";
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // the stub never outlives this program
    dup2(out[1], 1);
    close(out[0]);
    close(out[1]);
    execl("/usr/bin/python3", "python3", stub.c_str(), "--port", "53", "--zone", zone.c_str(), nullptr);
    _exit(127);
  }
  close(out[1]);
  FILE* lines = fdopen(out[0], "r");
  char line[256];
  while (fgets(line, sizeof line, lines)) {
    if (strncmp(line, "READY ", 6) == 0) {
      fclose(lines);
      return pid;
    }
  }
  fclose(lines);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  gap::die("the DNS stub never printed READY: " + stub);
}

struct Lookup {
  std::string answer = "none";
  double ms = 0;
};

Lookup lookup() {
  Lookup r;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  double start = gap::now_ms();
  int rc = getaddrinfo(kName, nullptr, &hints, &res);
  r.ms = gap::now_ms() - start;
  if (rc != 0) {
    r.answer = std::string("error:") + std::to_string(rc);
    return r;
  }
  char buf[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr, buf, sizeof buf);
  r.answer = buf;
  freeaddrinfo(res);
  return r;
}

// A loop that ticks every millisecond and starts the lookup after 20 ms, on itself or on a
// worker thread; runs until the lookup is done and kDelayMs more have passed. Observes
// whether the loop stalled and what the lookup answered.
void run_loop(bool on_worker, const std::string& label, gap::Observation& obs) {
  Lookup result;
  std::atomic<bool> done{false};
  std::thread worker;
  double start = gap::now_ms(), last = start, longest = 0, done_at = 0;
  bool started = false;
  while (!done || gap::now_ms() - done_at < kDelayMs) {
    poll(nullptr, 0, 1);
    double t = gap::now_ms();
    longest = std::max(longest, t - last);
    last = t;
    if (!started && t - start >= 20) {
      started = true;
      auto run = [&] {
        result = lookup();
        done_at = gap::now_ms();
        done = true;
      };
      if (on_worker) {
        worker = std::thread(run);
      } else {
        run();
      }
    }
    if (t - start > 10 * kDelayMs + 10000) break;  // a stuck lookup must not hang the gate
  }
  if (worker.joinable()) worker.join();
  char buf[96];
  std::snprintf(buf, sizeof buf, "longest_tick_gap_ms=%.1f,lookup_ms=%.1f", longest, result.ms);
  gap::figure(label, buf);
  // Bands wide enough for a loaded 2-core machine: a stall of the lookup's length, or well under half.
  obs.add(label, longest >= 0.8 * kDelayMs ? "blocked" : longest < 0.5 * kDelayMs ? "not_blocked" : "unclear");
  obs.add(label + ".answer", result.answer);
}

}  // namespace

int main(int argc, char** argv) {
  auto flags = gap::init(argc, argv, {"--dns-stub"});
  if (!flags.count("--dns-stub")) gap::die("--dns-stub PATH is required (servers/dns_stub.py)");
  std::string tmpdir;
  if (!private_resolver(&tmpdir)) {
    std::fprintf(stderr, "getaddrinfo_blocks: unshare(CLONE_NEWNET|CLONE_NEWNS): %s (needs root)\n", strerror(errno));
    return 77;
  }
  pid_t stub = start_stub(flags["--dns-stub"]);
  gap::Observation obs;
  run_loop(false, "getaddrinfo_on_loop", obs);
  run_loop(true, "getaddrinfo_on_worker_thread", obs);
  kill(stub, SIGTERM);
  waitpid(stub, nullptr, 0);
  umount("/etc/resolv.conf");
  unlink((tmpdir + "/resolv.conf").c_str());
  rmdir(tmpdir.c_str());
  return obs.print();
}
