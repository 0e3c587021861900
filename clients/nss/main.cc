// tlsnb-nss: a client under test for tlslab on NSS 3.87 / NSPR 4.35 (clients/README.md contract).
#include "attempt.h"
#include "clients/contract/adapter_run.h"
#include "options.h"
#include "tls_config.h"

namespace tlsnss {

const contract::AdapterParts<TlsConfig, SetupFailure> nss = {
    "tlsnb-nss", parse_options, usage, init_library, cleanup_library, make_config, setup_outcome, library_version};

}  // namespace tlsnss

int main(int argc, char** argv) { return contract::adapter_main<tlsnss::Attempt>(argc, argv, tlsnss::nss); }
