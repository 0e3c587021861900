#include "options.h"

#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

namespace tlsproxy {

namespace {

// A seed that differs run to run when none is given (it is printed in the REPORT).
uint64_t fresh_seed() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return (static_cast<uint64_t>(ts.tv_nsec) ^ static_cast<uint64_t>(ts.tv_sec) << 20 ^
          static_cast<uint64_t>(getpid()) << 40) & 0x7fffffff;
}

// Two faults of one kind on one direction of one connection: which one is meant is a guess.
std::string twice_given(const std::vector<FaultSpec>& faults) {
  for (size_t i = 0; i < faults.size(); ++i)
    for (size_t j = i + 1; j < faults.size(); ++j) {
      const FaultSpec& a = faults[i];
      const FaultSpec& b = faults[j];
      if (a.kind == b.kind && a.direction == b.direction && (a.conn < 0 || b.conn < 0 || a.conn == b.conn))
        return std::string("--fault: ") + direction_name(a.direction) + ":" + fault_name(a.kind) +
               " is given twice for the same connections";
    }
  return "";
}

// Applies one flag with its value; "" or the error.
std::string apply(Options& o, const std::string& flag, const std::string& value) {
  if (flag == "--listen" || flag == "--upstream") {
    std::optional<sockaddr_in> addr = parse_address(value, flag == "--listen" ? 0 : 1);
    if (!addr) return flag + " expects an IPv4 ADDR:PORT, got '" + value + "'";
    (flag == "--listen" ? o.listen : o.upstream) = *addr;
    return "";
  }
  if (flag == "--fault") {
    std::string error;
    std::vector<FaultSpec> specs = parse_fault(value, &error);
    o.faults.insert(o.faults.end(), specs.begin(), specs.end());
    return error;
  }
  long lo = flag == "--max-conns" ? 1 : 0;
  long hi = flag == "--seed" ? 0x7fffffffL : 1L << 30;
  std::optional<long> number = parse_number(value, lo, hi);
  if (!number) return flag + " expects a whole number in " + std::to_string(lo) + ".." + std::to_string(hi) +
                      ", got '" + value + "'";
  if (flag == "--only-conn") o.only_conn = *number;
  if (flag == "--max-conns") o.max_conns = *number;
  if (flag == "--seed") {
    o.seed = static_cast<uint64_t>(*number);
    o.seed_given = true;
  }
  return "";
}

}  // namespace

std::optional<sockaddr_in> parse_address(const std::string& text, long lowest_port) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos) return std::nullopt;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  std::optional<long> port = parse_number(text.substr(colon + 1), lowest_port, 65535);
  if (!port || inet_pton(AF_INET, text.substr(0, colon).c_str(), &addr.sin_addr) != 1) return std::nullopt;
  addr.sin_port = htons(static_cast<uint16_t>(*port));
  return addr;
}

ParseResult parse_options(const std::vector<std::string>& args) {
  static const char* const valued[] = {"--listen", "--upstream", "--fault", "--only-conn", "--seed", "--max-conns"};
  Options o;
  o.listen = *parse_address("127.0.0.1:0", 0);
  bool upstream_given = false;
  ParseResult result;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (flag == "--help") {
      result.help = true;
      return result;
    }
    bool known = false;
    for (const char* name : valued) known = known || flag == name;
    if (!known) {
      result.error = "unknown argument '" + flag + "' (--help lists the flags)";
      return result;
    }
    if (i + 1 == args.size()) {
      result.error = flag + " needs a value";
      return result;
    }
    result.error = apply(o, flag, args[++i]);
    if (!result.error.empty()) return result;
    upstream_given = upstream_given || flag == "--upstream";
  }
  if (!upstream_given) {
    result.error = "--upstream ADDR:PORT is required";
    return result;
  }
  for (FaultSpec& f : o.faults)
    if (!f.conn_given) f.conn = o.only_conn;
  result.error = twice_given(o.faults);
  if (!result.error.empty()) return result;
  if (!o.seed_given) o.seed = fresh_seed();
  result.options = o;
  return result;
}

std::string usage() {
  std::string text =
      "usage: tlslab-proxy --upstream ADDR:PORT [options]\n"
      "\n"
      "A TCP fault proxy: one thread, epoll. Binds, prints READY <port>, dials the upstream for each\n"
      "accepted connection and copies bytes both ways through the faults given. SIGTERM: one REPORT {json}.\n"
      "\n"
      "  --upstream ADDR:PORT  the server each connection is relayed to (IPv4 literal)\n"
      "  --listen ADDR:PORT    where to accept (default 127.0.0.1:0, the kernel's port)\n"
      "  --fault SPEC          a fault, repeatable: DIRECTION:NAME[:KEY=VALUE[,KEY=VALUE...]]\n"
      "                        DIRECTION: upstream (client->server), downstream (server->client), both\n"
      "  --only-conn N         faults without conn= act on connection N only (0-based accept order)\n"
      "  --seed S              seed of jitter and segment variation (default: a fresh one, reported)\n"
      "  --max-conns N         connections relayed at once; past it a new one is closed (default 1024)\n"
      "  --help                this text\n"
      "\n"
      "Faults (every one also takes conn=N):\n";
  for (const FaultInfo& info : fault_catalogue()) {
    text += "  " + std::string(info.name) + ": " + info.effect + "\n";
    for (const Setting& s : info.settings)
      text += "      " + std::string(s.key) + "=N" + (s.required ? "  " : "  (optional) ") + s.meaning + "\n";
  }
  text += "\nExit: 0 after SIGTERM (or SIGINT), 1 when it cannot listen, 2 bad usage.\n";
  return text;
}

}  // namespace tlsproxy
