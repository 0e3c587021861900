// One SSL_CTX per process: protocol bounds, modes, verification and the trust store, loaded once.
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>

#include "openssl_ptr.h"
#include "run_config.h"
#include "session_cache.h"

namespace tlsnb {

struct ContextResult {
  SslCtxPtr ctx;
  std::string error;     // one line, when ctx is null
  bool config_error = false;  // the user's configuration is unusable (exit 2), not a resource failure
};

// Builds the context; sessions from new tickets are handed to `cache` (may be null: no resumption).
ContextResult make_context(const RunConfig& config, SessionCache* cache);

// Per-connection verification record, filled by the verify callback (first failure wins).
struct VerifyRecord {
  int error = 0;
  int depth = -1;
};
int verify_record_index();  // SSL ex_data slot holding a VerifyRecord*
// Records a verification failure the library did not report (a pin, a staple), first one wins.
void record_verify_error(SSL* ssl, int error, int depth);
int session_key_index();    // SSL ex_data slot holding the attempt's cache key (std::string*)

// An identity for the trust configuration: part of every session cache key.
std::string trust_fingerprint(const RunConfig& config);

}  // namespace tlsnb
