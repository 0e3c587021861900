#include "contract_options.h"

#include <cctype>
#include <csignal>
#include <cstdio>

#include "client/flag_table.h"
#include "client/pem_file.h"

namespace contract {

namespace {

ParseResult fail(int code, std::string why) {
  ParseResult r;
  r.exit_code = code;
  r.error = std::move(why);
  return r;
}

}  // namespace

bool Options::name_is_ip() const { return tlsnb::is_ipv4(name); }

std::string Options::dial_ip() const { return connect_ip.empty() ? target : connect_ip; }

namespace {

// 44 base64 characters ending in one '=': the form of a 32-byte SHA-256 (RFC 7469), checked
// without a crypto library (the adapters decode it their own way).
bool looks_like_pin(const std::string& v) {
  if (v.size() != 44 || v[43] != '=') return false;
  for (size_t i = 0; i < 43; ++i)
    if (!std::isalnum(static_cast<unsigned char>(v[i])) && v[i] != '+' && v[i] != '/') return false;
  return true;
}

// --crl, --crl-all, --ocsp-staple, --cert, --key, --pin-sha256 (client/README.md); an adapter
// that lacks one names it in Lacks, which replaces these entries.
void add_revocation_flags(tlsnb::FlagTable<Options>& table) {
  table["--crl"] = {true, [](Options& o, const std::string& v) -> std::string {
                      if (v.empty()) return "expects a non-empty value";
                      o.crls.push_back(v);
                      return "";
                    }};
  table["--crl-all"] = tlsnb::toggle<Options>(&Options::crl_all, true);
  table["--ocsp-staple"] = {true, [](Options& o, const std::string& v) -> std::string {
                              if (v != "off" && v != "check" && v != "require")
                                return "expects off, check or require, got '" + v + "'";
                              o.ocsp_staple = v;
                              return "";
                            }};
  table["--cert"] = tlsnb::text<Options>(&Options::client_cert);
  table["--key"] = tlsnb::text<Options>(&Options::client_key);
  table["--pin-sha256"] = {true, [](Options& o, const std::string& v) -> std::string {
                             if (!looks_like_pin(v)) return "expects the base64 of 32 bytes (RFC 7469), got '" + v + "'";
                             o.pins.push_back(v);
                             return "";
                           }};
}

}  // namespace

Lacks without_resolver(std::vector<LackedFlag> flags, const char* transport_fd) {
  for (const LackedFlag& resolver : {LackedFlag{"--ns", true, "not offered: --ns: this client has no resolver (dial with --connect)"},
                                     LackedFlag{"--dns-udp", false, "not offered: --dns-udp: this client has no resolver"},
                                     LackedFlag{"--dns-timeout-ms", true, "not offered: --dns-timeout-ms: this client has no resolver"},
                                     LackedFlag{"--allow-private", false, "not offered: --allow-private: this client has no resolver"}})
    flags.push_back(resolver);
  return {std::move(flags), transport_fd, "(this client never resolves a name)"};
}

ParseResult parse_options(const std::vector<std::string>& args, const Lacks& lacks) {
  std::string lacked;  // the first flag asked for that this client does not have
  tlsnb::FlagTable<Options> table = tlsnb::core_flags<Options>();
  table["--tls-max"] = tlsnb::choice<Options, int>(&Options::tls_max, "1.2", 12, "1.3", 13);
  table["--transport"] = tlsnb::choice<Options, Transport>(&Options::transport, "bio", Transport::bio, "fd", Transport::fd);
  table["--sigpipe"] =
      tlsnb::choice<Options, Sigpipe>(&Options::sigpipe, "default", Sigpipe::default_action, "ignore", Sigpipe::ignore);
  table["--no-verify-name"] = tlsnb::toggle<Options>(&Options::verify_name, false);
  add_revocation_flags(table);
  for (const LackedFlag& f : lacks.flags) {
    table[f.flag] = {f.takes_value, [&lacked, why = f.why](Options&, const std::string&) -> std::string {
                       if (lacked.empty()) lacked = why;
                       return "";
                     }};
  }
  Options o;
  tlsnb::Arguments words = tlsnb::apply_flags(args, table, o);
  if (words.help) {
    ParseResult r;
    r.help = true;
    return r;
  }
  if (!words.error.empty()) return fail(exit_usage, words.error);
  if (std::string err = tlsnb::take_target(words.positional, &o.target, &o.port); !err.empty())
    return fail(exit_usage, err);
  if (o.name.empty()) o.name = o.target;
  if (lacked.empty() && o.transport == Transport::fd && lacks.transport_fd != nullptr) lacked = lacks.transport_fd;
  if (o.client_cert.empty() != o.client_key.empty()) return fail(exit_usage, "--cert and --key go together");
  if (std::string err = tlsnb::check_name_choice(o); !err.empty()) return fail(exit_usage, err);
  if (!o.verify && !o.pins.empty())
    return fail(exit_usage, "--pin-sha256 needs verification: pins never replace it (drop --no-verify)");
  if (!o.verify && (!o.crls.empty() || o.crl_all || o.ocsp_staple != "off"))
    return fail(exit_usage, "--crl, --crl-all and --ocsp-staple need verification (drop --no-verify)");
  if (!lacked.empty()) return fail(exit_lacking, lacked);
  if (!tlsnb::is_ipv4(o.target) && o.connect_ip.empty())
    return fail(exit_usage, "TARGET '" + o.target + "' is a name: give --connect IP " + lacks.never_resolves);
  ParseResult r;
  r.options = o;
  return r;
}

bool ready_to_run(const ParseResult& parsed, const char* program, const char* usage, int* exit_code) {
  if (parsed.help) {
    std::fputs(usage, stdout);
    *exit_code = 0;
    return false;
  }
  if (!parsed.options) {
    std::fprintf(stderr, "%s: %s\n", program, parsed.error.c_str());
    *exit_code = parsed.exit_code;
    return false;
  }
  return true;
}

void apply_sigpipe(Sigpipe sigpipe) {
  if (sigpipe == Sigpipe::ignore) std::signal(SIGPIPE, SIG_IGN);
  if (sigpipe == Sigpipe::default_action) std::signal(SIGPIPE, SIG_DFL);
}

std::string file_problem(const std::string& path) {
  std::string why;
  return tlsnb::check_readable_file(path, &why) == tlsnb::FileCheck::usable ? "" : why;
}

bool file_holds(const std::string& path, const char* marker) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  std::string text;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  std::fclose(f);
  return text.find(marker) != std::string::npos;
}

std::string cafile_problem(const std::string& path) {
  if (std::string p = file_problem(path); !p.empty()) return "--cafile: " + p;
  if (!file_holds(path, "-----BEGIN CERTIFICATE-----")) return "--cafile: no PEM certificate in '" + path + "'";
  return "";
}

std::string identity_files_problem(const Options& o) {
  if (std::string p = file_problem(o.client_cert); !p.empty()) return "--cert: " + p;
  if (std::string p = file_problem(o.client_key); !p.empty()) return "--key: " + p;
  return "";
}

}  // namespace contract
