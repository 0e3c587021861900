// What every attempt of a run shares on the wolfSSL side: wolfSSL_Init/Cleanup paired, one
// WOLFSSL_CTX (TLS 1.2 minimum, WOLFSSL_VERIFY_PEER set explicitly, the trust anchors, the CRLs,
// OCSP stapling, the client's certificate and key; the program's I/O callbacks for --transport bio).
#pragma once

#include <wolfssl/options.h>
#include <wolfssl/ssl.h>

#include <memory>
#include <string>

#include "clients/contract/made.h"
#include "options.h"

namespace tlswolf {

// wolfSSL_Init ("" when it worked, else the line) and wolfSSL_Cleanup: paired by
// contract::adapter_main.
std::string init_library();
void cleanup_library();

// The bio transport's I/O context, one an attempt: its socket and the errno of the first failed
// call (a later one, an alert written after a reset, must not overwrite the reset).
struct SocketIo {
  int fd = -1;
  int last_errno = 0;
};

class TlsConfig {
 public:
  WOLFSSL_CTX* ctx() const { return ctx_.get(); }

 private:
  friend contract::Made<TlsConfig> make_config(const Options& o);
  struct CtxFree {
    void operator()(WOLFSSL_CTX* ctx) const { wolfSSL_CTX_free(ctx); }
  };
  std::unique_ptr<WOLFSSL_CTX, CtxFree> ctx_;
};

using ConfigResult = contract::Made<TlsConfig>;  // the config, or the one line and whose it is to fix

ConfigResult make_config(const Options& o);

// "wolfSSL 5.5.4"
std::string library_version();
// wolfSSL_ERR_error_string_n's words for a code.
std::string wolf_text(int code);

}  // namespace tlswolf
