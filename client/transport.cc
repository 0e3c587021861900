#include "transport.h"

#include <sys/epoll.h>
#include <sys/socket.h>

#include <cerrno>

#include "openssl_ptr.h"

namespace tlsnb {

namespace {

// Memory BIOs: OpenSSL never touches the socket; send() carries MSG_NOSIGNAL.
class MemoryTransport final : public Transport {
 public:
  bool attach(SSL* ssl, int fd) override {
    BioPtr rbio(BIO_new(BIO_s_mem()));
    BioPtr wbio(BIO_new(BIO_s_mem()));
    if (!rbio || !wbio) return false;  // the one that was made is freed here
    BIO_set_mem_eof_return(rbio.get(), -1);  // empty means "wait", until the socket says EOF
    SSL_set_bio(ssl, rbio.get(), wbio.get());
    rbio_ = rbio.release();
    wbio_ = wbio.release();
    fd_ = fd;
    return true;
  }

  Io flush() override {
    for (;;) {
      if (out_off_ == out_.size()) {
        out_.clear();
        out_off_ = 0;
        size_t queued = BIO_ctrl_pending(wbio_);
        if (queued == 0) return Io{Io::progress, 0};
        out_.resize(queued);
        int n = BIO_read(wbio_, out_.data(), static_cast<int>(queued));
        out_.resize(n > 0 ? static_cast<size_t>(n) : 0);
        if (out_.empty()) return Io{Io::progress, 0};
      }
      ssize_t n = send(fd_, out_.data() + out_off_, out_.size() - out_off_, MSG_NOSIGNAL);
      if (n > 0) {
        out_off_ += static_cast<size_t>(n);  // a partial send keeps the rest for the next writable
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Io{Io::blocked, 0};
      return Io{Io::error, n < 0 ? errno : EPIPE};
    }
  }

  Io fill() override {
    if (eof_) return Io{Io::eof, 0};
    uint8_t buf[16384];
    for (;;) {
      ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n > 0) {
        if (BIO_write(rbio_, buf, static_cast<int>(n)) != n) return Io{Io::error, ENOMEM};
        return Io{Io::progress, 0};
      }
      if (n == 0) {
        eof_ = true;
        BIO_set_mem_eof_return(rbio_, 0);  // now an empty BIO is the end of the stream
        return Io{Io::progress, 0};
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Io{Io::blocked, 0};
      return Io{Io::error, errno};
    }
  }

  bool pending_output() const override { return out_off_ < out_.size() || BIO_ctrl_pending(wbio_) > 0; }

  // Readable is asked for unless the attempt waits only to send: a peer that answers before the
  // request is all sent (tls_server.py early-response) leaves the socket readable, and a readable
  // socket nobody reads wakes a level-triggered epoll at once, every turn (a busy loop until the deadline).
  uint32_t interest(int want) const override {
    bool out = pending_output();
    bool in = !eof_ && (want != SSL_ERROR_WANT_WRITE || !out);
    return (in ? uint32_t{EPOLLIN} : 0u) | (out ? uint32_t{EPOLLOUT} : 0u);
  }

 private:
  BIO* rbio_ = nullptr;  // owned by the SSL
  BIO* wbio_ = nullptr;
  int fd_ = -1;
  bool eof_ = false;
  std::vector<uint8_t> out_;
  size_t out_off_ = 0;
};

// OpenSSL's socket BIO: it reads and writes the descriptor itself.
class DescriptorTransport final : public Transport {
 public:
  bool attach(SSL* ssl, int fd) override { return SSL_set_fd(ssl, fd) == 1; }
  Io flush() override { return Io{Io::progress, 0}; }
  Io fill() override { return Io{Io::blocked, 0}; }
  bool pending_output() const override { return false; }
  uint32_t interest(int want) const override { return want == SSL_ERROR_WANT_WRITE ? EPOLLOUT : EPOLLIN; }
};

}  // namespace

std::unique_ptr<Transport> make_transport(TransportKind kind) {
  if (kind == TransportKind::fd) return std::make_unique<DescriptorTransport>();
  return std::make_unique<MemoryTransport>();
}

}  // namespace tlsnb
