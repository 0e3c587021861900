// gaps/gaplib.cc: contexts, an in-memory link, sockets, children and minted
// certificates for the gap programs (see gaplib.h).
#include "gaplib.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/ocsp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>

namespace gap {

namespace {
std::string g_prog = "gap";
std::string g_certs;
}  // namespace

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    reset();
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

void Fd::reset() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

// --- command line and output ------------------------------------------------------

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "%s: %s\n", g_prog.c_str(), why.c_str());
  std::exit(2);
}

std::map<std::string, std::string> init(int argc, char** argv, const std::vector<std::string>& flags) {
  const char* slash = std::strrchr(argv[0], '/');
  g_prog = slash ? slash + 1 : argv[0];
  if (const char* env = std::getenv("TLSLAB_CERTS")) g_certs = env;
  std::map<std::string, std::string> extra;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    bool known = flag == "--certs";
    for (const auto& f : flags) known = known || flag == f;
    if (!known) die("unknown argument " + flag + " (usage: " + g_prog + " [--certs DIR])");
    if (i + 1 >= argc) die(flag + " needs a value");
    if (flag == "--certs") {
      g_certs = argv[++i];
    } else {
      extra[flag] = argv[++i];
    }
  }
  return extra;
}

std::string cert_file(const std::string& name) {
  if (g_certs.empty()) die("no certificate folder: pass --certs DIR or set TLSLAB_CERTS");
  std::string path = g_certs + "/" + name;
  struct stat st;
  if (stat(path.c_str(), &st) != 0) die("missing " + path + " (build the 'certs' target)");
  return path;
}

void Observation::add(const std::string& key, const std::string& value) { kv_.emplace_back(key, value); }

int Observation::print() const {
  std::string line = "OBSERVED";
  for (const auto& [k, v] : kv_) line += " " + k + "=" + v;
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
  return 0;
}

void figure(const std::string& key, const std::string& value) {
  std::printf("FIGURE %s=%s\n", key.c_str(), value.c_str());
  std::fflush(stdout);
}

// --- names ------------------------------------------------------------------------

std::string ssl_error_name(int code) {
  switch (code) {
    case SSL_ERROR_NONE: return "NONE";
    case SSL_ERROR_SSL: return "SSL";
    case SSL_ERROR_WANT_READ: return "WANT_READ";
    case SSL_ERROR_WANT_WRITE: return "WANT_WRITE";
    case SSL_ERROR_SYSCALL: return "SYSCALL";
    case SSL_ERROR_ZERO_RETURN: return "ZERO_RETURN";
    default: return "ERROR_" + std::to_string(code);
  }
}

std::string reason_name(unsigned long err) {
  if (err == 0) return "none";
  const char* r = ERR_reason_error_string(err);
  if (!r) return "lib" + std::to_string(ERR_GET_LIB(err)) + ":" + std::to_string(ERR_GET_REASON(err));
  std::string s = r;
  for (char& ch : s) {
    if (ch == ' ') ch = '_';
  }
  return s;
}

std::string verify_name(long v) {
  static const std::map<long, const char*> names = {
      {X509_V_OK, "OK"},
      {X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, "UNABLE_TO_GET_ISSUER_CERT"},
      {X509_V_ERR_CERT_HAS_EXPIRED, "CERT_HAS_EXPIRED"},
      {X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, "DEPTH_ZERO_SELF_SIGNED_CERT"},
      {X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN, "SELF_SIGNED_CERT_IN_CHAIN"},
      {X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, "UNABLE_TO_GET_ISSUER_CERT_LOCALLY"},
      {X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE, "UNABLE_TO_VERIFY_LEAF_SIGNATURE"},
      {X509_V_ERR_INVALID_PURPOSE, "INVALID_PURPOSE"},
      {X509_V_ERR_HOSTNAME_MISMATCH, "HOSTNAME_MISMATCH"},
      {X509_V_ERR_EE_KEY_TOO_SMALL, "EE_KEY_TOO_SMALL"},
      {X509_V_ERR_CA_KEY_TOO_SMALL, "CA_KEY_TOO_SMALL"},
      {X509_V_ERR_CA_MD_TOO_WEAK, "CA_MD_TOO_WEAK"},
      {X509_V_ERR_CERT_REVOKED, "CERT_REVOKED"},
  };
  auto it = names.find(v);
  return it != names.end() ? it->second : std::to_string(v);
}

