#include "session_cache.h"

namespace tlsnb {

SessionCache::~SessionCache() {
  for (auto& entry : sessions_)
    for (SSL_SESSION* session : entry.second) SSL_SESSION_free(session);
}

std::string SessionCache::key(const std::string& name, unsigned port, const std::string& trust) {
  return name + '\0' + std::to_string(port) + '\0' + trust;
}

void SessionCache::store(const std::string& key, SSL_SESSION* session) {
  if (!SSL_SESSION_is_resumable(session)) {
    SSL_SESSION_free(session);
    return;
  }
  std::deque<SSL_SESSION*>& held = sessions_[key];
  bool single_use = SSL_SESSION_get_protocol_version(session) >= TLS1_3_VERSION;
  size_t limit = single_use ? per_key_ : 1;
  held.push_back(session);
  while (held.size() > limit) {  // the newest replaces the oldest
    SSL_SESSION_free(held.front());
    held.pop_front();
  }
}

SSL_SESSION* SessionCache::take(const std::string& key) {
  auto it = sessions_.find(key);
  if (it == sessions_.end()) return nullptr;
  // gaps/free_without_shutdown: a shared TLS 1.2 session dies when any user of it is freed
  // without close_notify; a dead one is dropped, not offered.
  while (!it->second.empty() && !SSL_SESSION_is_resumable(it->second.back())) {
    SSL_SESSION_free(it->second.back());
    it->second.pop_back();
  }
  if (it->second.empty()) return nullptr;
  SSL_SESSION* session = it->second.back();
  if (SSL_SESSION_get_protocol_version(session) >= TLS1_3_VERSION) {
    it->second.pop_back();  // single-use: never offered twice
    return session;
  }
  SSL_SESSION_up_ref(session);
  return session;
}

size_t SessionCache::held(const std::string& key) const {
  auto it = sessions_.find(key);
  return it == sessions_.end() ? 0 : it->second.size();
}

}  // namespace tlsnb
