#include "options.h"

namespace tlsnss {

contract::ParseResult parse_options(const std::vector<std::string>& args) {
  static const contract::Lacks lacks = contract::without_resolver(
      {{"--verify-depth", true, "not offered: --verify-depth: NSS's certificate verifier has no chain length setting"},
       {"--ocsp-staple", true, "not built: --ocsp-staple: NSS's SSL_AuthCertificate ignores staples; checking one "
                               "needs CERT_CacheOCSPResponseFromSideChannel and OCSP checking on, which may fetch "
                               "from a responder: not written in this adapter"}},
      "not offered: --transport fd: this client has one transport, NSPR's own socket I/O on the program's "
      "socket (PR_ImportTCPSocket), the default");
  return contract::parse_options(args, lacks);
}

const char* usage() {
  return R"(usage: tlsnb-nss [options] TARGET:PORT

A non-blocking TLS client on NSS 3.87 / NSPR 4.35: one thread, its own epoll, one state machine per
attempt (SSL_ImportFD over PR_ImportTCPSocket of the program's non-blocking socket, SSL_ForceHandshake /
PR_Write / PR_Read and PR_WOULD_BLOCK_ERROR, the SSL layer's poll saying which readiness to wait for).
TARGET is an IPv4 literal or a name (a name needs --connect). The contract's flags (clients/README.md)
and these notes:

  --name NAME           SSL_SetURL (the SNI, and the name SSL_AuthCertificate checks with
                        CERT_VerifyCertName; an IP literal is matched against IP SANs, no SNI)
  --no-verify-name      SSL_SetURL for the SNI and an auth hook that runs CERT_VerifyCert alone
  --cafile PATH         NSS_NoDB_Init, the PEM certificates made temporary certificates trusted as
                        SSL CAs (CERT_ChangeCertTrust "C,,"); without it the system's roots
  --system-trust        also the system's: the builtin roots module libnssckbi.so (SECMOD_LoadUserModule)
  --partial-chain       accepted: NSS ends a chain at any certificate trusted as a CA ("C,,"), root or not
  --crl FILE            CERT_CacheCRL (repeatable), and the chain verified by CERT_PKIXVerifyCert with
                        the CRL method required for the leaf (no fetching): no usable CRL, refused
  --crl-all             the same required for every certificate of the chain
  --pin-sha256 PIN      after NSS's verification, some certificate of the chain it built
                        (CERT_GetCertChainFromCert) must have this SPKI SHA-256 (repeatable)
  --resume              offer a session saved by an earlier attempt (SSL_SetResumptionTokenCallback /
                        SSL_SetResumptionToken); without it, SSL_NO_CACHE: no session is ever resumed
  --cert FILE, --key FILE  the client's certificate (PEM, the leaf first) and PKCS#8 key, temporary
                        objects handed over by SSL_GetClientAuthDataHook (unless the server names CAs
                        and none issued it: NSS_CmpCertChainWCANames)

Not available (exit 89): --transport fd, --verify-depth, --ocsp-staple, --ns and the resolver's flags.
Exit: 0 every attempt ok, 1 any failed, 2 bad usage or unusable configuration, 89 not offered.
)";
}

}  // namespace tlsnss
