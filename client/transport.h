// How ciphertext moves between an SSL and its socket: memory BIOs that the client
// drains with send(MSG_NOSIGNAL) and fills with recv, or OpenSSL's socket BIO on the
// descriptor (which writes with write(2): gaps/socket_bio_sigpipe).
#pragma once

#include <openssl/ssl.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "run_config.h"

namespace tlsnb {

struct Io {
  enum Kind { progress, blocked, eof, error };
  Kind kind = progress;
  int err = 0;  // errno, with error
};

class Transport {
 public:
  virtual ~Transport() = default;
  // Connects `ssl` to `fd`. False when a BIO could not be made (nothing is leaked).
  virtual bool attach(SSL* ssl, int fd) = 0;
  // Moves what OpenSSL queued toward the kernel, as far as it takes it.
  virtual Io flush() = 0;
  // Brings what the socket holds to OpenSSL (progress, blocked, eof or error).
  virtual Io fill() = 0;
  // Ciphertext still waiting for the kernel.
  virtual bool pending_output() const = 0;
  // Epoll events to wait for, given the SSL's last SSL_ERROR_WANT_* (0 for none).
  virtual uint32_t interest(int want) const = 0;
};

std::unique_ptr<Transport> make_transport(TransportKind kind);

}  // namespace tlsnb
