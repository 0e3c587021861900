// The cipher suites br_ssl_client_init_full enables, by IANA name (BearSSL has no name call), and
// the list this client offers: init_full's, in its order, without the 3DES suites.
#pragma once

#include <bearssl.h>

#include <cstdint>
#include <vector>

namespace tlsbear {

// "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", or "" for a suite not in the table.
const char* suite_name(uint16_t suite);

// init_full's suites (read from the engine) without 3DES: OpenSSL 3's DEFAULT list has none
// (3DES is SWEET32-weak), and init_full enables five.
std::vector<uint16_t> offered_suites(const br_ssl_engine_context* eng);

}  // namespace tlsbear
