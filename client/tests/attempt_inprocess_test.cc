// A real Attempt against a server SSL in the same process, through socketpairs and a relay
// that lets one byte through per turn, each way: the client only ever finds one byte to read,
// so every record is assembled across many WANT_READs (BoringSSL's async_bio.cc, "to
// maximally stress the state machine"). Crossed over transport (bio, fd) x TLS 1.2 / 1.3.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/sockios.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <tuple>

#include "attempt.h"
#include "deadline_queue.h"
#include "session_cache.h"

using namespace tlsnb;

namespace {

constexpr const char* server_name = "tlslab.test";
constexpr long max_turns = 200000;  // a few thousand are needed; more means the attempt is stuck

struct KeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
  void operator()(X509* cert) const { X509_free(cert); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, KeyFree>;
using CertPtr = std::unique_ptr<X509, KeyFree>;

// A P-256 key and a self-signed certificate for server_name (SAN), its own trust anchor.
struct Identity {
  KeyPtr key;
  CertPtr cert;
};

bool add_extension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) return false;
  bool added = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return added;
}

Identity make_identity() {
  Identity id;
  id.key.reset(EVP_EC_gen("P-256"));
  id.cert.reset(X509_new());
  X509* cert = id.cert.get();
  if (!id.key || !cert) return {};
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 86400);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(server_name), -1, -1, 0);
  X509_set_issuer_name(cert, name);
  X509_set_pubkey(cert, id.key.get());
  std::string san = std::string("DNS:") + server_name;
  if (!add_extension(cert, NID_basic_constraints, "critical,CA:TRUE") ||
      !add_extension(cert, NID_subject_alt_name, san.c_str()) || X509_sign(cert, id.key.get(), EVP_sha256()) == 0)
    return {};
  return id;
}

// A temp folder holding ca.pem, removed with it.
class TrustFile {
 public:
  explicit TrustFile(X509* cert) {
    char pattern[] = "/tmp/tlsnb-inprocess-XXXXXX";
    if (mkdtemp(pattern) == nullptr) return;
    dir_ = pattern;
    path_ = dir_ + "/ca.pem";
    FILE* f = std::fopen(path_.c_str(), "w");
    if (f == nullptr) return;
    written_ = PEM_write_X509(f, cert) == 1;
    written_ = std::fclose(f) == 0 && written_;
  }
  ~TrustFile() {
    if (!path_.empty()) ::unlink(path_.c_str());
    if (!dir_.empty()) ::rmdir(dir_.c_str());
  }
  bool written() const { return written_; }
  const std::string& path() const { return path_; }

 private:
  std::string dir_, path_;
  bool written_ = false;
};

// A connected pair of non-blocking stream sockets; false when none could be made.
bool socket_pair(int fds[2]) {
  return socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0;
}

// Moves bytes from one socket to another, at most one a turn, and only once the reader has
// taken the last one (SIOCOUTQ 0): the reader never finds two bytes waiting. The writer's end
// of the stream becomes a FIN once everything before it was delivered.
class OneByteWay {
 public:
  OneByteWay(int from, int to) : from_(from), to_(to) {}

  void turn() {
    pull();
    int unread = 0;
    if (!held_.empty() && ioctl(to_, SIOCOUTQ, &unread) == 0 && unread == 0) {
      if (send(to_, held_.data(), 1, MSG_NOSIGNAL) == 1) {
        held_.erase(0, 1);
        ++delivered_;
      } else if (errno != EAGAIN) {
        held_.clear();  // the reader is gone
      }
    }
    if (ended_ && held_.empty() && !shut_) shut_ = shutdown(to_, SHUT_WR) == 0;
  }
  long delivered() const { return delivered_; }

 private:
  void pull() {
    char buf[4096];
    while (!ended_) {
      ssize_t n = recv(from_, buf, sizeof buf, 0);
      if (n > 0) held_.append(buf, static_cast<size_t>(n));
      else if (n == 0 || errno != EAGAIN) ended_ = true;
      else return;
    }
  }

