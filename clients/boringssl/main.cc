// tlsnb-boringssl: a client under test for tlslab on BoringSSL (clients/README.md contract).
#include "attempt.h"
#include "clients/contract/adapter_run.h"
#include "options.h"
#include "tls_config.h"

namespace tlsboring {

const contract::AdapterParts<TlsConfig, SetupFailure> boringssl = {
    "tlsnb-boringssl", parse_options, usage, nullptr, nullptr, make_config, setup_outcome, library_version};

}  // namespace tlsboring

int main(int argc, char** argv) { return contract::adapter_main<tlsboring::Attempt>(argc, argv, tlsboring::boringssl); }
