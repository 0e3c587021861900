#include "session_cache.h"

namespace tlsnb {

SessionCache::~SessionCache() {
  for (auto& entry : sessions_) SSL_SESSION_free(entry.second);
}

std::string SessionCache::key(const std::string& name, unsigned port, const std::string& trust) {
  return name + '\0' + std::to_string(port) + '\0' + trust;
}

void SessionCache::store(const std::string& key, SSL_SESSION* session) {
  if (!SSL_SESSION_is_resumable(session)) {
    SSL_SESSION_free(session);
    return;
  }
  auto [it, inserted] = sessions_.emplace(key, session);
  if (!inserted) {  // the newest ticket replaces the old
    SSL_SESSION_free(it->second);
    it->second = session;
  }
  ++stored_;
}

SSL_SESSION* SessionCache::take(const std::string& key) {
  auto it = sessions_.find(key);
  if (it == sessions_.end()) return nullptr;
  SSL_SESSION* session = it->second;
  if (SSL_SESSION_get_protocol_version(session) >= TLS1_3_VERSION) {
    sessions_.erase(it);  // single-use: the server will send a fresh ticket
    return session;
  }
  SSL_SESSION_up_ref(session);
  return session;
}

}  // namespace tlsnb
