#include "options.h"

namespace tlsmbed {

contract::ParseResult parse_options(const std::vector<std::string>& args) {
  static const contract::Lacks lacks = contract::without_resolver(
      {{"--verify-depth", true, "not offered: --verify-depth: Mbed TLS fixes the chain's length when it is built "
                                "(MBEDTLS_X509_MAX_INTERMEDIATE_CA); there is no run-time setting"},
       {"--crl-all", false, "not offered: --crl-all: Mbed TLS checks the CRLs it is given against every certificate "
                            "of the chain but has no mode that requires one (a missing CRL is no error)"},
       {"--ocsp-staple", true, "not offered: --ocsp-staple: Mbed TLS 2.28 has no OCSP (neither the status_request "
                               "extension nor a response parser)"},
       {"--pin-sha256", true, "not built: --pin-sha256: Mbed TLS has no pin option; a check in its verify callback "
                              "is not written in this adapter"}},
      nullptr);  // --transport fd is offered: Mbed TLS's own mbedtls_net_send / mbedtls_net_recv
  contract::ParseResult parsed = contract::parse_options(args, lacks);
  if (parsed.options && parsed.options->tls_max == 13) {
    contract::ParseResult lacking;
    lacking.exit_code = contract::exit_lacking;
    lacking.error = "--tls-max 1.3: Mbed TLS 2.28 has no TLS 1.3 (MBEDTLS_SSL_PROTO_TLS1_3 is 3.x); give --tls-max 1.2";
    return lacking;
  }
  return parsed;
}

const char* usage() {
  return R"(usage: tlsnb-mbedtls --tls-max 1.2 [options] TARGET:PORT

A non-blocking TLS 1.2 client on Mbed TLS 2.28: one thread, its own epoll, one state machine per
attempt (mbedtls_ssl_handshake / _read / _write and MBEDTLS_ERR_SSL_WANT_READ / _WANT_WRITE).
TARGET is an IPv4 literal or a name (a name needs --connect). The contract's flags (clients/README.md)
and these notes:

  --tls-max 1.2         required: Mbed TLS 2.28 has no TLS 1.3 (1.3, the contract's default: exit 89;
                        the lab's profile.toml starts it with --tls-max 1.2, so a row that asks
                        nothing runs at 1.2 and a row that asks for 1.3 is a skip)
  --name NAME           mbedtls_ssl_set_hostname: the SNI and the name checked (an IP literal too:
                        Mbed TLS 2.28 matches it against DNS names and the CN, never an IP SAN)
  --no-verify-name      the SNI still set (mbedtls_ssl_set_hostname), the leaf's name mismatch
                        (BADCERT_CN_MISMATCH) cleared by the verify callback: the chain verified
  --cafile PATH         mbedtls_x509_crt_parse_file; without it Debian's bundle
                        /etc/ssl/certs/ca-certificates.crt (Mbed TLS has no system store)
  --system-trust        also that bundle
  --partial-chain       accepted: a certificate found in the trust list ends the chain
  --crl FILE            mbedtls_x509_crl_parse_file (repeatable): checked for every certificate
                        of the chain whose issuer's CRL is given; a missing one is no error
  --cert FILE --key FILE
                        mbedtls_ssl_conf_own_cert, the pair checked (mbedtls_pk_check_pair)
  --transport bio|fd    bio: the program's send(MSG_NOSIGNAL)/recv callbacks (default);
                        fd: Mbed TLS's own mbedtls_net_send / mbedtls_net_recv (write/read)
  --resume              offer a session (mbedtls_ssl_session_save / _load, tickets included)

Not offered (exit 89): --tls-max 1.3, --verify-depth, --crl-all, --ocsp-staple, --pin-sha256, --ns
and the resolver's flags.
Exit: 0 every attempt ok, 1 any failed, 2 bad usage or unusable configuration, 89 not offered.
)";
}

}  // namespace tlsmbed
