#include "trust_anchors.h"

#include "chain_check.h"

#include <cstring>
#include <fstream>
#include <sstream>

namespace tlsbear {

namespace {

constexpr const char* system_bundle = "/etc/ssl/certs/ca-certificates.crt";  // Debian's ca-certificates

void append_to_string(void* ctx, const void* data, size_t len) {
  static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), len);
}

}  // namespace

bool read_file(const std::string& path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream all;
  all << in.rdbuf();
  *text = all.str();
  return true;
}

std::string library_version() { return "BearSSL 0.6"; }

bool pem_blocks(const std::string& pem, std::vector<PemBlock>* blocks) {
  br_pem_decoder_context pc;
  br_pem_decoder_init(&pc);
  PemBlock block;
  bool inside = false;
  // A last newline so that a file whose END line has none still ends its object.
  const std::string tail = "\n";
  for (const std::string* text : {&pem, &tail}) {
    const char* p = text->data();
    size_t left = text->size();
    while (left > 0) {
      size_t used = br_pem_decoder_push(&pc, p, left);
      p += used;
      left -= used;
      switch (br_pem_decoder_event(&pc)) {
        case BR_PEM_BEGIN_OBJ:
          block = PemBlock{br_pem_decoder_name(&pc), ""};
          br_pem_decoder_setdest(&pc, append_to_string, &block.der);
          inside = true;
          break;
        case BR_PEM_END_OBJ:
          if (inside) blocks->push_back(std::move(block));
          inside = false;
          break;
        case BR_PEM_ERROR: return false;
        default: break;
      }
    }
  }
  return true;
}

unsigned char* TlsConfig::keep(const void* data, size_t len) {
  storage_.emplace_back(static_cast<const char*>(data), len);
  return reinterpret_cast<unsigned char*>(storage_.back().data());
}

// As BearSSL's tools/certs.c certificate_to_trust_anchor: the subject DN, the key, CA when the
// certificate's basicConstraints says so (else the anchor is trusted only directly, as the leaf).
std::string TlsConfig::add_certificate(const std::string& der) {
  std::string dn;
  br_x509_decoder_context dc;
  br_x509_decoder_init(&dc, append_to_string, &dn);
  br_x509_decoder_push(&dc, der.data(), der.size());
  const br_x509_pkey* pk = br_x509_decoder_get_pkey(&dc);
  if (pk == nullptr) return "BearSSL cannot decode it (br_x509_decoder error " + std::to_string(br_x509_decoder_last_error(&dc)) + ")";
  br_x509_trust_anchor ta{};
  ta.dn.data = keep(dn.data(), dn.size());
  ta.dn.len = dn.size();
  ta.flags = br_x509_decoder_isCA(&dc) ? BR_X509_TA_CA : 0;
  ta.pkey.key_type = pk->key_type;
  if (pk->key_type == BR_KEYTYPE_RSA) {
    ta.pkey.key.rsa.n = keep(pk->key.rsa.n, pk->key.rsa.nlen);
    ta.pkey.key.rsa.nlen = pk->key.rsa.nlen;
    ta.pkey.key.rsa.e = keep(pk->key.rsa.e, pk->key.rsa.elen);
    ta.pkey.key.rsa.elen = pk->key.rsa.elen;
  } else {
    ta.pkey.key.ec.curve = pk->key.ec.curve;
    ta.pkey.key.ec.q = keep(pk->key.ec.q, pk->key.ec.qlen);
    ta.pkey.key.ec.qlen = pk->key.ec.qlen;
  }
  anchors_.push_back(ta);
  anchor_pins_.push_back(spki_pin(der));
  return "";
}

std::string TlsConfig::add_pem_file(const std::string& path, bool skip_undecodable) {
  std::string pem;
  if (!read_file(path, &pem)) return "'" + path + "' could not be read";
  std::vector<PemBlock> blocks;
  if (!pem_blocks(pem, &blocks)) return "'" + path + "' is not valid PEM";
  std::vector<std::string> ders;
  for (PemBlock& b : blocks)
    if (b.name == "CERTIFICATE" || b.name == "X509 CERTIFICATE") ders.push_back(std::move(b.der));
  if (ders.empty()) return "no PEM certificate in '" + path + "'";
  for (size_t i = 0; i < ders.size(); ++i) {
    std::string why = add_certificate(ders[i]);
    if (!why.empty() && !skip_undecodable) return "'" + path + "': certificate " + std::to_string(i + 1) + ": " + why;
  }
  return "";
}

ConfigResult make_config(const Options& o) {
  auto config = std::make_unique<TlsConfig>();
  if (!o.client_cert.empty() || !o.client_key.empty()) {
    if (std::string p = contract::identity_files_problem(o); !p.empty()) return ConfigResult::failed(p, true);
    if (std::string why = config->identity().load(o.client_cert, o.client_key); !why.empty()) return ConfigResult::failed(why, true);
  }
  if (!o.verify) return ConfigResult::of(std::move(config));
  if (!o.cafile.empty()) {
    if (std::string p = contract::cafile_problem(o.cafile); !p.empty()) return ConfigResult::failed(p, true);
    if (std::string why = config->add_pem_file(o.cafile, false); !why.empty()) return ConfigResult::failed("--cafile: " + why, true);
  }
  if (o.cafile.empty() || o.system_trust) {
    if (std::string why = config->add_pem_file(system_bundle, true); !why.empty())
      return ConfigResult::failed(std::string("the system bundle could not be loaded: ") + why, false);
  }
  return ConfigResult::of(std::move(config));
}

}  // namespace tlsbear
