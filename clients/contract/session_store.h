// --resume: sessions saved by finished attempts (the library's serialized form: GnuTLS's
// gnutls_session_get_data2, mbedTLS's mbedtls_ssl_session_save), offered to later ones. One run
// has one name, port and trust configuration, so one pool; each saved session is offered once
// (a TLS 1.3 ticket is meant for one use).
#pragma once

#include <cstddef>
#include <deque>
#include <string>

namespace contract {

class SessionStore {
 public:
  explicit SessionStore(size_t capacity) : capacity_(capacity) {}
  void store(std::string data);
  // Moves a saved session into *data; false when there is none.
  bool take(std::string* data);
  size_t size() const { return pool_.size(); }

 private:
  size_t capacity_;
  std::deque<std::string> pool_;
};

}  // namespace contract
