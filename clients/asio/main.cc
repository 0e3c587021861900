// tlsnb-asio: a client under test for tlslab on Boost.Asio 1.74 (clients/README.md contract):
// one io_context, one thread, every attempt an ssl::stream<tcp::socket> driven by Asio's async
// operations (async_connect, async_handshake, async_write, async_read_some, async_shutdown) with a
// steady_timer as its deadline; ssl::host_name_verification checks the name. What Asio has no API
// for is said (exit 89), never reached through native_handle(), except the SNI, which every Asio
// TLS client sets with SSL_set_tlsext_host_name (Asio has no call for it either): README.md.
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <cstdio>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "client/http_request.h"
#include "client/http_response.h"
#include "client/outcome.h"
#include "client/process_figures.h"
#include "clients/contract/adapter_run.h"
#include "clients/contract/attempt_base.h"
#include "clients/contract/contract_options.h"
#include "clients/contract/contract_report.h"

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using tlsnb::make_outcome;
using tlsnb::Outcome;
using tlsnb::Stage;
namespace details = tlsnb::details;

namespace {

constexpr const char* program = "tlsnb-asio";

const char* usage() {
  return R"(usage: tlsnb-asio [options] TARGET:PORT

A TLS client on Boost.Asio 1.74: one io_context, one thread, each attempt an
ssl::stream<tcp::socket> (OpenSSL underneath) driven by async operations and a steady_timer.
TARGET is an IPv4 literal or a name (a name needs --connect). The contract's flags
(clients/README.md) and these notes:

  --name NAME           ssl::host_name_verification(NAME); the SNI by SSL_set_tlsext_host_name
                        (no SNI for an IP literal)
  --no-verify-name      no host_name_verification: verify_peer alone, the chain verified, no name
  --cafile PATH         ssl::context::load_verify_file; without it set_default_verify_paths
  --system-trust        also set_default_verify_paths
  --cert FILE --key FILE
                        use_certificate_chain_file, use_private_key_file (the pair checked)
  --transport bio       accepted: Asio's TLS is OpenSSL over a BIO pair it moves itself
  --hold-ms MS          a steady_timer after the handshake, reading (and dropping) meanwhile

Not available (exit 89): --transport fd, --verify-depth, --resume, --partial-chain, --crl, --crl-all,
--ocsp-staple, --pin-sha256 (Asio has no API for them), --ns and the resolver's flags.
Exit: 0 every attempt ok, 1 any failed, 2 bad usage or unusable configuration, 89 not offered.
)";
}

contract::ParseResult parse(const std::vector<std::string>& args) {
  static const contract::Lacks lacks = {
      {{"--verify-depth", true, "--verify-depth: ssl::context::set_verify_depth exists; this adapter does not set it (not built)"},
       {"--resume", false, "--resume: Asio has no session API (ssl::stream offers no SSL_SESSION); not reached through native_handle"},
       {"--partial-chain", false, "--partial-chain: Asio's ssl::context has no verify-flag API"},
       {"--crl", true, "--crl: Asio's ssl::context loads no CRL and sets no CRL flag"},
       {"--crl-all", false, "--crl-all: Asio's ssl::context loads no CRL and sets no CRL flag"},
       {"--ocsp-staple", true, "--ocsp-staple: Asio has no OCSP API"},
       {"--pin-sha256", true, "--pin-sha256: Asio has no pin option; a verify callback for it is not written here"},
       {"--ns", true, "--ns: this client has no resolver (dial with --connect)"},
       {"--dns-udp", false, "--dns-udp: this client has no resolver"},
       {"--dns-timeout-ms", true, "--dns-timeout-ms: this client has no resolver"},
       {"--allow-private", false, "--allow-private: this client has no resolver"}},
      "--transport fd: Asio's ssl::stream moves the bytes between OpenSSL's BIO pair and the socket itself",
      "(this client never resolves a name)"};
  return contract::parse_options(args, lacks);
}

// OpenSSL's packed error as Asio gives it (ssl category: ERR_get_error's value); the library's
// reason only (ERR_PACK(lib, 0, reason)), as tlsnb reports it.
long packed_reason(unsigned long e) {
  return static_cast<long>((static_cast<unsigned long>(ERR_GET_LIB(e)) << 23) | static_cast<unsigned long>(ERR_GET_REASON(e)));
}

