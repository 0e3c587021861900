// The contract's command line (clients/README.md "Arguments"), parsed without I/O: Options, or
// the one stderr line and its exit status. A client under test names the contract's flags it
// does not have (Lacks); asked for one, it exits 89 with the reason, but only once the command
// line is otherwise valid (bad usage, exit 2, comes first). ready_to_run() is main's side.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace contract {

constexpr int exit_usage = 2;
constexpr int exit_lacking = 89;

// --transport: bio, the program moves the bytes (its own send/recv under the library);
// fd, the library's own socket I/O.
enum class Transport { bio, fd };
// --sigpipe: leave the disposition as inherited (no flag), restore SIG_DFL, or ignore it.
enum class Sigpipe { leave, default_action, ignore };

struct Options {
  std::string target;      // TARGET of TARGET:PORT (an IPv4 literal or a name)
  uint16_t port = 0;
  std::string name;        // --name: what the certificate must carry, the SNI for a name (default TARGET)
  std::string connect_ip;  // --connect
  std::string cafile;
  bool system_trust = false;
  bool verify = true;
  bool verify_name = true;  // false: --no-verify-name (the chain verified, the leaf's name or IP not matched)
  bool partial_chain = false;
  long count = 1;
  long parallel = 64;
  long requests = 1;
  long body = 0;
  uint32_t seed = 1;
  long deadline_ms = 2000;
  int tls_max = 13;  // 12 or 13
  bool json = false;
  bool resume = false;
  long hold_ms = 0;
  std::vector<std::string> crls;  // --crl (repeatable), --crl-all, --ocsp-staple off|check|require
  bool crl_all = false;
  std::string ocsp_staple = "off";
  std::string client_cert, client_key;  // --cert, --key
  std::vector<std::string> pins;        // --pin-sha256, base64 as given (44 characters, 32 bytes)
  Transport transport = Transport::bio;
  Sigpipe sigpipe = Sigpipe::leave;

  bool name_is_ip() const;
  std::string dial_ip() const;  // --connect, else TARGET (then an IPv4 literal)
};

// A flag of the contract this client does not have: exit 89 with `why` (a value is still required).
struct LackedFlag {
  const char* flag;
  bool takes_value;
  const char* why;
};

// What a client under test cannot do, in its own words.
struct Lacks {
  std::vector<LackedFlag> flags;
  const char* transport_fd = nullptr;  // non-null: `--transport fd` is exit 89 with this reason
  const char* never_resolves = "";     // ends the error for a name without --connect: "(... never resolves a name)"
};

// A client that has no resolver and dials --connect: its own `flags`, the resolver's four (--ns,
// --dns-udp, --dns-timeout-ms, --allow-private: "not offered: FLAG: this client has no resolver"),
// and "(this client never resolves a name)" for a name without --connect.
Lacks without_resolver(std::vector<LackedFlag> flags, const char* transport_fd);

struct ParseResult {
  std::optional<Options> options;  // the run goes on
  bool help = false;               // --help: print the usage, exit 0
  int exit_code = 0;               // exit_usage or exit_lacking, with `error`
  std::string error;               // the one stderr line
};

ParseResult parse_options(const std::vector<std::string>& args, const Lacks& lacks);

// What main does with the verdict: --help prints `usage` on stdout (exit 0), an error its one
// line on stderr, "PROGRAM: error" (exit 2 or 89). False then, with *exit_code set.
bool ready_to_run(const ParseResult& parsed, const char* program, const char* usage, int* exit_code);

// --sigpipe: SIGPIPE's disposition as asked (Sigpipe::leave: as inherited).
void apply_sigpipe(Sigpipe sigpipe);

// A file the user named (--cafile, --crl, --cert, --key): "" when it is a readable, non-empty
// regular file; else what is wrong (the caller prefixes the flag; exit 2). The reference's check
// (client/pem_file.h check_readable_file), its words; an open that failed for want of memory is a
// line too here, where tlsnb and the GnuTLS adapter tell it apart (they take FileCheck itself).
std::string file_problem(const std::string& path);

// Whether the file holds `marker` anywhere (a PEM block's first line, "-----BEGIN X509 CRL-----"),
// for a library that, given a file without one, tries it as DER and says "format is invalid" where
// tlsnb's words are "no PEM certificate". False when it cannot be read.
bool file_holds(const std::string& path, const char* marker);

// --cafile before such a library loads it: file_problem, then a PEM certificate in it; the line
// ("--cafile: ...") or "" when it is usable.
std::string cafile_problem(const std::string& path);

// --cert and --key, each file_problem's check: the line ("--cert: ...", "--key: ...") or "".
std::string identity_files_problem(const Options& o);

}  // namespace contract
