// Owners for OpenSSL objects: every SSL_CTX, SSL and BIO the client makes is freed by one.
#pragma once

#include <openssl/bio.h>
#include <openssl/ssl.h>

#include <memory>

namespace tlsnb {

struct OpensslFree {
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
  void operator()(SSL* ssl) const { SSL_free(ssl); }
  void operator()(BIO* bio) const { BIO_free(bio); }
};

using SslCtxPtr = std::unique_ptr<SSL_CTX, OpensslFree>;
using SslPtr = std::unique_ptr<SSL, OpensslFree>;
using BioPtr = std::unique_ptr<BIO, OpensslFree>;

}  // namespace tlsnb
