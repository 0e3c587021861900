#include "pins.h"

#include <openssl/evp.h>
#include <openssl/sha.h>

#include <algorithm>

namespace tlsnb {

bool decode_pin(const std::string& base64, std::string* raw) {
  // 32 bytes: 43 digits and one '='; "==" would be 31 (EVP_DecodeBlock counts padding as zero bytes)
  if (base64.size() != 44 || base64[43] != '=' || base64[42] == '=') return false;
  unsigned char out[33];
  if (EVP_DecodeBlock(out, reinterpret_cast<const unsigned char*>(base64.data()), 44) != 33) return false;
  raw->assign(reinterpret_cast<const char*>(out), 32);  // the 33rd byte is the padding's zero
  return true;
}

std::string spki_sha256(X509* cert) {
  unsigned char* der = nullptr;
  int len = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(cert), &der);
  if (len <= 0) return "";
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(der, static_cast<size_t>(len), digest);
  OPENSSL_free(der);
  return std::string(reinterpret_cast<const char*>(digest), sizeof digest);
}

bool chain_matches_pin(STACK_OF(X509) * chain, const std::vector<std::string>& pins) {
  for (int i = 0; i < sk_X509_num(chain); ++i) {
    std::string hash = spki_sha256(sk_X509_value(chain, i));
    if (!hash.empty() && std::find(pins.begin(), pins.end(), hash) != pins.end()) return true;
  }
  return false;
}

}  // namespace tlsnb
