// The client certificate (--cert, --key): loaded into the SSL_CTX once, its key checked
// against it (a mismatch is the user's to fix: exit 2 before any connection), and sent only
// when a server asks and its request names the certificate's issuer or names no CA at all:
// a server that asks for another PKI's certificate learns nothing of ours (matrix rows client-*).
#pragma once

#include <openssl/ssl.h>

#include <string>

namespace tlsnb {

struct IdentityResult {
  std::string error;          // one line; "" when loaded
  bool config_error = false;  // the files are the user's to fix (exit 2)
};

IdentityResult load_client_identity(SSL_CTX* ctx, const std::string& cert, const std::string& key);

}  // namespace tlsnb
