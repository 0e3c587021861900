// tlsnb-botan: a client under test for tlslab on Botan 2.19 (clients/README.md contract).
#include "attempt.h"
#include "clients/contract/adapter_run.h"
#include "options.h"
#include "tls_config.h"

namespace tlsbotan {

// No global state to make: Botan's objects are the run's configuration (tls_config.cc).
const contract::AdapterParts<TlsConfig, SetupFailure> botan = {
    "tlsnb-botan", parse_options, usage, nullptr, nullptr, make_config, setup_outcome, library_version};

}  // namespace tlsbotan

int main(int argc, char** argv) { return contract::adapter_main<tlsbotan::Attempt>(argc, argv, tlsbotan::botan); }
