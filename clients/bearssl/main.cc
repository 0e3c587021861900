// tlsnb-bearssl: a client under test for tlslab on BearSSL 0.6 (clients/README.md contract).
#include "attempt.h"
#include "clients/contract/adapter_run.h"
#include "options.h"
#include "trust_anchors.h"

namespace tlsbear {

// No global state: BearSSL has none (every context is the caller's memory).
const contract::AdapterParts<TlsConfig, SetupFailure> bearssl = {
    "tlsnb-bearssl", parse_options, usage, nullptr, nullptr, make_config, setup_outcome, library_version};

}  // namespace tlsbear

int main(int argc, char** argv) { return contract::adapter_main<tlsbear::Attempt>(argc, argv, tlsbear::bearssl); }
