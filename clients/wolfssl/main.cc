// tlsnb-wolfssl: a client under test for tlslab on wolfSSL 5.5 (clients/README.md contract).
#include "attempt.h"
#include "clients/contract/adapter_run.h"
#include "options.h"
#include "tls_config.h"

namespace tlswolf {

const contract::AdapterParts<TlsConfig, SetupFailure> wolfssl = {
    "tlsnb-wolfssl", parse_options, usage, init_library, cleanup_library, make_config, setup_outcome, library_version};

}  // namespace tlswolf

int main(int argc, char** argv) { return contract::adapter_main<tlswolf::Attempt>(argc, argv, tlswolf::wolfssl); }