  int from_, to_;
  std::string held_;
  bool ended_ = false, shut_ = false;
  long delivered_ = 0;
};

// What the server does wrong, if anything.
enum class Misbehaviour {
  none,
  close_mid_response,  // the second response stops 16 bytes into its body: no close_notify, a FIN
  renegotiate,         // after the first response a TLS 1.2 HelloRequest; no answer until renegotiated
};

// The server: an SSL on its socket that answers each GET with 200 and a 64-byte body.
class Server {
 public:
  Server(SSL_CTX* ctx, int fd, Misbehaviour bug) : fd_(fd), bug_(bug) {
    ssl_.reset(SSL_new(ctx));
    SSL_set_fd(ssl_.get(), fd_.get());
    SSL_set_accept_state(ssl_.get());
  }

  void turn() {
    if (!ssl_) return;
    ERR_clear_error();
    if (!SSL_is_init_finished(ssl_.get())) {
      end_unless_waiting(SSL_do_handshake(ssl_.get()));
    } else if (!out_.empty() && SSL_renegotiate_pending(ssl_.get()) != 1) {  // nothing answered mid-renegotiation
      write_response();
    } else {
      read_request();
    }
  }

 private:
  void read_request() {
    char buf[4096];
    int n = SSL_read(ssl_.get(), buf, sizeof buf);
    if (n <= 0) return end_unless_waiting(n);
    in_.append(buf, static_cast<size_t>(n));
    size_t end = in_.find("\r\n\r\n");
    if (end == std::string::npos) return;
    in_.erase(0, end + 4);
    ++requests_;
    out_ = "HTTP/1.1 200 OK\r\nContent-Length: 64\r\n\r\n" + std::string(64, 'x');
    if (bug_ == Misbehaviour::close_mid_response && requests_ == 2) out_.resize(out_.size() - 48);
  }

  void write_response() {
    int n = SSL_write(ssl_.get(), out_.data(), static_cast<int>(out_.size()));
    if (n <= 0) return end_unless_waiting(n);
    out_.erase(0, static_cast<size_t>(n));
    if (out_.empty() && bug_ == Misbehaviour::close_mid_response && requests_ == 2) close_without_notify();
    if (out_.empty() && bug_ == Misbehaviour::renegotiate && requests_ == 1 && SSL_renegotiate(ssl_.get()) == 1)
      end_unless_waiting(SSL_do_handshake(ssl_.get()));
  }

  void end_unless_waiting(int result) {
    int err = SSL_get_error(ssl_.get(), result);
    if (result <= 0 && err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) close_without_notify();
  }

  void close_without_notify() {
    ssl_.reset();
    fd_.reset();
  }

  Descriptor fd_;
  SslPtr ssl_;
  Misbehaviour bug_;
  std::string in_, out_;
  int requests_ = 0;
};

using Crossing = std::tuple<TransportKind, int>;  // transport, TLS version

class AttemptInProcess : public testing::TestWithParam<Crossing> {
 protected:
  static void SetUpTestSuite() {
    identity_ = std::make_unique<Identity>(make_identity());
    trust_ = std::make_unique<TrustFile>(identity_->cert.get());
  }
  static void TearDownTestSuite() {
    trust_.reset();
    identity_.reset();
  }

  void SetUp() override {
    ASSERT_TRUE(identity_->key && identity_->cert) << "the test identity could not be made";
    ASSERT_TRUE(trust_->written()) << "the trust file could not be written";
    config_.target = "127.0.0.1";
    config_.port = 443;
    config_.name = server_name;
    config_.cafile = trust_->path();
    config_.transport = std::get<0>(GetParam());
    config_.tls_max = std::get<1>(GetParam());
    config_.requests = 2;
  }

