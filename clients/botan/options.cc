#include "options.h"

namespace tlsbotan {

contract::ParseResult parse_options(const std::vector<std::string>& args) {
  static const contract::Lacks lacks = contract::without_resolver(
      {{"--verify-depth", true, "not offered: --verify-depth: Botan 2's x509_path_validate has no limit on the "
                                "chain's length to set (Path_Validation_Restrictions has none)"},
       {"--partial-chain", false, "not offered: --partial-chain: Botan 2's path validation ends a chain only at a "
                                  "self-signed certificate of the trusted stores; there is no setting to stop earlier"},
       {"--ocsp-staple", true, "not built: --ocsp-staple: Botan 2 asks for a stapled response and hands it to "
                               "tls_verify_cert_chain, but has no mode that requires one; not written in this adapter"},
       {"--pin-sha256", true, "not built: --pin-sha256: Botan 2 has no pin option; a check in tls_verify_cert_chain "
                              "is not written in this adapter"}},
      "not offered: --transport fd: Botan 2's TLS::Client does no I/O of its own (sans-IO: the program reads and "
      "writes the socket, received_data() and tls_emit_data)");
  contract::ParseResult parsed = contract::parse_options(args, lacks);
  if (parsed.options && parsed.options->tls_max == 13) {
    contract::ParseResult lacking;
    lacking.exit_code = contract::exit_lacking;
    lacking.error = "--tls-max 1.3: Botan 2 has no TLS 1.3 (it is Botan 3's); give --tls-max 1.2";
    return lacking;
  }
  return parsed;
}

const char* usage() {
  return R"(usage: tlsnb-botan --tls-max 1.2 [options] TARGET:PORT

A non-blocking TLS 1.2 client on Botan 2.19: one thread, its own epoll, one state machine per
attempt around a sans-IO Botan::TLS::Client (the program recv()s and calls received_data(); the
tls_emit_data callback hands it what to send, kept while the socket says EAGAIN).
TARGET is an IPv4 literal or a name (a name needs --connect). The contract's flags (clients/README.md)
and these notes:

  --tls-max 1.2         required: Botan 2 has no TLS 1.3 (1.3, the contract's default: exit 89;
                        the lab's profile.toml starts it with --tls-max 1.2)
  --name NAME           Server_Information(NAME): the SNI and the name x509_path_validate matches
  --no-verify-name      the chain verified by x509_path_validate with no hostname (SNI kept)
  --cafile PATH         every PEM certificate of it in a Certificate_Store_In_Memory; without it
                        Botan's System_Certificate_Store
  --system-trust        also the System_Certificate_Store
  --crl FILE            X509_CRL added to the trusted store (repeatable): Botan checks every
                        certificate whose issuer's CRL it has; a missing one is no error
  --crl-all             Path_Validation_Restrictions(require_rev): a CRL for every certificate
  --cert FILE --key FILE
                        the client's chain and key (Credentials_Manager::cert_chain / private_key_for)
  --resume              offer a session (a Session_Manager_In_Memory per attempt holding it)

Not offered (exit 89): --tls-max 1.3, --transport fd, --verify-depth, --partial-chain, --ocsp-staple,
--pin-sha256, --ns and the resolver's flags.
Exit: 0 every attempt ok, 1 any failed, 2 bad usage or unusable configuration, 89 not offered.
)";
}

}  // namespace tlsbotan
