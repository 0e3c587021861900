// tlsnb-mbedtls: a client under test for tlslab on Mbed TLS 2.28 (clients/README.md contract).
#include "attempt.h"
#include "clients/contract/adapter_run.h"
#include "options.h"
#include "tls_config.h"

namespace tlsmbed {

// No global state to make: each Mbed TLS context is initialised on its own (tls_config.cc).
const contract::AdapterParts<TlsConfig, SetupFailure> mbedtls = {
    "tlsnb-mbedtls", parse_options, usage, nullptr, nullptr, make_config, setup_outcome, library_version};

}  // namespace tlsmbed

int main(int argc, char** argv) { return contract::adapter_main<tlsmbed::Attempt>(argc, argv, tlsmbed::mbedtls); }
