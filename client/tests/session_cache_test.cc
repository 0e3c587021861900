// The session cache without a handshake: sessions made by hand (LeakSanitizer sees any left).
#include "session_cache.h"

#include <gtest/gtest.h>

namespace {

// A session OpenSSL would offer: an id, and the version given.
SSL_SESSION* resumable(int version) {
  SSL_SESSION* s = SSL_SESSION_new();
  const unsigned char id[] = {1, 2, 3, 4};
  SSL_SESSION_set1_id(s, id, sizeof id);
  SSL_SESSION_set_protocol_version(s, version);
  return s;
}

}  // namespace

/* A session that cannot be resumed is freed at once, never held; an unknown key holds none */
TEST(SessionCache, UnresumableSessionsAreNotKept) {
  tlsnb::SessionCache cache(4);
  EXPECT_EQ(0u, cache.held("absent"));
  cache.store("k", SSL_SESSION_new());  // no id, no ticket
  EXPECT_EQ(0u, cache.held("k"));
  EXPECT_EQ(nullptr, cache.take("k"));
  cache.store("k", resumable(TLS1_2_VERSION));
  EXPECT_EQ(1u, cache.held("k"));
  EXPECT_EQ(0u, cache.held("absent"));
}

/* A TLS 1.2 session that died while held (its id gone) is dropped and freed when taken, not offered */
TEST(SessionCache, ADeadSessionIsDroppedWhenTaken) {
  tlsnb::SessionCache cache(4);
  SSL_SESSION* s = resumable(TLS1_2_VERSION);
  cache.store("k", s);
  SSL_SESSION_set1_id(s, nullptr, 0);  // as OpenSSL's SSL_CTX_remove_session leaves it: not resumable
  EXPECT_EQ(nullptr, cache.take("k"));
  EXPECT_EQ(0u, cache.held("k"));
}

/* TLS 1.3: single-use, newest first, at most per_key held; TLS 1.2: one, offered again and again */
TEST(SessionCache, TicketsAreTakenOutSessionsAreShared) {
  tlsnb::SessionCache cache(2);
  SSL_SESSION* a = resumable(TLS1_3_VERSION);
  SSL_SESSION* b = resumable(TLS1_3_VERSION);
  SSL_SESSION* c = resumable(TLS1_3_VERSION);
  cache.store("k", a);
  cache.store("k", b);
  cache.store("k", c);  // a, the oldest, is freed
  EXPECT_EQ(2u, cache.held("k"));
  SSL_SESSION* first = cache.take("k");
  EXPECT_EQ(c, first);
  EXPECT_EQ(1u, cache.held("k"));
  SSL_SESSION_free(first);
  SSL_SESSION* twelve = resumable(TLS1_2_VERSION);
  cache.store("t", twelve);
  SSL_SESSION* one = cache.take("t");
  SSL_SESSION* two = cache.take("t");
  EXPECT_EQ(twelve, one);
  EXPECT_EQ(twelve, two);
  EXPECT_EQ(1u, cache.held("t"));
  SSL_SESSION_free(one);
  SSL_SESSION_free(two);
}