std::string handshake_outcome(SSL* client, int ret) {
  long v = SSL_get_verify_result(client);
  if (v != X509_V_OK) return "handshake:verify=" + verify_name(v);
  unsigned long e = ERR_peek_error();
  if (e != 0) return "handshake:" + reason_name(e);
  return "handshake:" + ssl_error_name(SSL_get_error(client, ret));
}

// --- contexts ---------------------------------------------------------------------

Ctx server_ctx(const std::string& name) {
  Ctx ctx(SSL_CTX_new(TLS_server_method()));
  if (!ctx) die("SSL_CTX_new failed");
  // A lab server serves what it is given (RSA-1024, SHA-1): only the client's level is under test.
  SSL_CTX_set_security_level(ctx.get(), 0);
  std::string pem = cert_file(name + ".pem"), key = cert_file(name + ".key");
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), pem.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(ctx.get(), key.c_str(), SSL_FILETYPE_PEM) != 1) {
    die("cannot load " + pem + ": " + reason_name(ERR_peek_last_error()));
  }
  return ctx;
}

Ctx server_ctx(X509* cert, EVP_PKEY* key) {
  Ctx ctx(SSL_CTX_new(TLS_server_method()));
  SSL_CTX_set_security_level(ctx.get(), 0);  // as above
  if (SSL_CTX_use_certificate(ctx.get(), cert) != 1 || SSL_CTX_use_PrivateKey(ctx.get(), key) != 1) {
    die("cannot use minted certificate: " + reason_name(ERR_peek_last_error()));
  }
  return ctx;
}

namespace {
int staple_from_arg(SSL* ssl, void* arg) {
  const auto* der = static_cast<const std::string*>(arg);
  auto* copy = static_cast<unsigned char*>(OPENSSL_memdup(der->data(), der->size()));  // the SSL frees it
  if (copy == nullptr || SSL_set_tlsext_status_ocsp_resp(ssl, copy, static_cast<long>(der->size())) != 1)
    return SSL_TLSEXT_ERR_ALERT_FATAL;
  return SSL_TLSEXT_ERR_OK;
}
}  // namespace

Ctx server_ctx(const std::string& name, const std::string& ocsp_name) {
  Ctx ctx = server_ctx(name);
  static std::map<std::string, std::string> loaded;  // lives as long as any context using it
  std::string& der = loaded[ocsp_name];
  std::ifstream in(cert_file(ocsp_name), std::ios::binary);
  der.assign(std::istreambuf_iterator<char>(in), {});
  if (der.empty()) die("empty OCSP response " + ocsp_name);
  SSL_CTX_set_tlsext_status_cb(ctx.get(), staple_from_arg);
  SSL_CTX_set_tlsext_status_arg(ctx.get(), &der);
  return ctx;
}

std::string staple_status(SSL* client) {
  const unsigned char* p = nullptr;
  long len = SSL_get_tlsext_status_ocsp_resp(client, &p);
  if (p == nullptr || len <= 0) return "none";
  OCSP_RESPONSE* resp = d2i_OCSP_RESPONSE(nullptr, &p, len);
  OCSP_BASICRESP* basic = resp ? OCSP_response_get1_basic(resp) : nullptr;
  std::string status = "unreadable";
  if (basic != nullptr && OCSP_resp_count(basic) == 1) {
    int reason = 0;
    int s = OCSP_single_get0_status(OCSP_resp_get0(basic, 0), &reason, nullptr, nullptr, nullptr);
    status = s == V_OCSP_CERTSTATUS_GOOD ? "good" : s == V_OCSP_CERTSTATUS_REVOKED ? "revoked" : "unknown";
  }
  OCSP_BASICRESP_free(basic);
  OCSP_RESPONSE_free(resp);
  return status;
}

Ctx client_ctx() {
  Ctx ctx(SSL_CTX_new(TLS_client_method()));
  if (!ctx) die("SSL_CTX_new failed");
  std::string ca = cert_file("ca.pem");
  if (SSL_CTX_load_verify_locations(ctx.get(), ca.c_str(), nullptr) != 1) die("cannot load " + ca);
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  return ctx;
}

// --- the in-memory link -----------------------------------------------------------

namespace {
size_t move_bytes(BIO* from, BIO* to) {
  char buf[16384];
  size_t moved = 0;
  int n;
  while ((n = BIO_read(from, buf, sizeof buf)) > 0) {
    if (BIO_write(to, buf, n) != n) die("a link buffer overflowed");
    moved += static_cast<size_t>(n);
  }
  return moved;
}

void attach_memory_bios(SSL* ssl) {
  BIO* in = BIO_new(BIO_s_mem());
  BIO* out = BIO_new(BIO_s_mem());
  SSL_set_bio(ssl, in, out);  // an empty in-BIO reads as "retry": the default eof_return -1
}
}  // namespace

