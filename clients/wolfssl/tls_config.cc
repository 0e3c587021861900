#include "tls_config.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace tlswolf {

namespace {

// --transport bio: the program's own socket calls under wolfSSL; the I/O context is the attempt's
// SocketIo (the fd, and the errno of the last failed call, which the outcome reports).
int failed_with(SocketIo* io, int code) {
  if (io->last_errno == 0) io->last_errno = errno;
  return code;
}

int recv_cb(WOLFSSL*, char* buf, int size, void* ctx) {
  auto* io = static_cast<SocketIo*>(ctx);
  ssize_t n = recv(io->fd, buf, static_cast<size_t>(size), 0);
  if (n > 0) return static_cast<int>(n);
  if (n == 0) return WOLFSSL_CBIO_ERR_CONN_CLOSE;
  if (errno == EAGAIN || errno == EWOULDBLOCK) return WOLFSSL_CBIO_ERR_WANT_READ;
  if (errno == EINTR) return WOLFSSL_CBIO_ERR_ISR;
  return failed_with(io, errno == ECONNRESET ? WOLFSSL_CBIO_ERR_CONN_RST : WOLFSSL_CBIO_ERR_GENERAL);
}

int send_cb(WOLFSSL*, char* buf, int size, void* ctx) {
  auto* io = static_cast<SocketIo*>(ctx);
  ssize_t n = send(io->fd, buf, static_cast<size_t>(size), MSG_NOSIGNAL);
  if (n >= 0) return static_cast<int>(n);
  if (errno == EAGAIN || errno == EWOULDBLOCK) return WOLFSSL_CBIO_ERR_WANT_WRITE;
  if (errno == EINTR) return WOLFSSL_CBIO_ERR_ISR;
  if (errno == EPIPE) return failed_with(io, WOLFSSL_CBIO_ERR_CONN_CLOSE);
  return failed_with(io, errno == ECONNRESET ? WOLFSSL_CBIO_ERR_CONN_RST : WOLFSSL_CBIO_ERR_GENERAL);
}

struct Maker {
  const Options& o;
  WOLFSSL_CTX* ctx;

  std::string trust() {
    if (!o.cafile.empty()) {
      if (std::string p = contract::cafile_problem(o.cafile); !p.empty()) return p;
      // An anchor whose dates have passed is loaded and judged by the verification at the handshake,
      // as OpenSSL does (matrix time-expired-root).
      int r = wolfSSL_CTX_load_verify_locations_ex(ctx, o.cafile.c_str(), nullptr, WOLFSSL_LOAD_FLAG_DATE_ERR_OKAY);
      if (r != WOLFSSL_SUCCESS) return "--cafile: '" + o.cafile + "' could not be loaded (wolfSSL_CTX_load_verify_locations)";
    }
    if ((o.cafile.empty() || o.system_trust) && wolfSSL_CTX_load_system_CA_certs(ctx) != WOLFSSL_SUCCESS)
      return "the system CA certificates could not be loaded (wolfSSL_CTX_load_system_CA_certs)";
    return "";
  }

  std::string crls() {
    if (o.crls.empty() && !o.crl_all) return "";
    if (wolfSSL_CTX_EnableCRL(ctx, o.crl_all ? WOLFSSL_CRL_CHECKALL : 0) != WOLFSSL_SUCCESS)
      return "wolfSSL_CTX_EnableCRL failed";
    for (const std::string& path : o.crls) {
      if (std::string p = contract::file_problem(path); !p.empty()) return "--crl: " + p;
      if (!contract::file_holds(path, "-----BEGIN X509 CRL-----")) return "--crl: no PEM CRL could be loaded from '" + path + "'";
      int r = wolfSSL_CTX_LoadCRLFile(ctx, path.c_str(), WOLFSSL_FILETYPE_PEM);
      // Any refusal: exit 89. wolfSSL 5.5 answers ASN_PARSE_E for a CRL that does not decode and for
      // an expired one alike (matrix crl-expired), so the user's bad file cannot be told from the
      // load's verification, which tlsnb leaves to the handshake.
      if (r != WOLFSSL_SUCCESS) {
        lacked = "--crl: wolfSSL verifies a CRL when it loads it, against the CAs of its trust store (the issuer "
                 "must be a trusted CA, the signature and the dates good), and refuses '" + path + "': " + wolf_text(r);
        return lacked;
      }
    }
    return "";
  }
  std::string lacked;  // a CRL wolfSSL cannot take: exit 89, the value cannot be honoured

