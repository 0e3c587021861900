// What one run of the engine (attempt, loop, resolver, transport, tls_context) is asked to do:
// where to connect, what to verify, how many attempts and how they end. The CLI fills it
// from the command line (options.h); the engine reads nothing else.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tlsnb {

enum class TransportKind { bio, fd };

// --ocsp-staple: off (nothing asked), check (a staple that comes must verify), require (one must come).
enum class StaplePolicy { off, check, require };

struct RunConfig {
  std::string target;        // TARGET of TARGET:PORT: an IP literal or a name
  uint16_t port = 0;
  std::string name;          // what the certificate must carry; SNI (default: target); an A-label
  std::string name_unicode;  // --name as given, when IDNA turned it into the A-label above
  std::string connect_ip;    // dial this, target is then only the name
  std::string ns_ip;         // resolve the name over DNS with this server
  uint16_t ns_port = 0;
  bool ns_udp = false;       // UDP first, TCP when truncated
  long dns_timeout_ms = 1000;  // a lookup's own deadline (lookup/-203 timeout)
  long head_start_ms = 250;    // RFC 8305 5: IPv6's lead over IPv4 (the Connection Attempt Delay)
  bool allow_private = false;
  std::string cafile;
  bool system_trust = false;
  bool verify = true;
  bool verify_name = true;   // false (--no-verify-name): the chain verified as ever, the leaf's name or IP not matched
  bool partial_chain = false;
  int verify_depth = -1;     // -1: OpenSSL's default
  std::vector<std::string> crls;   // --crl files: CRL_CHECK (the leaf's issuer must have one)
  bool crl_all = false;            // --crl-all: CRL_CHECK_ALL (every certificate of the chain)
  StaplePolicy staple = StaplePolicy::off;
  std::string client_cert;         // --cert: sent when the server asks (with client_key)
  std::string client_key;
  std::vector<std::string> pins;   // --pin-sha256: base64 SPKI SHA-256, one must match the verified chain
  // RFC 5280 6.1.1's policy inputs: any of them turns OpenSSL's policy processing on (X509_V_FLAG_POLICY_CHECK);
  // without them certificate policies are not processed (pkits/: a choice, recorded).
  std::vector<std::string> policies;   // --policy OID: the initial policy set (empty: anyPolicy)
  bool explicit_policy = false;        // --explicit-policy: initial-explicit-policy
  bool inhibit_policy_mapping = false; // --inhibit-policy-mapping
  bool inhibit_any_policy = false;     // --inhibit-any-policy
  bool checks_policies() const {
    return !policies.empty() || explicit_policy || inhibit_policy_mapping || inhibit_any_policy;
  }
  int tls_max = 0;           // 0: highest; else TLS1_2_VERSION / TLS1_3_VERSION
  TransportKind transport = TransportKind::bio;
  long count = 1;            // attempts in total
  long parallel = 64;        // attempts in flight
  long requests = 1;         // HTTP/1.1 requests per connection (0: handshake only)
  long deadline_ms = 2000;   // per attempt, from lookup to the last response
  bool resume = false;
  long hold_ms = 0;
  uint32_t seed = 1;         // seeds the DNS query ids (and the CLI's body pattern)

  bool target_is_ip() const;
  // The address to dial when no lookup is needed ("" when the name must be resolved).
  std::string dial_literal() const;
};

}  // namespace tlsnb
