#include "tls_config.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/obj.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdio>

namespace tlsboring {

namespace {

// --transport bio: the program's own socket calls under BoringSSL; the BIO's data is the
// attempt's SocketIo.
int failed_with(SocketIo* io) {
  if (io->last_errno == 0) io->last_errno = errno;
  return -1;
}

int bio_read(BIO* bio, char* buf, int size) {
  auto* io = static_cast<SocketIo*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  ssize_t n = recv(io->fd, buf, static_cast<size_t>(size), 0);
  if (n > 0) return static_cast<int>(n);
  if (n == 0) return io->eof = true, 0;
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return BIO_set_retry_read(bio), -1;
  return failed_with(io);
}

int bio_write(BIO* bio, const char* buf, int size) {
  auto* io = static_cast<SocketIo*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  ssize_t n = send(io->fd, buf, static_cast<size_t>(size), MSG_NOSIGNAL);
  if (n >= 0) return static_cast<int>(n);
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return BIO_set_retry_write(bio), -1;
  return failed_with(io);
}

long bio_ctrl(BIO*, int cmd, long, void*) { return cmd == BIO_CTRL_FLUSH ? 1 : 0; }

int bio_create(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

// The new-session callback: BoringSSL hands a client its sessions here only (a TLS 1.3 ticket
// arrives after the handshake; SSL_get_session is then a session that cannot be resumed).
int on_new_session(SSL* ssl, SSL_SESSION* session) {
  auto* sink = static_cast<SessionSink*>(SSL_get_ex_data(ssl, session_sink_index()));
  uint8_t* bytes = nullptr;
  size_t len = 0;
  if (sink != nullptr && SSL_SESSION_is_resumable(session) && SSL_SESSION_to_bytes(session, &bytes, &len)) {
    sink->bytes.assign(reinterpret_cast<const char*>(bytes), len);
    OPENSSL_free(bytes);
  }
  return 0;  // the session stays BoringSSL's
}

struct Maker {
  const Options& o;
  SSL_CTX* ctx;

  std::string trust() {
    if (!o.cafile.empty()) {
      if (std::string p = contract::cafile_problem(o.cafile); !p.empty()) return p;
      if (SSL_CTX_load_verify_locations(ctx, o.cafile.c_str(), nullptr) != 1)
        return "--cafile: '" + o.cafile + "' could not be loaded (SSL_CTX_load_verify_locations: " +
               boring_text(ERR_peek_last_error()) + ")";
    }
    if ((o.cafile.empty() || o.system_trust) && SSL_CTX_set_default_verify_paths(ctx) != 1)
      return "the system trust store could not be loaded (SSL_CTX_set_default_verify_paths)";
    return "";
  }

  // Every CRL of each file into the store; the flags make the chain's check need them.
  std::string crls() {
    if (o.crls.empty() && !o.crl_all) return "";
    X509_STORE* store = SSL_CTX_get_cert_store(ctx);
    for (const std::string& path : o.crls) {
      if (std::string p = contract::file_problem(path); !p.empty()) return "--crl: " + p;
      if (!contract::file_holds(path, "-----BEGIN X509 CRL-----")) return "--crl: no PEM CRL could be loaded from '" + path + "'";
      FILE* f = std::fopen(path.c_str(), "r");
      if (f == nullptr) return "--crl: '" + path + "' could not be opened";
      int added = 0;
      bool refused = false;
      while (X509_CRL* crl = PEM_read_X509_CRL(f, nullptr, nullptr, nullptr)) {
        refused = refused || X509_STORE_add_crl(store, crl) != 1;
        X509_CRL_free(crl);
        ++added;
      }
      std::fclose(f);
      unsigned long last = ERR_peek_last_error();
      bool clean_end = ERR_GET_LIB(last) == ERR_LIB_PEM && ERR_GET_REASON(last) == PEM_R_NO_START_LINE;
      ERR_clear_error();
      if (added == 0 || refused || (!clean_end && last != 0))
        return "--crl: a PEM CRL of '" + path + "' does not decode";
    }
    X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK | (o.crl_all ? X509_V_FLAG_CRL_CHECK_ALL : 0));
    return "";
  }

  std::string staple() {
    if (o.ocsp_staple == "off") return "";
    lacked = "--ocsp-staple " + o.ocsp_staple + ": BoringSSL verifies no OCSP response; it hands the raw staple "
             "(SSL_get0_ocsp_response) and this adapter writes no check of its own";
    return lacked;
  }
  std::string lacked;  // a value BoringSSL cannot honour: exit 89

  std::string identity() {
    if (std::string p = contract::identity_files_problem(o); !p.empty()) return p;
    if (SSL_CTX_use_certificate_chain_file(ctx, o.client_cert.c_str()) != 1)
      return "--cert: no PEM certificate could be loaded from '" + o.client_cert + "'";
    if (SSL_CTX_use_PrivateKey_file(ctx, o.client_key.c_str(), SSL_FILETYPE_PEM) != 1)
      return contract::file_holds(o.client_key, "PRIVATE KEY-----")
                 ? "--key: '" + o.client_key + "' does not match the certificate of --cert '" + o.client_cert + "'"
                 : "--key: no PEM private key could be loaded from '" + o.client_key + "'";
    if (SSL_CTX_check_private_key(ctx) != 1)
      return "--key: '" + o.client_key + "' does not match the certificate of --cert '" + o.client_cert + "'";
    return "";
  }
};

}  // namespace

int session_sink_index() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

std::string boring_text(unsigned long code) {
  char buf[256] = "";
  ERR_error_string_n(code, buf, sizeof buf);
  return buf;
}

std::string library_version() { return OpenSSL_version(OPENSSL_VERSION); }

BIO* TlsConfig::socket_bio(SocketIo* io) const {
  BIO* bio = BIO_new(method_.get());
  if (bio != nullptr) BIO_set_data(bio, io);
  return bio;
}

ConfigResult make_config(const Options& o) {
  auto config = std::make_unique<TlsConfig>();
  config->ctx_.reset(SSL_CTX_new(TLS_method()));
  if (config->ctx_ == nullptr) return ConfigResult::failed("SSL_CTX_new failed", false);
  SSL_CTX* ctx = config->ctx();
  if (!SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
      !SSL_CTX_set_max_proto_version(ctx, o.tls_max == 12 ? TLS1_2_VERSION : TLS1_3_VERSION))
    return ConfigResult::failed("the protocol bounds could not be set", false);
  // One record at a time, and the buffer may move between retries (the contract's request is
  // offered again from where it stopped).
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  Maker make{o, ctx, ""};
  for (auto step : {&Maker::trust, &Maker::crls, &Maker::staple}) {
    if (!o.verify) break;
    if (std::string why = (make.*step)(); !why.empty()) {
      ConfigResult failed = ConfigResult::failed(why, true);
      failed.lacking = !make.lacked.empty();
      return failed;
    }
  }
  // A client verifies by default; said here so that no reader has to know it.
  SSL_CTX_set_verify(ctx, o.verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nullptr);
  if (o.verify) {
    // RFC 5280 6.1's policy processing is off in BoringSSL unless asked: without it a chain whose own
    // policy constraints (requireExplicitPolicy, inhibitPolicyMapping, inhibitAnyPolicy) fail passes
    // (pkits 4.8 to 4.12; README.md). OpenSSL 3.0 processes them whenever a certificate carries them.
    // The initial policy set is RFC 5280's {anyPolicy}; BoringSSL's, as OpenSSL's, is empty, and
    // every chain whose certificates require an explicit policy would fail (NO_EXPLICIT_POLICY).
    X509_VERIFY_PARAM* param = SSL_CTX_get0_param(ctx);
    X509_VERIFY_PARAM_set_flags(param, X509_V_FLAG_POLICY_CHECK | (o.partial_chain ? X509_V_FLAG_PARTIAL_CHAIN : 0));
    ASN1_OBJECT* any_policy = OBJ_nid2obj(NID_any_policy);
    if (any_policy == nullptr || X509_VERIFY_PARAM_add0_policy(param, OBJ_dup(any_policy)) != 1)
      return ConfigResult::failed("the initial policy set could not be made", false);
  }
  if (!o.client_cert.empty())
    if (std::string why = make.identity(); !why.empty()) return ConfigResult::failed(why, true);
  if (o.resume) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL);
    SSL_CTX_sess_set_new_cb(ctx, on_new_session);
  }
  if (o.transport == Transport::bio) {
    config->method_.reset(BIO_meth_new(BIO_TYPE_SOCKET, "tlsnb-boringssl socket"));
    BIO_METHOD* m = config->method_.get();
    if (m == nullptr || !BIO_meth_set_read(m, bio_read) || !BIO_meth_set_write(m, bio_write) ||
        !BIO_meth_set_ctrl(m, bio_ctrl) || !BIO_meth_set_create(m, bio_create))
      return ConfigResult::failed("the program's BIO_METHOD could not be made", false);
  }
  ERR_clear_error();
  return ConfigResult::of(std::move(config));
}

}  // namespace tlsboring
