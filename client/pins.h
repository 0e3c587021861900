// Key pinning, RFC 7469's pin-sha256: the SHA-256 of a certificate's SubjectPublicKeyInfo,
// given in base64. Checked after the chain verifies, against every certificate of the
// verified chain (leaf, intermediates, anchor): one match is enough; pins never replace
// verification (matrix rows pin-*).
#pragma once

#include <openssl/x509.h>

#include <string>
#include <vector>

namespace tlsnb {

// The 32 raw bytes of a base64 pin; false for anything else (bad base64, another length).
bool decode_pin(const std::string& base64, std::string* raw);
// The raw SHA-256 of the certificate's SPKI (DER); "" when it cannot be encoded.
std::string spki_sha256(X509* cert);
// Whether any certificate of `chain` has one of `pins`.
bool chain_matches_pin(STACK_OF(X509) * chain, const std::vector<std::string>& pins);

}  // namespace tlsnb
