// tlsnb-gnutls: a client under test for tlslab on GnuTLS 3.7 (clients/README.md contract).
#include "attempt.h"
#include "clients/contract/adapter_run.h"
#include "options.h"
#include "tls_config.h"

namespace tlsgnu {

const contract::AdapterParts<TlsConfig, SetupFailure> gnutls = {
    "tlsnb-gnutls", parse_options, usage, init_library, cleanup_library, make_config, setup_outcome, library_version};

}  // namespace tlsgnu

int main(int argc, char** argv) { return contract::adapter_main<tlsgnu::Attempt>(argc, argv, tlsgnu::gnutls); }
