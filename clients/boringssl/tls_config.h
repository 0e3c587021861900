// What every attempt of a run shares on the BoringSSL side: one SSL_CTX (TLS 1.2 minimum, the
// highest as asked, SSL_VERIFY_PEER set explicitly, the trust anchors, the CRLs, the client's
// certificate and key, the new-session callback for --resume) and, for --transport bio, the
// program's own BIO_METHOD.
#pragma once

#include <openssl/bio.h>
#include <openssl/is_boringssl.h>  // BoringSSL's alone: OpenSSL 3's headers cannot be the ones found
#include <openssl/ssl.h>

#include <memory>
#include <string>

#include "clients/contract/made.h"
#include "options.h"

#ifndef OPENSSL_IS_BORINGSSL
#error "openssl/ssl.h is not BoringSSL's: /usr/include/android must come first"
#endif

namespace tlsboring {

// The bio transport's state, one an attempt: its socket, the errno of the first failed call (a
// later one, an alert written after a reset, must not overwrite the reset) and whether recv saw
// the end of the stream.
struct SocketIo {
  int fd = -1;
  int last_errno = 0;
  bool eof = false;
};

// Where BoringSSL's new-session callback leaves an attempt's latest resumable session,
// serialized (SSL_get_ex_data(ssl, session_sink_index())).
struct SessionSink {
  std::string bytes;
};
int session_sink_index();

class TlsConfig {
 public:
  SSL_CTX* ctx() const { return ctx_.get(); }
  // A BIO over `io` with the program's send/recv, or null (out of memory); --transport bio.
  BIO* socket_bio(SocketIo* io) const;

 private:
  friend contract::Made<TlsConfig> make_config(const Options& o);
  struct CtxFree {
    void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
  };
  struct MethodFree {
    void operator()(BIO_METHOD* m) const { BIO_meth_free(m); }
  };
  std::unique_ptr<SSL_CTX, CtxFree> ctx_;
  std::unique_ptr<BIO_METHOD, MethodFree> method_;
};

using ConfigResult = contract::Made<TlsConfig>;  // the config, or the one line and whose it is to fix

ConfigResult make_config(const Options& o);

// "BoringSSL": what the library says of itself (OpenSSL_version).
std::string library_version();
// ERR_error_string_n's words for a packed code.
std::string boring_text(unsigned long code);

}  // namespace tlsboring
