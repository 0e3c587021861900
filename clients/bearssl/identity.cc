#include "identity.h"

#include <cstring>

#include "trust_anchors.h"

namespace tlsbear {

namespace {

bool is_key_block(const std::string& name) {
  return name == "RSA PRIVATE KEY" || name == "EC PRIVATE KEY" || name == "PRIVATE KEY";
}

// Big-endian unsigned integers equal, leading zeros aside.
bool same_integer(const unsigned char* a, size_t alen, const unsigned char* b, size_t blen) {
  while (alen > 0 && *a == 0) ++a, --alen;
  while (blen > 0 && *b == 0) ++b, --blen;
  return alen == blen && std::memcmp(a, b, alen) == 0;
}

}  // namespace

std::string Identity::load(const std::string& cert_path, const std::string& key_path) {
  std::string pem;
  if (!read_file(cert_path, &pem)) return "--cert: '" + cert_path + "' could not be read";
  std::vector<PemBlock> blocks;
  if (!pem_blocks(pem, &blocks)) return "--cert: '" + cert_path + "' is not valid PEM";
  for (PemBlock& b : blocks)
    if (b.name == "CERTIFICATE" || b.name == "X509 CERTIFICATE") ders_.push_back(std::move(b.der));
  if (ders_.empty()) return "--cert: no PEM certificate in '" + cert_path + "'";
  for (size_t i = 0; i < ders_.size(); ++i) {
    br_x509_decoder_context dc;
    br_x509_decoder_init(&dc, nullptr, nullptr);
    br_x509_decoder_push(&dc, ders_[i].data(), ders_[i].size());
    if (br_x509_decoder_get_pkey(&dc) == nullptr)
      return "--cert: '" + cert_path + "': certificate " + std::to_string(i + 1) + ": BearSSL cannot decode it (br_x509_decoder error " +
             std::to_string(br_x509_decoder_last_error(&dc)) + ")";
  }
  std::string key_pem;
  if (!read_file(key_path, &key_pem)) return "--key: '" + key_path + "' could not be read";
  blocks.clear();
  if (!pem_blocks(key_pem, &blocks)) return "--key: '" + key_path + "' is not valid PEM";
  const PemBlock* key = nullptr;
  for (const PemBlock& b : blocks)
    if (is_key_block(b.name)) key = &b;
  if (key == nullptr) return "--key: no PEM private key in '" + key_path + "'";
  br_skey_decoder_init(&key_);
  br_skey_decoder_push(&key_, key->der.data(), key->der.size());
  if (int err = br_skey_decoder_last_error(&key_); err != 0 || br_skey_decoder_key_type(&key_) == 0)
    return "--key: '" + key_path + "': BearSSL cannot decode the key (br_skey_decoder error " + std::to_string(err) + ")";
  if (std::string why = key_matches(cert_path, key_path); !why.empty()) return why;
  for (std::string& der : ders_) chain_.push_back({reinterpret_cast<unsigned char*>(der.data()), der.size()});
  return "";
}

// The leaf's public key against the one the private key gives (RSA: its modulus; EC: its point).
std::string Identity::key_matches(const std::string& cert_path, const std::string& key_path) {
  br_x509_decoder_context dc;
  br_x509_decoder_init(&dc, nullptr, nullptr);
  br_x509_decoder_push(&dc, ders_[0].data(), ders_[0].size());
  const br_x509_pkey* pk = br_x509_decoder_get_pkey(&dc);
  bool match = false;
  if (pk != nullptr && pk->key_type == BR_KEYTYPE_RSA && br_skey_decoder_key_type(&key_) == BR_KEYTYPE_RSA) {
    const br_rsa_private_key* sk = br_skey_decoder_get_rsa(&key_);
    br_rsa_compute_modulus modulus = br_rsa_compute_modulus_get_default();
    std::vector<unsigned char> n(modulus(nullptr, sk));
    match = !n.empty() && modulus(n.data(), sk) == n.size() && same_integer(n.data(), n.size(), pk->key.rsa.n, pk->key.rsa.nlen);
  } else if (pk != nullptr && pk->key_type == BR_KEYTYPE_EC && br_skey_decoder_key_type(&key_) == BR_KEYTYPE_EC) {
    const br_ec_private_key* sk = br_skey_decoder_get_ec(&key_);
    br_ec_public_key pub{};
    unsigned char point[BR_EC_KBUF_PUB_MAX_SIZE];
    match = sk->curve == pk->key.ec.curve && br_ec_compute_pub(br_ec_get_default(), &pub, point, sk) != 0 &&
            pub.qlen == pk->key.ec.qlen && std::memcmp(pub.q, pk->key.ec.q, pub.qlen) == 0;
  }
  if (match) return "";
  return "--key: '" + key_path + "' does not match the certificate of --cert '" + cert_path + "'";
}

void Identity::apply(br_ssl_client_context* cc) const {
  if (!present()) return;
  const br_skey_decoder_context* key = &key_;
  if (br_skey_decoder_key_type(key) == BR_KEYTYPE_RSA)
    br_ssl_client_set_single_rsa(cc, chain_.data(), chain_.size(), br_skey_decoder_get_rsa(key), br_rsa_pkcs1_sign_get_default());
  else  // ECDSA signatures (CertificateVerify); the issuer's key type matters only for static ECDH, not offered here
    br_ssl_client_set_single_ec(cc, chain_.data(), chain_.size(), br_skey_decoder_get_ec(key), BR_KEYTYPE_SIGN, BR_KEYTYPE_EC,
                                br_ec_get_default(), br_ecdsa_sign_asn1_get_default());
}

}  // namespace tlsbear