  SslCtxPtr server_context() const {
    SslCtxPtr ctx(SSL_CTX_new(TLS_server_method()));
    int version = std::get<1>(GetParam());
    SSL_CTX_set_min_proto_version(ctx.get(), version);
    SSL_CTX_set_max_proto_version(ctx.get(), version);
    SSL_CTX_use_certificate(ctx.get(), identity_->cert.get());
    SSL_CTX_use_PrivateKey(ctx.get(), identity_->key.get());
    return ctx;
  }

  // Runs one attempt against the in-process server, one byte per turn each way, to its outcome.
  void run(Misbehaviour bug) {
    ContextResult client = make_context(config_, nullptr);
    ASSERT_TRUE(client.ctx) << client.error;
    SslCtxPtr server_ctx = server_context();
    Descriptor epoll_fd(epoll_create1(EPOLL_CLOEXEC));
    ASSERT_GE(epoll_fd.get(), 0);
    int client_pair[2], server_pair[2];  // [0] the peer's end, [1] the relay's
    ASSERT_TRUE(socket_pair(client_pair));
    Descriptor relay_client(client_pair[1]);
    ASSERT_TRUE(socket_pair(server_pair));
    Descriptor relay_server(server_pair[1]);
    Server server(server_ctx.get(), server_pair[0], bug);
    OneByteWay to_server(relay_client.get(), relay_server.get());
    OneByteWay to_client(relay_server.get(), relay_client.get());

    SessionCache sessions;
    DeadlineQueue timers;
    RunState shared;
    shared.config = &config_;
    shared.ctx = client.ctx.get();
    shared.sessions = &sessions;
    shared.request = std::string("GET / HTTP/1.1\r\nHost: ") + server_name + "\r\nConnection: keep-alive\r\n\r\n";
    shared.epoll_fd = epoll_fd.get();
    shared.timers = &timers;
    Attempt attempt(0, shared);
    attempt.adopt(client_pair[0], "socketpair", 3);  // slot 3: the record names the slot it was given

    for (turns_ = 0; !attempt.done() && turns_ < max_turns; ++turns_) {
      to_server.turn();
      server.turn();
      to_client.turn();
      epoll_event events[4];
      int n = epoll_wait(epoll_fd.get(), events, 4, 0);
      for (int i = 0; i < n; ++i) {
        static_cast<Watcher*>(events[i].data.ptr)->on_event(events[i].events);
        ++wakeups_;
      }
    }
    ASSERT_TRUE(attempt.done()) << "no outcome after " << turns_ << " turns";
    delivered_ = to_client.delivered();
    outcome_ = attempt.outcome();
    http_status_ = attempt.http_status();
    requests_done_ = attempt.requests_done();
    tls_version_ = attempt.tls_version();
    open_fds_ = shared.open_fds;
    AttemptRecord record = attempt.take_record();
    addr_ = record.addr;
    slot_ = record.slot;
  }

  static std::unique_ptr<Identity> identity_;
  static std::unique_ptr<TrustFile> trust_;
  RunConfig config_;
  long turns_ = 0, wakeups_ = 0, delivered_ = 0;
  Outcome outcome_;
  int http_status_ = 0;
  long requests_done_ = 0;
  std::string tls_version_;
  long open_fds_ = -1;
  std::string addr_;
  int slot_ = -1;
};

std::unique_ptr<Identity> AttemptInProcess::identity_;
std::unique_ptr<TrustFile> AttemptInProcess::trust_;

std::string crossing_name(const testing::TestParamInfo<Crossing>& info) {
  std::string transport = std::get<0>(info.param) == TransportKind::fd ? "fd" : "bio";
  return transport + (std::get<1>(info.param) == TLS1_3_VERSION ? "_tls13" : "_tls12");
}

}  // namespace

