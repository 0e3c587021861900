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

// wolfSSL_Init / wolfSSL_Cleanup, paired.
class WolfGlobal {
 public:
  WolfGlobal() : result_(wolfSSL_Init()) {}
  ~WolfGlobal() {
    if (ok()) wolfSSL_Cleanup();
  }
  WolfGlobal(const WolfGlobal&) = delete;
  WolfGlobal& operator=(const WolfGlobal&) = delete;
  bool ok() const { return result_ == WOLFSSL_SUCCESS; }

 private:
  int result_;
};

// The bio transport's I/O context, one an attempt: its socket and the errno of the first failed
// call (a later one, an alert written after a reset, must not overwrite the reset).
struct SocketIo {
  int fd = -1;
  int last_errno = 0;
};

class TlsConfig {
 public:
  TlsConfig() = default;
  ~TlsConfig();
  TlsConfig(const TlsConfig&) = delete;
  TlsConfig& operator=(const TlsConfig&) = delete;
  WOLFSSL_CTX* ctx() const { return ctx_; }

 private:
  friend contract::Made<TlsConfig> make_config(const Options& o);
  WOLFSSL_CTX* ctx_ = nullptr;
};

using ConfigResult = contract::Made<TlsConfig>;  // the config, or the one line and whose it is to fix

ConfigResult make_config(const Options& o);

// "wolfSSL 5.5.4"
std::string library_version();
// wolfSSL_ERR_error_string_n's words for a code.
std::string wolf_text(int code);

}  // namespace tlswolf
