// gaps/gaplib.h: the one helper every gap program shares.
//
// A gap program sets up one situation, observes what OpenSSL 3 or Linux does,
// and prints exactly one line `OBSERVED key=value key=value ...` (compared whole
// against gaps/gaps.toml), plus any number of `FIGURE key=value` lines (numbers
// shown beside the verdict, never compared). Bad input: one line on stderr, exit 2.
#pragma once

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace gap {

// --- owners: every SSL object and descriptor is freed on every path -------------
struct Free {
  void operator()(SSL_CTX* p) const { SSL_CTX_free(p); }
  void operator()(SSL* p) const { SSL_free(p); }
  void operator()(SSL_SESSION* p) const { SSL_SESSION_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
};
using Ctx = std::unique_ptr<SSL_CTX, Free>;
using Ssl = std::unique_ptr<SSL, Free>;
using Session = std::unique_ptr<SSL_SESSION, Free>;
using Cert = std::unique_ptr<X509, Free>;
using Key = std::unique_ptr<EVP_PKEY, Free>;

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  void reset();
 private:
  int fd_ = -1;
};

// --- command line and output ------------------------------------------------------
// Every gap takes `--certs DIR` (default $TLSLAB_CERTS): the folder certs/gen.py wrote.
// `flags` names the extra `--flag VALUE` options a gap accepts; returns their values.
std::map<std::string, std::string> init(int argc, char** argv, const std::vector<std::string>& flags = {});
// A file in the certificate folder; exits 2 with one line on stderr when it is missing.
std::string cert_file(const std::string& name);
// Stops the program: one line on stderr, exit 2 (bad input or an unusable setup).
[[noreturn]] void die(const std::string& why);

// Collects the observation; print() writes the single OBSERVED line.
class Observation {
 public:
  void add(const std::string& key, const std::string& value);
  int print() const;  // returns 0, for `return obs.print();`
 private:
  std::vector<std::pair<std::string, std::string>> kv_;
};
void figure(const std::string& key, const std::string& value);

// --- names for what OpenSSL answers -----------------------------------------------
std::string ssl_error_name(int code);         // SSL_get_error: "WANT_READ", "SSL", ...
std::string reason_name(unsigned long err);   // "unexpected_eof_while_reading", or "none"
std::string verify_name(long v);              // "HOSTNAME_MISMATCH", or the number
// The client's outcome after a failed handshake, in the lab's outcome vocabulary (stage/detail):
// "handshake:verify=<X509_V_ERR name>" or "handshake:<first error reason>".
std::string handshake_outcome(SSL* client, int ret);

// --- contexts ---------------------------------------------------------------------
// A server serving NAME.pem/NAME.key from the certificate folder, at security level 0 (it
// serves RSA-1024 or SHA-1 when told to: only the client's level is ever under test).
Ctx server_ctx(const std::string& name = "leaf-ecdsa");
Ctx server_ctx(X509* cert, EVP_PKEY* key);
// The same server, stapling OCSP_NAME (a DER OCSP response of the certificate folder) whenever a
// client asks for status (status_request); a client that does not ask gets none.
Ctx server_ctx(const std::string& name, const std::string& ocsp_name);
// The status a stapled response gives the leaf: "good", "revoked", "unknown", "none" (no
// staple came) or "unreadable".
std::string staple_status(SSL* client);
// A client with OpenSSL's defaults plus: trusts ca.pem, SSL_VERIFY_PEER. No name check,
// no SNI: each gap adds exactly the guard it is about.
Ctx client_ctx();

// --- an in-process client and server over memory BIOs -----------------------------
struct Link {
  Ssl client, server;
  // With a bounded client (see link()), the far end of the client's BIO pair; else null.
  std::unique_ptr<BIO, Free> wire;
  // Moves every pending byte both ways; returns how many moved.
  size_t pump();
};
// client_buffer 0: the client writes into an unbounded memory BIO. Otherwise the client
// sits on a BIO pair that holds at most client_buffer bytes of its output, so its
// writes can meet "want write" the way they do on a full socket.
Link link(SSL_CTX* client_ctx, SSL_CTX* server_ctx, size_t client_buffer = 0);
// Drives both handshakes; "ok" or the client's handshake_outcome.
std::string handshake(Link& l);
// A fresh link whose client sends SNI `host` and checks the certificate for it
// (SSL_set1_host, with `hostflags`): "ok" or the client's handshake_outcome.
std::string handshake_for(SSL_CTX* client_ctx, SSL_CTX* server_ctx, const char* host, unsigned hostflags = 0);
// Reads the client side once (SSL_read into a scratch buffer); returns SSL_get_error's name
// or "data:<n>".
std::string client_read_once(Link& l);

// --- sockets ----------------------------------------------------------------------
// A connected {client, server} TCP pair over 127.0.0.1 (listener on port 0, closed after
// accept); `tune` may set socket options before connect (the accepted socket inherits the
// listener's).
std::pair<Fd, Fd> tcp_pair(const std::function<void(int listener, int client)>& tune = {});
void set_nonblocking(int fd);
// Drives SSL_do_handshake on two SSL objects that already have their BIOs/fds,
// polling the descriptors when both want I/O; true when both completed.
bool handshake_both(SSL* client, SSL* server, int client_fd, int server_fd);

// Reads with SSL_read on a non-blocking descriptor until the stream ends: how many
// plaintext bytes arrived and how it ended ("ZERO_RETURN" for close_notify,
// "SSL:<reason>", "SYSCALL:<errno name>", or "timeout").
struct Drained {
  size_t bytes = 0;
  std::string end;
};
Drained read_to_end(SSL* ssl, int fd, double timeout_ms = 5000);
// One SSL_read attempt into a scratch buffer; adds what it read to *bytes.
// Returns "" while more may come, else the end as read_to_end names it.
std::string read_some(SSL* ssl, size_t* bytes);

// --- processes --------------------------------------------------------------------
// Runs body in a forked child with the default signal dispositions: "exit:N" or "killed:SIGxxx".
std::string in_child(const std::function<int()>& body);

// --- certificates the generated set does not have ---------------------------------
struct Minted {
  Cert cert;
  Key key;
};
// A P-256 leaf with these subjectAltName DNS entries and no subject, issued (SHA-256) by the
// generated ca.pem/ca.key, valid from yesterday for 30 days.
Minted mint_leaf(const std::vector<std::string>& dns_names);

// --- time -------------------------------------------------------------------------
double now_ms();  // CLOCK_MONOTONIC in milliseconds

}  // namespace gap