/* Verified, two keep-alive requests, every byte of the server's alone: ok, both responses whole */
TEST_P(AttemptInProcess, OneByteAtATimeEndsOkWithEveryResponseComplete) {
  ASSERT_NO_FATAL_FAILURE(run(Misbehaviour::none));
  EXPECT_EQ(outcome_.key(), "ok/0") << outcome_.text;
  EXPECT_EQ(requests_done_, 2);
  EXPECT_EQ(http_status_, 200);
  EXPECT_EQ(tls_version_, std::get<1>(GetParam()) == TLS1_3_VERSION ? "TLSv1.3" : "TLSv1.2");
  // The client woke for each byte it got: no read ever found two.
  EXPECT_GT(delivered_, 500);
  EXPECT_GE(wakeups_, delivered_);
  // The ended attempt closed its socket and counted it closed; its record names the peer it was given.
  EXPECT_EQ(open_fds_, 0);
  EXPECT_EQ(addr_, "socketpair");
  EXPECT_EQ(slot_, 3);
}

/* The server stops 16 bytes into the second body and closes without close_notify: a truncation */
TEST_P(AttemptInProcess, CloseWithoutCloseNotifyMidResponseIsReadMinus1) {
  ASSERT_NO_FATAL_FAILURE(run(Misbehaviour::close_mid_response));
  EXPECT_EQ(outcome_.key(), "read/-1") << outcome_.text;
  EXPECT_EQ(requests_done_, 1);
  EXPECT_EQ(open_fds_, 0);
}

/* The certificate names tlslab.test, the client asks for other.test: hostname mismatch at the leaf */
TEST_P(AttemptInProcess, WrongNameIsHandshake62AtDepth0) {
  config_.name = "other.test";
  ASSERT_NO_FATAL_FAILURE(run(Misbehaviour::none));
  EXPECT_EQ(outcome_.key(), "handshake/62") << outcome_.text;
  EXPECT_EQ(outcome_.verify_depth, 0);
}

/* The control: the same wrong name without verification completes */
TEST_P(AttemptInProcess, WrongNameWithoutVerificationIsOk) {
  config_.name = "other.test";
  config_.verify = false;
  ASSERT_NO_FATAL_FAILURE(run(Misbehaviour::none));
  EXPECT_EQ(outcome_.key(), "ok/0") << outcome_.text;
  EXPECT_EQ(requests_done_, 2);
}

/* The server asks to renegotiate (TLS 1.2 HelloRequest) after the first response and answers
   nothing more until it has: tlsnb refuses (SSL_OP_NO_RENEGOTIATION: a no_renegotiation warning),
   the server's OpenSSL ends the connection with a handshake_failure alert, and the attempt ends
   in read without its second response. OpenSSL's default renegotiates inside SSL_read: ok, both */
TEST_P(AttemptInProcess, ServerRenegotiationIsRefused) {
  if (std::get<1>(GetParam()) == TLS1_3_VERSION) GTEST_SKIP() << "TLS 1.3 has no renegotiation";
  ASSERT_NO_FATAL_FAILURE(run(Misbehaviour::renegotiate));
  EXPECT_EQ(outcome_.key(), "read/" + std::to_string(ERR_PACK(ERR_LIB_SSL, 0, SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE)))
      << outcome_.text;
  EXPECT_EQ(requests_done_, 1);
}

INSTANTIATE_TEST_SUITE_P(Crossed, AttemptInProcess,
                         testing::Combine(testing::Values(TransportKind::bio, TransportKind::fd),
                                          testing::Values(TLS1_2_VERSION, TLS1_3_VERSION)),
                         crossing_name);

/* adopt() of no descriptor ends the attempt as setup/3 and counts no descriptor open */
TEST(AttemptAdopt, ANegativeDescriptorIsSetup3) {
  RunConfig config;
  RunState shared;
  shared.config = &config;
  Attempt attempt(0, shared);
  attempt.adopt(-1, "nothing", 0);
  EXPECT_TRUE(attempt.done());
  EXPECT_EQ(attempt.outcome().key(), "setup/3") << attempt.outcome().text;
  EXPECT_NE(attempt.outcome().text.find(": Bad file descriptor"), std::string::npos) << attempt.outcome().text;
  EXPECT_EQ(shared.open_fds, 0);
}

