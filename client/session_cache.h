// Saved TLS sessions keyed by (name, port, trust configuration). A session is never
// offered for another name (gaps/resumed_skips_verify), the newest ticket replaces the
// old, and a TLS 1.3 session is taken out when offered: it is single-use (gaps/tls13_single_use).
#pragma once

#include <openssl/ssl.h>

#include <map>
#include <string>

namespace tlsnb {

class SessionCache {
 public:
  SessionCache() = default;
  SessionCache(const SessionCache&) = delete;
  SessionCache& operator=(const SessionCache&) = delete;
  ~SessionCache();

  static std::string key(const std::string& name, unsigned port, const std::string& trust);

  // Takes ownership of `session` (a reference from OpenSSL's new-session callback).
  void store(const std::string& key, SSL_SESSION* session);
  // A session to offer for `key`, or null. The caller owns the returned reference.
  SSL_SESSION* take(const std::string& key);
  size_t size() const { return sessions_.size(); }
  long stored() const { return stored_; }

 private:
  std::map<std::string, SSL_SESSION*> sessions_;
  long stored_ = 0;
};

}  // namespace tlsnb
