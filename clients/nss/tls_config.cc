#include "tls_config.h"

#include <keyhi.h>
#include <nssb64.h>
#include <pk11pub.h>
#include <prerror.h>
#include <secmod.h>
#include <ssl.h>

#include <fstream>
#include <sstream>

namespace tlsnss {

namespace {

// The base64 bodies of every `-----BEGIN WHAT-----` block of a PEM file, decoded (DER).
std::vector<SECItem*> pem_blocks(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str(), begin = "-----BEGIN " + what + "-----", end = "-----END " + what + "-----";
  std::vector<SECItem*> blocks;
  for (size_t at = all.find(begin); at != std::string::npos; at = all.find(begin, at)) {
    size_t body = at + begin.size(), stop = all.find(end, body);
    if (stop == std::string::npos) break;
    std::string b64 = all.substr(body, stop - body);
    SECItem* der = NSSBase64_DecodeBuffer(nullptr, nullptr, b64.data(), static_cast<unsigned>(b64.size()));
    if (der != nullptr) blocks.push_back(der);
    at = stop + end.size();
  }
  return blocks;
}

void free_items(std::vector<SECItem*>& items) {
  for (SECItem* item : items) SECITEM_FreeItem(item, PR_TRUE);
  items.clear();
}

}  // namespace

struct Maker {
  const Options& o;
  TlsConfig& config;

  // --cafile: each certificate a temporary certificate, trusted as an issuer of SSL servers ("C,,")
  // or as a server's own: the only anchors NSS has, for it opened no database and loaded no roots module.
  std::string trust() {
    if (!o.cafile.empty()) {
      if (std::string p = contract::cafile_problem(o.cafile); !p.empty()) return p;
      std::vector<SECItem*> ders = pem_blocks(o.cafile, "CERTIFICATE");
      CERTCertTrust anchor{}, peer{};
      CERT_DecodeTrustString(&anchor, "C,,");
      CERT_DecodeTrustString(&peer, "P,,");
      std::string why;
      for (SECItem* der : ders) {
        CERTCertificate* cert = CERT_NewTempCertificate(CERT_GetDefaultCertDB(), der, nullptr, PR_FALSE, PR_TRUE);
        if (cert == nullptr) {
          why = "--cafile: '" + o.cafile + "' holds a certificate NSS cannot decode: " + nss_text(PR_GetError());
          break;
        }
        config.anchors_.push_back(cert);
        // A CA is trusted as an issuer of servers; a server's own certificate (no CA basicConstraints)
        // as that peer ("P,,": NSS's trusted peer, the certificate accepted as it is).
        CERTCertTrust* trust = CERT_IsCACert(cert, nullptr) ? &anchor : &peer;
        if (CERT_ChangeCertTrust(CERT_GetDefaultCertDB(), cert, trust) != SECSuccess) {
          why = "--cafile: NSS could not trust a certificate of '" + o.cafile + "': " + nss_text(PR_GetError());
          break;
        }
      }
      free_items(ders);
      if (!why.empty()) return why;
    }
    if (o.cafile.empty() || o.system_trust) {
      // The builtin roots (Mozilla's, or Debian's p11-kit trust module under the same name).
      SECMODModule* roots = SECMOD_LoadUserModule(const_cast<char*>("name=\"Roots\" library=\"libnssckbi.so\""),
                                                  nullptr, PR_FALSE);
      bool loaded = roots != nullptr && roots->loaded;
      if (roots != nullptr) SECMOD_DestroyModule(roots);
      if (!loaded) return "the system's roots could not be loaded (libnssckbi.so)";
    }
    return "";
  }

  // --crl: each CRL in NSS's CRL cache (CERT_CacheCRL). NSS verifies it when it uses it, and a
  // certificate whose issuer has none held is not checked (no mode requires one).
  std::string crls() {
    for (const std::string& path : o.crls) {
      if (std::string p = contract::file_problem(path); !p.empty()) return "--crl: " + p;
      std::vector<SECItem*> ders = pem_blocks(path, "X509 CRL");
      if (ders.empty()) return "--crl: no PEM CRL could be loaded from '" + path + "'";
      for (size_t i = 0; i < ders.size(); i++) {
        if (CERT_CacheCRL(CERT_GetDefaultCertDB(), ders[i]) != SECSuccess) {
          std::string why = "--crl: NSS refuses a CRL of '" + path + "': " + nss_text(PR_GetError());
          // the ones cached are the config's (uncached and freed by ~TlsConfig), the rest freed here
          std::vector<SECItem*> rest(ders.begin() + static_cast<long>(i), ders.end());
          free_items(rest);
          return why;
        }
        config.crls_.push_back(ders[i]);
      }
    }
    return "";
  }

