#include "options.h"

namespace tlswolf {

contract::ParseResult parse_options(const std::vector<std::string>& args) {
  static const contract::Lacks lacks = contract::without_resolver(
      {{"--verify-depth", true, "not built: --verify-depth: wolfSSL has wolfSSL_CTX_set_verify_depth; this adapter "
                                "does not set it"},
       {"--pin-sha256", true, "not built: --pin-sha256: wolfSSL has no pin option; a check in its verify callback "
                              "is not written in this adapter"}},
      nullptr);  // --transport fd is offered: wolfSSL's own socket I/O (wolfSSL_set_fd)
  return contract::parse_options(args, lacks);
}

const char* usage() {
  return R"(usage: tlsnb-wolfssl [options] TARGET:PORT

A non-blocking TLS client on wolfSSL 5.5: one thread, its own epoll, one state machine per attempt
(wolfSSL_connect / _write / _read and WOLFSSL_ERROR_WANT_READ / _WANT_WRITE). TARGET is an IPv4
literal or a name (a name needs --connect). The contract's flags (clients/README.md) and these notes:

  --name NAME           wolfSSL_UseSNI and wolfSSL_check_domain_name (an IP literal: no SNI, and
                        X509_VERIFY_PARAM_set1_ip_asc)
  --no-verify-name      wolfSSL_UseSNI alone: no domain name or IP to check, the chain still verified
  --cafile PATH         wolfSSL_CTX_load_verify_locations; without it wolfSSL_CTX_load_system_CA_certs
  --system-trust        also the system's (wolfSSL_CTX_load_system_CA_certs)
  --partial-chain       accepted: wolfSSL takes any certificate of its trust store as an anchor
  --crl FILE            wolfSSL_CTX_LoadCRLFile (repeatable) with wolfSSL_CTX_EnableCRL: the leaf's
                        issuer must have one (a missing CRL fails the chain)
  --crl-all             WOLFSSL_CRL_CHECKALL: every certificate of the chain
  --ocsp-staple off|check|require
                        check: wolfSSL_UseOCSPStapling (status_request) and the staple verified;
                        require: also wolfSSL_CTX_EnableOCSPMustStaple. No OCSP lookup is ever made
  --cert FILE --key FILE
                        wolfSSL_CTX_use_certificate_chain_file and _use_PrivateKey_file, checked
  --transport bio|fd    bio: the program's send(MSG_NOSIGNAL)/recv callbacks (default);
                        fd: wolfSSL's own socket I/O (wolfSSL_set_fd)
  --resume              offer a session saved by an earlier attempt (i2d/d2i_SSL_SESSION)

Not available (exit 89): --verify-depth, --pin-sha256, --ns and the resolver's flags.
Exit: 0 every attempt ok, 1 any failed, 2 bad usage or unusable configuration, 89 not offered.
)";
}

}  // namespace tlswolf