size_t Link::pump() {
  BIO* client_side = wire.get();  // a bounded client reads and writes through its pair
  size_t up = move_bytes(client_side ? client_side : SSL_get_wbio(client.get()), SSL_get_rbio(server.get()));
  return up + move_bytes(SSL_get_wbio(server.get()), client_side ? client_side : SSL_get_rbio(client.get()));
}

Link link(SSL_CTX* cctx, SSL_CTX* sctx, size_t client_buffer) {
  Link l;
  l.client.reset(SSL_new(cctx));
  l.server.reset(SSL_new(sctx));
  if (!l.client || !l.server) die("SSL_new failed");
  if (client_buffer) {
    BIO *inner = nullptr, *outer = nullptr;
    // The server's flights must fit whole on the way in: give that direction 1 MiB.
    if (BIO_new_bio_pair(&inner, client_buffer, &outer, 1 << 20) != 1) die("BIO_new_bio_pair failed");
    SSL_set_bio(l.client.get(), inner, inner);
    l.wire.reset(outer);
  } else {
    attach_memory_bios(l.client.get());
  }
  attach_memory_bios(l.server.get());
  SSL_set_connect_state(l.client.get());
  SSL_set_accept_state(l.server.get());
  return l;
}

namespace {
// One handshake step: 1 done, 0 wants I/O, -1 failed.
int step(SSL* ssl, bool& done, int& last) {
  if (done) return 1;
  ERR_clear_error();
  last = SSL_do_handshake(ssl);
  if (last == 1) {
    done = true;
    return 1;
  }
  int e = SSL_get_error(ssl, last);
  return (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) ? 0 : -1;
}
}  // namespace

std::string handshake(Link& l) {
  bool cdone = false, sdone = false, sfailed = false;
  int clast = 0, slast = 0;
  for (int round = 0; round < 64; ++round) {
    if (step(l.client.get(), cdone, clast) < 0) return handshake_outcome(l.client.get(), clast);
    if (!sfailed && step(l.server.get(), sdone, slast) < 0) sfailed = true;
    size_t moved = l.pump();
    if (cdone && sdone && moved == 0) return "ok";
    if (moved == 0 && round > 0 && !cdone) return "handshake:stalled";
  }
  return "handshake:stalled";
}

std::string handshake_for(SSL_CTX* cctx, SSL_CTX* sctx, const char* host, unsigned hostflags) {
  Link l = link(cctx, sctx);
  SSL_set_hostflags(l.client.get(), hostflags);
  SSL_set1_host(l.client.get(), host);
  SSL_set_tlsext_host_name(l.client.get(), host);
  return handshake(l);
}

std::string client_read_once(Link& l) {
  char buf[4096];
  ERR_clear_error();
  int n = SSL_read(l.client.get(), buf, sizeof buf);
  if (n > 0) return "data:" + std::to_string(n);
  return ssl_error_name(SSL_get_error(l.client.get(), n));
}

// --- sockets ----------------------------------------------------------------------

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