  // --cert/--key: the certificates temporary (the leaf first; NSS sends the chain it builds from them),
  // the PKCS#8 key imported into the internal slot as a session object, and the two held to be a pair.
  std::string identity() {
    if (o.client_cert.empty()) return "";
    std::vector<SECItem*> ders = pem_blocks(o.client_cert, "CERTIFICATE");
    std::string why = ders.empty() ? "--cert: no PEM certificate in '" + o.client_cert + "'" : "";
    for (SECItem* der : ders) {
      if (!why.empty()) break;
      CERTCertificate* cert = CERT_NewTempCertificate(CERT_GetDefaultCertDB(), der, nullptr, PR_FALSE, PR_TRUE);
      if (cert == nullptr)
        why = "--cert: '" + o.client_cert + "' holds a certificate NSS cannot decode: " + nss_text(PR_GetError());
      else
        config.client_chain_.push_back(cert);
    }
    free_items(ders);
    if (!why.empty()) return why;
    config.client_cert_ = config.client_chain_.front();
    std::vector<SECItem*> keys = pem_blocks(o.client_key, "PRIVATE KEY");
    if (keys.empty()) return "--key: no PEM PRIVATE KEY (PKCS#8) block in '" + o.client_key + "'";
    PK11SlotInfo* slot = PK11_GetInternalKeySlot();
    SECStatus imported = PK11_ImportDERPrivateKeyInfoAndReturnKey(slot, keys.front(), nullptr, nullptr, PR_FALSE,
                                                                  PR_TRUE, KU_ALL, &config.client_key_, nullptr);
    PK11_FreeSlot(slot);
    free_items(keys);
    if (imported != SECSuccess || config.client_key_ == nullptr)
      return "--key: NSS cannot import the key of '" + o.client_key + "': " + nss_text(PR_GetError());
    if (!pair(config.client_cert_, config.client_key_))
      return "--key: the key of '" + o.client_key + "' does not match --cert's certificate";
    return "";
  }

  // The certificate's public key is the private key's: the same type and the same public value.
  static bool pair(CERTCertificate* cert, SECKEYPrivateKey* key) {
    SECKEYPublicKey* theirs = CERT_ExtractPublicKey(cert);
    SECKEYPublicKey* ours = SECKEY_ConvertToPublicKey(key);
    bool same = theirs != nullptr && ours != nullptr && theirs->keyType == ours->keyType;
    if (same && theirs->keyType == rsaKey)
      same = SECITEM_CompareItem(&theirs->u.rsa.modulus, &ours->u.rsa.modulus) == SECEqual &&
             SECITEM_CompareItem(&theirs->u.rsa.publicExponent, &ours->u.rsa.publicExponent) == SECEqual;
    else if (same && theirs->keyType == ecKey)
      same = SECITEM_CompareItem(&theirs->u.ec.publicValue, &ours->u.ec.publicValue) == SECEqual;
    else if (same)
      same = false;  // no other type is offered here
    if (theirs != nullptr) SECKEY_DestroyPublicKey(theirs);
    if (ours != nullptr) SECKEY_DestroyPublicKey(ours);
    return same;
  }
};

TlsConfig::~TlsConfig() {
  if (client_key_ != nullptr) SECKEY_DestroyPrivateKey(client_key_);
  for (CERTCertificate* cert : client_chain_) CERT_DestroyCertificate(cert);
  for (SECItem* crl : crls_) CERT_UncacheCRL(CERT_GetDefaultCertDB(), crl);
  free_items(crls_);
  for (CERTCertificate* cert : anchors_) CERT_DestroyCertificate(cert);
}

std::string nss_text(long code) {
  const char* name = PR_ErrorToName(static_cast<PRErrorCode>(code));
  const char* words = PR_ErrorToString(static_cast<PRErrorCode>(code), PR_LANGUAGE_I_DEFAULT);
  std::string text = name != nullptr ? name : "error " + std::to_string(code);
  if (words != nullptr && *words != '\0') text += std::string(": ") + words;
  return text;
}

std::string library_version() { return std::string("NSS ") + NSS_GetVersion(); }

std::string init_library() {
  if (NSS_NoDB_Init(nullptr) != SECSuccess) return "NSS_NoDB_Init failed: " + nss_text(PR_GetError());
  if (NSS_SetDomesticPolicy() != SECSuccess) return "NSS_SetDomesticPolicy failed: " + nss_text(PR_GetError());
  return "";
}

void cleanup_library() {
  SSL_ClearSessionCache();
  NSS_Shutdown();
}

ConfigResult make_config(const Options& o) {
  auto config = std::make_unique<TlsConfig>();
  Maker make{o, *config};
  if (o.verify)
    for (auto step : {&Maker::trust, &Maker::crls})
      if (std::string why = (make.*step)(); !why.empty()) return ConfigResult::failed(why, true);
  if (std::string why = make.identity(); !why.empty()) return ConfigResult::failed(why, true);
  return ConfigResult::of(std::move(config));
}

}  // namespace tlsnss
