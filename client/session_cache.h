// Saved TLS sessions keyed by (name, port, trust configuration). A session is never
// offered for another name (gaps/resumed_skips_verify). TLS 1.3 tickets are single-use
// (gaps/tls13_single_use): each is taken out when offered, newest first, and up to
// `per_key` of them are kept so attempts in flight together can each resume; past that
// the newest replaces the oldest. A TLS 1.2 session is reusable: the newest replaces it.
#pragma once

#include <openssl/ssl.h>

#include <deque>
#include <map>
#include <string>

namespace tlsnb {

class SessionCache {
 public:
  explicit SessionCache(size_t per_key = 64) : per_key_(per_key == 0 ? 1 : per_key) {}
  SessionCache(const SessionCache&) = delete;
  SessionCache& operator=(const SessionCache&) = delete;
  ~SessionCache();

  static std::string key(const std::string& name, unsigned port, const std::string& trust);

  // Takes ownership of `session` (a reference from OpenSSL's new-session callback).
  void store(const std::string& key, SSL_SESSION* session);
  // A session to offer for `key`, or null. The caller owns the returned reference.
  SSL_SESSION* take(const std::string& key);
  size_t held(const std::string& key) const;

 private:
  size_t per_key_;
  std::map<std::string, std::deque<SSL_SESSION*>> sessions_;  // oldest at the front
};

}  // namespace tlsnb