std::pair<Fd, Fd> tcp_pair(const std::function<void(int listener, int client)>& tune) {
  Fd listener(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  Fd client(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (listener.get() < 0 || client.get() < 0) die(std::string("socket: ") + strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(listener.get(), 1) != 0 ||
      getsockname(listener.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    die(std::string("listen on 127.0.0.1: ") + strerror(errno));
  }
  if (tune) tune(listener.get(), client.get());
  if (connect(client.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    die(std::string("connect: ") + strerror(errno));
  }
  Fd server(accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
  if (server.get() < 0) die(std::string("accept: ") + strerror(errno));
  return {std::move(client), std::move(server)};
}

bool handshake_both(SSL* client, SSL* server, int client_fd, int server_fd) {
  bool cdone = false, sdone = false;
  int clast = 0, slast = 0;
  double end = now_ms() + 5000;
  while (now_ms() < end) {
    if (step(client, cdone, clast) < 0 || step(server, sdone, slast) < 0) return false;
    if (cdone && sdone) return true;
    pollfd p[2] = {{client_fd, POLLIN, 0}, {server_fd, POLLIN, 0}};
    poll(p, 2, 100);
  }
  return false;
}

std::string read_some(SSL* ssl, size_t* bytes) {
  char buf[16384];
  ERR_clear_error();
  int n = SSL_read(ssl, buf, sizeof buf);
  if (n > 0) {
    *bytes += static_cast<size_t>(n);
    return "";
  }
  int e = SSL_get_error(ssl, n);
  if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return "";
  if (e == SSL_ERROR_SSL) return "SSL:" + reason_name(ERR_peek_error());
  if (e == SSL_ERROR_SYSCALL) {
    const char* name = errno ? strerrorname_np(errno) : nullptr;
    return std::string("SYSCALL:") + (name ? name : "0");
  }
  return ssl_error_name(e);
}

Drained read_to_end(SSL* ssl, int fd, double timeout_ms) {
  Drained d;
  double end = now_ms() + timeout_ms;
  while (now_ms() < end) {
    errno = 0;
    d.end = read_some(ssl, &d.bytes);
    if (!d.end.empty()) return d;
    if (SSL_pending(ssl) > 0) continue;
    pollfd p = {fd, POLLIN, 0};
    poll(&p, 1, 100);
  }
  d.end = "timeout";
  return d;
}

// --- processes --------------------------------------------------------------------

std::string in_child(const std::function<int()>& body) {
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) die(std::string("fork: ") + strerror(errno));
  if (pid == 0) {
    signal(SIGPIPE, SIG_DFL);
    int rc = body();
    std::fflush(nullptr);
    _exit(rc);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    const char* abbrev = sigabbrev_np(WTERMSIG(status));
    return std::string("killed:SIG") + (abbrev ? abbrev : std::to_string(WTERMSIG(status)).c_str());
  }
  return "exit:" + std::to_string(WEXITSTATUS(status));
}

// --- minted certificates ----------------------------------------------------------

namespace {
// The first PEM object of path that read_pem (PEM_read_bio_X509, PEM_read_bio_PrivateKey) finds;
// dies naming `what` when there is none.
template <typename T>
T* read_pem_file(const std::string& path, T* (*read_pem)(BIO*, T**, pem_password_cb*, void*), const char* what) {
  std::unique_ptr<BIO, Free> b(BIO_new_file(path.c_str(), "r"));
  if (!b) die("cannot read " + path);
  T* object = read_pem(b.get(), nullptr, nullptr, nullptr);
  if (!object) die(std::string("no ") + what + " in " + path);
  return object;
}

Cert load_cert(const std::string& path) { return Cert(read_pem_file(path, PEM_read_bio_X509, "certificate")); }

Key load_key(const std::string& path) { return Key(read_pem_file(path, PEM_read_bio_PrivateKey, "private key")); }

void add_ext(X509* issuer, X509* x, int nid, const std::string& value) {
  X509V3_CTX v3;
  X509V3_set_ctx(&v3, issuer, x, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &v3, nid, value.c_str());
  if (!ext) die("bad extension " + value);
  X509_add_ext(x, ext, -1);
  X509_EXTENSION_free(ext);
}
}  // namespace

Minted mint_leaf(const std::vector<std::string>& dns_names) {
  static Cert ca = load_cert(cert_file("ca.pem"));
  static Key ca_key = load_key(cert_file("ca.key"));
  Minted m;
  m.key.reset(EVP_EC_gen("P-256"));
  m.cert.reset(X509_new());
  X509* x = m.cert.get();
  if (!m.key || !x) die("key generation failed");
  X509_set_version(x, X509_VERSION_3);
  unsigned char serial[8];
  RAND_bytes(serial, sizeof serial);
  serial[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(x), -86400);
  X509_gmtime_adj(X509_getm_notAfter(x), 30L * 86400);
  X509_set_issuer_name(x, X509_get_subject_name(ca.get()));
  X509_set_pubkey(x, m.key.get());
  std::string san;
  for (const auto& d : dns_names) san += (san.empty() ? "DNS:" : ",DNS:") + d;
  add_ext(ca.get(), x, NID_basic_constraints, "critical,CA:FALSE");
  add_ext(ca.get(), x, NID_ext_key_usage, "serverAuth");
  add_ext(ca.get(), x, NID_authority_key_identifier, "keyid");
  add_ext(ca.get(), x, NID_subject_alt_name, "critical," + san);  // no subject: the SAN is critical
  if (X509_sign(x, ca_key.get(), EVP_sha256()) <= 0) die("cannot sign: " + reason_name(ERR_peek_last_error()));
  return m;
}

double now_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

}  // namespace gap
