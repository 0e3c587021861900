#include "options.h"

namespace tlsboring {

contract::ParseResult parse_options(const std::vector<std::string>& args) {
  static const contract::Lacks lacks = contract::without_resolver(
      {{"--verify-depth", true, "not built: --verify-depth: BoringSSL has SSL_CTX_set_verify_depth; the contract's "
                                "parser this adapter uses does not carry the flag"},
       {"--pin-sha256", true, "not built: --pin-sha256: BoringSSL has no pin option; a check of the leaf's key "
                              "after verification is not written in this adapter"}},
      nullptr);  // --transport fd is offered: BoringSSL's own socket BIO (SSL_set_fd)
  return contract::parse_options(args, lacks);
}

const char* usage() {
  return R"(usage: tlsnb-boringssl [options] TARGET:PORT

A non-blocking TLS client on BoringSSL (Debian's android-libboringssl, 2022): one thread, its own epoll,
one state machine per attempt (SSL_do_handshake / SSL_write / SSL_read and SSL_ERROR_WANT_READ /
_WANT_WRITE). TARGET is an IPv4 literal or a name (a name needs --connect). The contract's flags
(clients/README.md) and these notes:

  --name NAME           SSL_set_tlsext_host_name and X509_VERIFY_PARAM_set1_host (an IP literal: no
                        SNI, and X509_VERIFY_PARAM_set1_ip_asc); BoringSSL's host flags as they are
  --no-verify-name      the SNI alone: no name or IP to check, the chain still verified
  --cafile PATH         SSL_CTX_load_verify_locations; without it SSL_CTX_set_default_verify_paths
  --system-trust        also the system's (SSL_CTX_set_default_verify_paths)
  --partial-chain       X509_V_FLAG_PARTIAL_CHAIN
  --crl FILE            the CRLs of each file (PEM) added to the X509_STORE, X509_V_FLAG_CRL_CHECK:
                        the leaf's issuer must have one (repeatable)
  --crl-all             X509_V_FLAG_CRL_CHECK_ALL: every certificate of the chain
  --ocsp-staple off     only off: BoringSSL hands the raw staple and verifies none (check, require: 89)
  --cert FILE --key FILE
                        SSL_CTX_use_certificate_chain_file and _use_PrivateKey_file, checked
  --transport bio|fd    bio: a BIO_METHOD of the program's own, send(MSG_NOSIGNAL)/recv (default);
                        fd: BoringSSL's socket BIO (SSL_set_fd)
  --resume              offer a session saved by an earlier attempt (SSL_SESSION_to_bytes /
                        SSL_SESSION_from_bytes, the sessions BoringSSL hands its new-session callback)

Not available (exit 89): --verify-depth, --pin-sha256, --ocsp-staple check|require, --ns and the
resolver's flags.
Exit: 0 every attempt ok, 1 any failed, 2 bad usage or unusable configuration, 89 not offered.
)";
}

}  // namespace tlsboring