struct Shared {
  const contract::Options* options = nullptr;
  ssl::context* ctx = nullptr;
  std::string request;
  tcp::endpoint endpoint;
  contract::Report* report = nullptr;
  tlsnb::RunTotals stats;
  long next = 0;
  long open_sockets = 0;
  long own_fds = 0;   // the io_context's own descriptors (its epoll, eventfd, timerfd), counted at start
  long peak_fds = 0;
};

class Attempt : public std::enable_shared_from_this<Attempt> {
 public:
  Attempt(asio::io_context& io, Shared& shared, long conn, int slot)
      : shared_(shared), conn_(conn), slot_(slot), stream_(io, *shared.ctx), deadline_(io), hold_(io),
        started_(tlsnb::monotonic_ms_precise()) {}

  void start(std::function<void()> done) {
    done_ = std::move(done);
    const contract::Options& o = *shared_.options;
    auto self = shared_from_this();
    deadline_.expires_after(std::chrono::milliseconds(o.deadline_ms));
    deadline_.async_wait([self](const error_code& ec) {
      if (!ec) self->on_deadline();
    });
    // --no-verify-name: verify_peer alone (the context's), no host_name_verification; SNI below as ever
    if (o.verify && o.verify_name) stream_.set_verify_callback(ssl::host_name_verification(o.name));
    // OpenSSL refuses a server name over 255 bytes (TLSEXT_MAXLEN_host_name): setup/6, no connection
    if (!o.name_is_ip() && SSL_set_tlsext_host_name(stream_.native_handle(), o.name.c_str()) != 1)
      return finish(make_outcome(Stage::setup, static_cast<long>(tlsnb::SetupFailure::sni), "SSL_set_tlsext_host_name refused the name"));
    error_code ec;
    stream_.lowest_layer().open(tcp::v4(), ec);
    if (ec) return finish(make_outcome(Stage::setup, 3, "socket: " + ec.message()));
    ++shared_.open_sockets;
    opened_ = true;
    shared_.peak_fds = std::max(shared_.peak_fds, shared_.open_sockets + shared_.own_fds);
    stage_ = Stage::connect;
    stream_.lowest_layer().async_connect(shared_.endpoint, [self](const error_code& e) { self->on_connect(e); });
  }

 private:
  void on_connect(const error_code& ec) {
    if (over_) return;
    if (ec) {
      // a reset needs an established connection: the peer closed it before the handshake
      if (ec == asio::error::connection_reset || ec == asio::error::broken_pipe)
        return finish(make_outcome(Stage::handshake, details::peer_closed, "peer closed before the handshake: " + ec.message()));
      return finish(make_outcome(Stage::connect, ec.value(), ec.message()));
    }
    stage_ = Stage::handshake;
    auto self = shared_from_this();
    stream_.async_handshake(ssl::stream_base::client, [self](const error_code& e) { self->on_handshake(e); });
  }

  void on_handshake(const error_code& ec) {
    if (over_) return;
    if (ec) return fail(ec);
    SSL* s = stream_.native_handle();
    tls_version_ = SSL_get_version(s);
    if (const char* c = SSL_get_cipher_name(s)) cipher_ = c;
    const contract::Options& o = *shared_.options;
    if (o.hold_ms > 0) {
      stage_ = Stage::read;  // holding is reading (and dropping) what arrives, as tlsnb
      auto self = shared_from_this();
      hold_.expires_after(std::chrono::milliseconds(o.hold_ms));
      hold_.async_wait([self](const error_code& e) {
        if (!e && !self->over_) {
          self->holding_ = false;
          self->next_request();
        }
      });
      holding_ = true;
      read_more();
      return;
    }
    next_request();
  }

  void next_request() {
    if (requests_done_ >= shared_.options->requests) return done_ok();
    stage_ = Stage::write;
    auto self = shared_from_this();
    asio::async_write(stream_, asio::buffer(shared_.request), [self](const error_code& e, size_t) {
      if (self->over_) return;
      if (e) return self->fail(e);
      self->stage_ = Stage::read;
      self->response_.reset();
      if (!self->reading_) self->read_more();
    });
  }

  void read_more() {
    reading_ = true;
    auto self = shared_from_this();
    stream_.async_read_some(asio::buffer(buf_), [self](const error_code& e, size_t n) {
      self->reading_ = false;
      if (self->over_) return;
      if (e) return self->fail(e);
      self->take(n);
    });
  }