  std::string staple() {
    if (o.ocsp_staple == "off") return "";
    if (wolfSSL_CTX_EnableOCSPStapling(ctx) != WOLFSSL_SUCCESS) return "wolfSSL_CTX_EnableOCSPStapling failed";
    if (o.ocsp_staple == "require" && wolfSSL_CTX_EnableOCSPMustStaple(ctx) != WOLFSSL_SUCCESS)
      return "wolfSSL_CTX_EnableOCSPMustStaple failed";
    return "";
  }

  std::string identity() {
    if (std::string p = contract::identity_files_problem(o); !p.empty()) return p;
    if (wolfSSL_CTX_use_certificate_chain_file(ctx, o.client_cert.c_str()) != WOLFSSL_SUCCESS)
      return "--cert: no PEM certificate could be loaded from '" + o.client_cert + "'";
    if (wolfSSL_CTX_use_PrivateKey_file(ctx, o.client_key.c_str(), WOLFSSL_FILETYPE_PEM) != WOLFSSL_SUCCESS)
      return contract::file_holds(o.client_key, "PRIVATE KEY-----")
                 ? "--key: '" + o.client_key + "' does not match the certificate of --cert '" + o.client_cert + "'"
                 : "--key: no PEM private key could be loaded from '" + o.client_key + "'";
    if (wolfSSL_CTX_check_private_key(ctx) != WOLFSSL_SUCCESS)
      return "--key: '" + o.client_key + "' does not match the certificate of --cert '" + o.client_cert + "'";
    return "";
  }
};

}  // namespace

std::string wolf_text(int code) {
  char buf[WOLFSSL_MAX_ERROR_SZ] = "";
  wolfSSL_ERR_error_string_n(static_cast<unsigned long>(code < 0 ? -code : code), buf, sizeof buf);
  return std::string(buf) + " (" + std::to_string(code) + ")";
}

std::string library_version() { return std::string("wolfSSL ") + wolfSSL_lib_version(); }

std::string init_library() { return wolfSSL_Init() == WOLFSSL_SUCCESS ? "" : "wolfSSL_Init failed"; }

void cleanup_library() { wolfSSL_Cleanup(); }

ConfigResult make_config(const Options& o) {
  auto config = std::make_unique<TlsConfig>();
  WOLFSSL_METHOD* method = o.tls_max == 12 ? wolfTLSv1_2_client_method() : wolfSSLv23_client_method();
  config->ctx_.reset(method != nullptr ? wolfSSL_CTX_new(method) : nullptr);
  if (config->ctx_ == nullptr) return ConfigResult::failed("wolfSSL_CTX_new failed", false);
  WOLFSSL_CTX* ctx = config->ctx();
  if (wolfSSL_CTX_SetMinVersion(ctx, WOLFSSL_TLSV1_2) != WOLFSSL_SUCCESS)
    return ConfigResult::failed("wolfSSL_CTX_SetMinVersion(TLS 1.2) failed", false);
  Maker make{o, ctx, ""};
  for (auto step : {&Maker::trust, &Maker::crls, &Maker::staple}) {
    if (!o.verify) break;
    if (std::string why = (make.*step)(); !why.empty()) {
      ConfigResult failed = ConfigResult::failed(why, true);
      failed.lacking = !make.lacked.empty();
      return failed;
    }
  }
  // A client verifies by default; said here so that no reader has to know it. After the anchors:
  // with VERIFY_PEER set first, wolfSSL verifies each anchor's dates as it loads it and refuses an
  // expired one (ASN_AFTER_DATE_E) whatever WOLFSSL_LOAD_FLAG_DATE_ERR_OKAY says.
  wolfSSL_CTX_set_verify(ctx, o.verify ? WOLFSSL_VERIFY_PEER : WOLFSSL_VERIFY_NONE, nullptr);
  if (!o.client_cert.empty())
    if (std::string why = make.identity(); !why.empty()) return ConfigResult::failed(why, true);
  if (o.transport == Transport::bio) {
    wolfSSL_CTX_SetIORecv(ctx, recv_cb);
    wolfSSL_CTX_SetIOSend(ctx, send_cb);
  }
  return ConfigResult::of(std::move(config));
}

}  // namespace tlswolf
