#include "options.h"

namespace tlsbear {

contract::ParseResult parse_options(const std::vector<std::string>& args) {
  static const contract::Lacks lacks = contract::without_resolver(
      {{"--verify-depth", true, "not offered: --verify-depth: BearSSL's X.509 minimal engine has no chain-length setting"},
       {"--crl", true, "not offered: --crl: BearSSL has no revocation of any kind (no CRL parser, the minimal engine "
                       "checks none)"},
       {"--crl-all", false, "not offered: --crl-all: BearSSL has no revocation of any kind"},
       {"--ocsp-staple", true, "not offered: --ocsp-staple: BearSSL 0.6 has no OCSP (neither the status_request "
                               "extension nor a response parser)"}},
      "not offered: --transport fd: BearSSL's engine does no socket I/O of its own (the caller moves every "
      "record: br_ssl_engine_sendrec_buf / recvrec_buf); bio is the only transport");
  contract::ParseResult parsed = contract::parse_options(args, lacks);
  if (parsed.options && parsed.options->tls_max == 13) {
    contract::ParseResult lacking;
    lacking.exit_code = contract::exit_lacking;
    lacking.error = "--tls-max 1.3: BearSSL 0.6 has no TLS 1.3 (its highest version is BR_TLS12); give --tls-max 1.2";
    return lacking;
  }
  return parsed;
}

const char* usage() {
  return R"(usage: tlsnb-bearssl --tls-max 1.2 [options] TARGET:PORT

A non-blocking TLS 1.2 client on BearSSL 0.6: one thread, its own epoll, one state machine per
attempt over BearSSL's pure engine (br_ssl_engine_current_state; the records moved by this program
through sendrec_buf / recvrec_buf, the application data through sendapp_buf / recvapp_buf).
TARGET is an IPv4 literal or a name (a name needs --connect). The contract's flags (clients/README.md)
and these notes:

  --tls-max 1.2         required: BearSSL 0.6 has no TLS 1.3 (1.3, the contract's default: exit 89;
                        the lab's profile.toml starts it with --tls-max 1.2)
  --name NAME           br_ssl_client_reset(cc, NAME, ...): the SNI and the name the minimal X.509
                        engine matches (dNSName SANs, the CN without SANs; an IP literal too: BearSSL
                        has no IP SAN matching)
  --no-verify-name      the SNI still sent; the X.509 engine is started with no name (this adapter's
                        wrapper passes NULL to br_x509_minimal's start_chain): the chain verified
  --no-verify           a wrapper that takes the leaf's key (br_x509_decoder) and checks nothing
  --cafile PATH         trust anchors decoded by br_pem_decoder + br_x509_decoder (as BearSSL's
                        tools do); without it Debian's bundle /etc/ssl/certs/ca-certificates.crt
                        (BearSSL has no system store)
  --system-trust        also that bundle
  --partial-chain       accepted: a CA anchor ends the chain wherever it is met
  --cert FILE --key FILE
                        the chain and key decoded by br_pem_decoder, br_x509_decoder and br_skey_decoder
                        (RSA or EC, the pair checked), br_ssl_client_set_single_rsa / _ec
  --pin-sha256 BASE64   (repeatable) once the chain verified, a certificate the peer sent or an anchor
                        that issued one must carry a pinned SubjectPublicKeyInfo (RFC 7469): this
                        adapter's check in its X.509 wrapper (BearSSL has no pin option)
  --resume              offer the session parameters of an earlier attempt
                        (br_ssl_engine_get/set_session_parameters: session IDs, BearSSL has no tickets)

Not offered (exit 89): --tls-max 1.3, --transport fd, --verify-depth, --crl, --crl-all,
--ocsp-staple, --ns and the resolver's flags.
Exit: 0 every attempt ok, 1 any failed, 2 bad usage or unusable configuration, 89 not offered.
)";
}

}  // namespace tlsbear