  void take(size_t n) {
    if (holding_ || stage_ == Stage::write) {  // dropped while holding; kept (as the next read's) while writing
      if (stage_ == Stage::write) early_.append(buf_, n);
      if (holding_) read_more();
      return;
    }
    const auto* data = reinterpret_cast<const uint8_t*>(buf_);
    if (!early_.empty()) {
      std::string carried;
      carried.swap(early_);
      carried.append(buf_, n);
      return feed(reinterpret_cast<const uint8_t*>(carried.data()), carried.size());
    }
    feed(data, n);
  }

  void feed(const uint8_t* data, size_t len) {
    response_.feed(data, len);
    if (auto refused = contract::refused_response(response_)) return finish(*refused);
    if (response_.state() != tlsnb::HttpResponse::State::complete) return read_more();
    http_status_ = response_.status();
    ++requests_done_;
    next_request();
  }

  // Every response is in: ok. close_notify goes out with async_shutdown, which would also wait for
  // the peer's; the attempt does not wait (tlsnb's rule): the socket is closed 200 ms on at most.
  void done_ok() {
    Outcome ok = make_outcome(Stage::ok, 0, "ok");
    auto self = shared_from_this();
    closing_ = true;
    hold_.expires_after(std::chrono::milliseconds(200));
    hold_.async_wait([self](const error_code&) { self->close(); });
    stream_.async_shutdown([self](const error_code&) { self->close(); });
    finish(ok, false);
  }

  void fail(const error_code& ec) {
    if (closing_) return;
    finish(outcome_of(ec));
  }

  Outcome outcome_of(const error_code& ec) {
    Stage stage = stage_;
    if (ec == ssl::error::stream_truncated) return make_outcome(stage, details::peer_closed, "stream truncated: " + ec.message());
    if (ec == asio::error::eof)
      return make_outcome(stage, stage == Stage::handshake ? details::peer_closed : details::early_close_notify, ec.message());
    if (ec.category() == asio::error::get_ssl_category()) {
      auto e = static_cast<unsigned long>(ec.value());
      long verify = SSL_get_verify_result(stream_.native_handle());
      // a failed verification: OpenSSL's verify result names it (Asio's error is the first queued,
      // an EVP error for a bad signature, not CERTIFICATE_VERIFY_FAILED)
      if (stage == Stage::handshake && verify != X509_V_OK)
        return make_outcome(stage, verify, ec.message() + ": " + X509_verify_cert_error_string(verify));
      return make_outcome(stage, packed_reason(e), ec.message());
    }
    if (stage == Stage::handshake && (ec == asio::error::connection_reset || ec == asio::error::broken_pipe))
      return make_outcome(stage, details::peer_closed, ec.message());
    return make_outcome(stage, ec.value(), ec.message());
  }

  void on_deadline() {
    if (over_) return;
    if (closing_) return close();
    finish(make_outcome(Stage::deadline, static_cast<long>(stage_), std::string("deadline during ") + tlsnb::stage_name(stage_)));
  }

  void finish(Outcome outcome, bool close_now = true) {
    if (over_) return;
    over_ = true;
    deadline_.cancel();
    tlsnb::AttemptRecord r;
    r.conn = static_cast<uint64_t>(conn_);
    r.slot = slot_;
    r.outcome = outcome;
    r.addr = shared_.endpoint.address().to_string() + ":" + std::to_string(shared_.endpoint.port());
    r.ms = tlsnb::monotonic_ms_precise() - started_;
    r.tls_version = tls_version_;
    r.cipher = cipher_;
    r.http_status = http_status_;
    r.requests_done = requests_done_;
    shared_.report->attempt(r);
    ++shared_.stats.count;
    if (outcome.ok()) ++shared_.stats.ok;
    else ++shared_.stats.failed;
    if (close_now) close();
  }

  // The socket closed (once), and the slot free for its next attempt.
  void close() {
    if (closed_) return;
    closed_ = true;
    hold_.cancel();
    deadline_.cancel();
    error_code ignored;
    stream_.lowest_layer().close(ignored);
    if (opened_) --shared_.open_sockets;
    auto done = std::move(done_);
    if (done) asio::post(stream_.get_executor(), std::move(done));
  }

  Shared& shared_;
  long conn_;
  int slot_;
  ssl::stream<tcp::socket> stream_;
  asio::steady_timer deadline_;
  asio::steady_timer hold_;
  double started_;
  std::function<void()> done_;
  Stage stage_ = Stage::connect;
  bool over_ = false, closing_ = false, closed_ = false, opened_ = false, holding_ = false, reading_ = false;
  char buf_[16384];
  std::string early_;
  tlsnb::HttpResponse response_;
  long requests_done_ = 0;
  int http_status_ = 0;
  std::string tls_version_, cipher_;
};