// What an adopted attempt needs around it: a client SSL_CTX, an epoll set and the run's shared state.
struct AdoptBench {
  AdoptBench() {
    config.name = server_name;
    shared.config = &config;
    shared.ctx = ctx.get();
    shared.sessions = &sessions;
    shared.epoll_fd = epoll_fd.get();
  }
  Descriptor epoll_fd{epoll_create1(EPOLL_CLOEXEC)};
  std::unique_ptr<SSL_CTX, void (*)(SSL_CTX*)> ctx{SSL_CTX_new(TLS_client_method()), SSL_CTX_free};
  RunConfig config;
  SessionCache sessions;
  RunState shared;
};

/* An attempt destroyed before it ends (a loop that stops mid-run) closes the socket it adopted, counts
   it closed, and had made it non-blocking */
TEST(AttemptAdopt, DestroyedUnfinishedClosesItsDescriptor) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);  // blocking, as a caller may hand it
  Descriptor peer(fds[1]);
  AdoptBench bench;
  ASSERT_TRUE(bench.ctx);
  RunState& shared = bench.shared;
  {
    Attempt attempt(0, shared);
    attempt.adopt(fds[0], "socketpair", 0);
    ASSERT_FALSE(attempt.done()) << attempt.outcome().text;
    EXPECT_EQ(shared.open_fds, 1);
    EXPECT_NE(fcntl(fds[0], F_GETFL) & O_NONBLOCK, 0);
  }
  EXPECT_EQ(shared.open_fds, 0);
  EXPECT_EQ(fcntl(fds[0], F_GETFD), -1);  // closed
}

/* inetd and socket activation hand the connection over as descriptor 0: adopted, watched, ended and
   closed like any other (a `> 0` taken for "has a socket" would lose it) */
TEST(AttemptAdopt, DescriptorZeroIsASocketLikeAnyOther) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  Descriptor saved_stdin(dup(0));
  ASSERT_EQ(dup2(fds[0], 0), 0);
  close(fds[0]);
  Descriptor peer(fds[1]);
  AdoptBench bench;
  ASSERT_TRUE(bench.ctx);
  RunState& shared = bench.shared;
  Attempt attempt(0, shared);
  attempt.adopt(0, "stdin", 0);
  EXPECT_EQ(shared.open_fds, 1);
  peer = Descriptor();  // the peer goes away before any TLS byte: the handshake's end, handshake/-1
  for (int turn = 0; turn < 100 && !attempt.done(); ++turn) {
    epoll_event events[4];
    int n = epoll_wait(bench.epoll_fd.get(), events, 4, 10);
    for (int i = 0; i < n; ++i) static_cast<Watcher*>(events[i].data.ptr)->on_event(events[i].events);
  }
  EXPECT_TRUE(attempt.done());
  EXPECT_EQ(attempt.outcome().key(), "handshake/-1") << attempt.outcome().text;
  EXPECT_EQ(shared.open_fds, 0);
  EXPECT_EQ(fcntl(0, F_GETFD), -1);  // closed by the attempt
  {  // and one destroyed before it ends
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    ASSERT_EQ(fds[0], 0);  // the lowest free descriptor: 0, closed just now
    Descriptor peer2(fds[1]);
    Attempt unfinished(1, shared);
    unfinished.adopt(0, "stdin", 0);
    ASSERT_FALSE(unfinished.done()) << unfinished.outcome().text;
    EXPECT_EQ(shared.open_fds, 1);
  }
  EXPECT_EQ(shared.open_fds, 0);
  EXPECT_EQ(fcntl(0, F_GETFD), -1);
  dup2(saved_stdin.get(), 0);
}
