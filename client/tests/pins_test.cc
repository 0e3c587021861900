// Key pins: the base64 of 32 bytes, and the SPKI hash of a certificate (under LeakSanitizer:
// the DER made for the hash is freed).
#include "pins.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <string>

namespace {

// A certificate holding a fresh P-256 key; nothing else is set (only its SPKI is read).
X509* certificate_with_a_key() {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  X509_set_pubkey(cert, key);
  EVP_PKEY_free(key);
  return cert;
}

}  // namespace

/* 43 base64 digits and '=' that decode to 32 bytes; anything that does not decode is refused */
TEST(Pins, OnlyTheBase64OfThirtyTwoBytesIsAPin) {
  std::string raw;
  EXPECT_TRUE(tlsnb::decode_pin(std::string(43, 'A') + "=", &raw));
  EXPECT_EQ(std::string(32, '\0'), raw);
  EXPECT_FALSE(tlsnb::decode_pin(std::string(43, '!') + "=", &raw));
  EXPECT_FALSE(tlsnb::decode_pin(std::string(42, 'A') + "==", &raw));
  EXPECT_FALSE(tlsnb::decode_pin(std::string(44, 'A'), &raw));
  EXPECT_FALSE(tlsnb::decode_pin(std::string(45, 'A'), &raw));
}

/* The pin of a certificate is SHA-256 over its SubjectPublicKeyInfo, and its chain matches it */
TEST(Pins, TheHashIsOverTheSpkiAndTheChainMatchesIt) {
  X509* cert = certificate_with_a_key();
  unsigned char* der = nullptr;
  int len = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(cert), &der);
  ASSERT_GT(len, 0);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(der, static_cast<size_t>(len), digest);
  OPENSSL_free(der);
  std::string pin = tlsnb::spki_sha256(cert);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(digest), sizeof digest), pin);
  STACK_OF(X509)* chain = sk_X509_new_null();
  sk_X509_push(chain, cert);
  EXPECT_TRUE(tlsnb::chain_matches_pin(chain, {std::string(32, 'x'), pin}));
  EXPECT_FALSE(tlsnb::chain_matches_pin(chain, {std::string(32, 'x')}));
  sk_X509_pop_free(chain, X509_free);
}