void run_slot(asio::io_context& io, Shared& shared, int slot) {
  if (shared.next >= shared.options->count) return;
  long conn = shared.next++;
  auto attempt = std::make_shared<Attempt>(io, shared, conn, slot);
  attempt->start([&io, &shared, slot] { run_slot(io, shared, slot); });
}

// The user's files: one line, exit 2, as tlsnb's words say it.
std::string configure(ssl::context& ctx, const contract::Options& o) {
  error_code ec;
  ctx.set_options(ssl::context::no_sslv2 | ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  if (o.tls_max == 12) ctx.set_options(ssl::context::no_tlsv1_3);
  if (!o.verify) {
    ctx.set_verify_mode(ssl::verify_none);
    return "";
  }
  ctx.set_verify_mode(ssl::verify_peer);
  if (!o.cafile.empty()) {
    if (std::string p = contract::file_problem(o.cafile); !p.empty()) return "--cafile: " + p;
    if (ctx.load_verify_file(o.cafile, ec); ec) return "--cafile: no PEM certificate in '" + o.cafile + "' (" + ec.message() + ")";
  }
  if ((o.cafile.empty() || o.system_trust) && (ctx.set_default_verify_paths(ec), ec))
    return "the system trust store could not be loaded: " + ec.message();
  if (!o.client_cert.empty()) {
    if (std::string p = contract::identity_files_problem(o); !p.empty()) return p;
    if (ctx.use_certificate_chain_file(o.client_cert, ec); ec)
      return "--cert: no PEM certificate could be loaded from '" + o.client_cert + "'";
    if (ctx.use_private_key_file(o.client_key, ssl::context::pem, ec); ec)
      return ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH || ec.message().find("mismatch") != std::string::npos
                 ? "--key: '" + o.client_key + "' does not match the certificate of --cert '" + o.client_cert + "'"
                 : "--key: no PEM private key could be loaded from '" + o.client_key + "'";
    if (SSL_CTX_check_private_key(ctx.native_handle()) != 1)  // Asio has no call for the check
      return "--key: '" + o.client_key + "' does not match the certificate of --cert '" + o.client_cert + "'";
  }
  return "";
}

int run(const std::vector<std::string>& args) {
  contract::ParseResult parsed = parse(args);
  if (int code = 0; !contract::ready_to_run(parsed, program, usage(), &code)) return code;
  const contract::Options& o = *parsed.options;
  contract::apply_sigpipe(o.sigpipe);
  ssl::context ctx(ssl::context::tls_client);
  if (std::string why = configure(ctx, o); !why.empty()) {
    std::fprintf(stderr, "%s: %s\n", program, why.c_str());
    return contract::exit_usage;
  }
  long inherited = tlsnb::count_open_fds();
  asio::io_context io(1);
  // Asio makes its reactor (an epoll descriptor, an eventfd to wake it, a timerfd) at its first
  // timer or socket: a timer made here makes it before the count, so peak_fds holds all three
  asio::steady_timer reactor_made(io);
  contract::Report report(o.json);
  Shared shared;
  shared.own_fds = std::max(0L, tlsnb::count_open_fds() - inherited);
  shared.peak_fds = shared.own_fds;
  shared.options = &o;
  shared.ctx = &ctx;
  shared.report = &report;
  shared.request = tlsnb::http_request(o.name, o.body, o.seed);
  shared.endpoint = tcp::endpoint(asio::ip::make_address_v4(o.dial_ip()), o.port);
  double begin = tlsnb::monotonic_ms_precise();
  for (long slot = 0; slot < std::min(o.parallel, o.count); ++slot) run_slot(io, shared, static_cast<int>(slot));
  io.run();
  shared.stats.wall_ms = tlsnb::monotonic_ms_precise() - begin;
  shared.stats.peak_fds = shared.peak_fds;
  contract::print_summary(report, shared.stats, std::string("Boost.Asio ") + std::to_string(BOOST_ASIO_VERSION / 100000) + "." +
                                                    std::to_string(BOOST_ASIO_VERSION / 100 % 1000) + "." +
                                                    std::to_string(BOOST_ASIO_VERSION % 100) + ", " + OpenSSL_version(OPENSSL_VERSION));
  std::fflush(stdout);
  return shared.stats.failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::bad_alloc&) {
    std::fputs("tlsnb-asio: out of memory outside any attempt\n", stderr);
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tlsnb-asio: %s\n", e.what());
    return 1;
  }
}
