#include "options.h"

#include <string>

#include "clients/contract/core_help.h"

namespace tlsgnu {

contract::ParseResult parse_options(const std::vector<std::string>& args) {
  static const contract::Lacks lacks = contract::without_resolver(
      {{"--verify-depth", true, "not offered: --verify-depth: GnuTLS's gnutls_certificate_set_verify_limits counts "
                                "the certificates the peer sent, not OpenSSL's chain depth; not offered"},
       {"--crl-all", false, "not offered: --crl-all: GnuTLS checks every CRL it holds against every certificate "
                            "of the chain but has no mode that requires one (a missing CRL is no error)"},
       {"--pin-sha256", true, "not built: --pin-sha256: GnuTLS has no pin option (its stored-key check is trust on first use); a pin check over the peer's chain is not written here"}},
      nullptr);  // --transport fd is offered: GnuTLS's own socket I/O
  return contract::parse_options(args, lacks);
}

const char* usage() {
  static const std::string text = R"(usage: tlsnb-gnutls [options] TARGET:PORT

A non-blocking TLS client on GnuTLS 3.7: one thread, its own epoll, one state machine per
attempt. TARGET is an IPv4 literal or a name (a name needs --connect).

  --name NAME           name the certificate must carry; SNI (default TARGET; no SNI for an IP)
  --connect IP          dial this IPv4 address; TARGET is then only the name
  --cafile PATH         trust anchors (PEM); without it the system store is used
  --system-trust        also load the system store
  --no-verify           do not verify the peer (controls only)
  --no-verify-name      gnutls_session_set_verify_cert2 with the purpose and no name or IP: the chain
                        verified, no name matched (SNI still sent for a name)
  --partial-chain       accepted: GnuTLS always accepts a chain ending at any trusted certificate
  --tls-max 1.2|1.3     highest protocol version offered (the lowest is always TLS 1.2)
  --transport bio|fd    bio: the program's push/pull callbacks (sendmsg MSG_NOSIGNAL, recv; default)
                        fd: GnuTLS's own socket I/O (gnutls_transport_set_int)
  --sigpipe default|ignore
                        SIGPIPE disposition (default: left as inherited)
)" + std::string(contract::core_help) + R"(  --deadline-ms MS      per attempt, from its start to its last response (default 2000)
  --resume              offer a session saved by an earlier attempt of this run
  --hold-ms MS          hold each connection open this long after the handshake
  --crl FILE            CRLs (PEM; repeatable): gnutls_certificate_set_x509_crl_file; GnuTLS checks
                        them against every certificate of the chain and accepts one it has no CRL for
  --ocsp-staple off|check|require
                        off and check: GnuTLS's default, which asks for a staple and judges one that
                        comes (gnutls_certificate_verify_peers); require: also fail when none came
                        (handshake/73, X509_V_ERR_OCSP_VERIFY_NEEDED)
  --cert FILE --key FILE
                        a client certificate (chain, PEM) and its key: gnutls_certificate_set_x509_key_file;
                        GnuTLS sends it when its issuer is among the CA names the server asks for
  --json                one JSON object per attempt, then one summary object
  --help                this text

Not offered (exit 89): --verify-depth, --crl-all, --pin-sha256, --ns and the resolver's flags.
Outcomes (stage/detail): ok/0; connect/errno; handshake/X509_V_ERR_* number or OpenSSL's packed
SSL_R_* code (see profile.toml [error_map]), -1 peer closed without an alert; write/errno;
read/errno or code, -1 closed without close_notify, -2 chunked, -3 malformed, 0 close_notify
early; setup/what; deadline/stage interrupted.
Exit: 0 every attempt ok, 1 any failed, 2 bad usage or unusable configuration, 89 not offered.
)";
  return text.c_str();
}

}  // namespace tlsgnu
