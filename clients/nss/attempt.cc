#include "attempt.h"

#include <base64.h>
#include <pk11pub.h>
#include <prerror.h>
#include <secasn1.h>
#include <secerr.h>
#include <ssl.h>
#include <sslexp.h>
#include <sslproto.h>
#include <sys/epoll.h>

#include <algorithm>
#include <cerrno>

#include "error_map.h"
#include "socket_layer.h"

namespace tlsnss {

namespace {

using tlsnb::make_outcome;

// --no-verify: the peer's certificate accepted whatever it is.
SECStatus accept_any(void*, PRFileDesc*, PRBool, PRBool) { return SECSuccess; }

// --no-verify-name: what SSL_AuthCertificate does but the name (CERT_VerifyCertName): the chain
// verified for an SSL server at the current time, the name in SSL_SetURL left for the SNI alone.
SECStatus verify_chain_only(void* db, PRFileDesc* fd, PRBool check_sig, PRBool) {
  CERTCertificate* cert = SSL_PeerCertificate(fd);
  if (cert == nullptr) return SECFailure;
  SECStatus r = CERT_VerifyCert(static_cast<CERTCertDBHandle*>(db), cert, check_sig, certUsageSSLServer, PR_Now(),
                                SSL_RevealPinArg(fd), nullptr);
  CERT_DestroyCertificate(cert);
  return r;
}

// --crl: NSS's documented way to require revocation information, CERT_PKIXVerifyCert with
// cert_pi_revocationFlags (certt.h): the CRL method tested, no fetching, no CRL distribution point
// followed, and a certificate whose issuer has no usable CRL refused (REQUIRE_INFO_ON_MISSING_SOURCE,
// FAIL_ON_MISSING_FRESH_INFO): the leaf alone, every certificate with --crl-all. CERT_VerifyCert
// (SSL_AuthCertificate's) reads the same CRL cache but fails open: a CRL it cannot use is no error
// (README.md, "CRLs"). Then the name, as SSL_AuthCertificate checks it.
SECStatus verify_with_crls(const Options& o, PRFileDesc* fd) {
  constexpr PRUint64 skip = CERT_REV_M_DO_NOT_TEST_USING_THIS_METHOD | CERT_REV_M_FORBID_NETWORK_FETCHING;
  constexpr PRUint64 required = CERT_REV_M_TEST_USING_THIS_METHOD | CERT_REV_M_FORBID_NETWORK_FETCHING |
                                CERT_REV_M_IGNORE_IMPLICIT_DEFAULT_SOURCE |
                                CERT_REV_M_REQUIRE_INFO_ON_MISSING_SOURCE | CERT_REV_M_FAIL_ON_MISSING_FRESH_INFO;
  PRUint64 leaf[cert_revocation_method_count] = {required, skip};
  PRUint64 chain[cert_revocation_method_count] = {o.crl_all ? required : skip, skip};
  CERTRevocationMethodIndex crl_first = cert_revocation_method_crl;
  CERTRevocationFlags flags{};
  flags.leafTests = {cert_revocation_method_count, leaf, 1, &crl_first, 0};
  flags.chainTests = {cert_revocation_method_count, chain, 1, &crl_first, 0};
  CERTValInParam in[2];
  in[0].type = cert_pi_revocationFlags;
  in[0].value.pointer.revocation = &flags;
  in[1].type = cert_pi_end;
  CERTValOutParam out[1];
  out[0].type = cert_po_end;
  CERTCertificate* cert = SSL_PeerCertificate(fd);
  if (cert == nullptr) return SECFailure;
  SECStatus r = CERT_PKIXVerifyCert(cert, certificateUsageSSLServer, in, out, SSL_RevealPinArg(fd));
  if (r == SECSuccess && o.verify_name) {
    char* url = SSL_RevealURL(fd);
    r = url != nullptr && *url != '\0' ? CERT_VerifyCertName(cert, url) : SECFailure;
    if (url != nullptr) PORT_Free(url);
    if (r != SECSuccess) PORT_SetError(SSL_ERROR_BAD_CERT_DOMAIN);
  }
  CERT_DestroyCertificate(cert);
  return r;
}

// --pin-sha256: some certificate of the chain NSS verified has a SubjectPublicKeyInfo whose SHA-256 is
// a pin (RFC 7469). CERT_GetCertChainFromCert builds that chain as the verifier does, leaf first, to the
// anchor; the SPKI is re-encoded from the certificate's decoded one (DER: the same bytes). None: the
// hook fails with SEC_ERROR_APPLICATION_CALLBACK_ERROR ("rejected by extra checks in the application").
SECStatus pinned(const Options& o, PRFileDesc* fd) {
  CERTCertificate* cert = SSL_PeerCertificate(fd);
  if (cert == nullptr) return SECFailure;
  CERTCertList* chain = CERT_GetCertChainFromCert(cert, PR_Now(), certUsageSSLServer);
  CERT_DestroyCertificate(cert);
  bool found = false;
  for (CERTCertListNode* n = chain ? CERT_LIST_HEAD(chain) : nullptr; n && !CERT_LIST_END(n, chain) && !found;
       n = CERT_LIST_NEXT(n)) {
    SECItem* spki = SEC_ASN1EncodeItem(nullptr, nullptr, &n->cert->subjectPublicKeyInfo,
                                       SEC_ASN1_GET(CERT_SubjectPublicKeyInfoTemplate));
    unsigned char digest[32];
    if (spki != nullptr && PK11_HashBuf(SEC_OID_SHA256, digest, spki->data, static_cast<PRInt32>(spki->len)) ==
                               SECSuccess)
      if (char* b64 = BTOA_DataToAscii(digest, sizeof digest)) {
        found = std::find(o.pins.begin(), o.pins.end(), std::string(b64)) != o.pins.end();
        PORT_Free(b64);
      }
    if (spki != nullptr) SECITEM_FreeItem(spki, PR_TRUE);
  }
  if (chain != nullptr) CERT_DestroyCertList(chain);
  if (!found) PORT_SetError(SEC_ERROR_APPLICATION_CALLBACK_ERROR);
  return found ? SECSuccess : SECFailure;
}

// A verifying attempt's auth hook: the chain (CERT_PKIXVerifyCert with --crl, else SSL_AuthCertificate,
// NSS's default hook, or the chain alone with --no-verify-name), then --pin-sha256.
SECStatus verify(void* options, PRFileDesc* fd, PRBool check_sig, PRBool is_server) {
  const Options& o = *static_cast<const Options*>(options);
  SECStatus r = !o.crls.empty() || o.crl_all ? verify_with_crls(o, fd)
                : o.verify_name ? SSL_AuthCertificate(CERT_GetDefaultCertDB(), fd, check_sig, is_server)
                                : verify_chain_only(CERT_GetDefaultCertDB(), fd, check_sig, is_server);
  return r == SECSuccess && !o.pins.empty() ? pinned(o, fd) : r;
}

// --cert/--key: NSS asks when the server sends a CertificateRequest; the certificate (NSS sends the
// chain it builds from it) and the key given, unless the server names authorities and none issued that
// chain: NSS's own test, NSS_CmpCertChainWCANames, as NSS_GetClientAuthData makes it (none sent then).
SECStatus client_identity(void* config, PRFileDesc*, CERTDistNames* authorities, CERTCertificate** cert,
                          SECKEYPrivateKey** key) {
  const TlsConfig& c = *static_cast<const TlsConfig*>(config);
  if (authorities != nullptr && authorities->nnames > 0 &&
      NSS_CmpCertChainWCANames(c.client_cert(), authorities) != SECSuccess)
    return SECFailure;
  *cert = CERT_DupCertificate(c.client_cert());
  *key = SECKEY_CopyPrivateKey(c.client_key());
  return *cert != nullptr && *key != nullptr ? SECSuccess : SECFailure;
}

}  // namespace

Outcome setup_outcome(SetupFailure what, const std::string& why) {
  const char* name = what == SetupFailure::session_init ? "SSL_ImportFD failed"
                     : what == SetupFailure::hostname   ? "the name to check could not be set"
                     : what == SetupFailure::context    ? "the run's configuration could not be made"
                                                        : "the saved session could not be offered";
  return contract::setup_outcome(static_cast<long>(what), name, why);
}

// PR_Close sends the close_notify when the handshake was done and none came, and frees the stack;
// the socket stays the base's to close (socket_layer.h).
void Attempt::release_session() {
  if (ssl_ == nullptr) return;
  PR_Close(ssl_);
  ssl_ = nullptr;
}

bool Attempt::open_session() {
  PRFileDesc* bottom = socket_layer(fd());
  if (bottom == nullptr)
    return fail(setup_outcome(SetupFailure::session_init, "PR_CreateIOLayerStub: " + nss_text(PR_GetError()))), false;
  ssl_ = SSL_ImportFD(nullptr, bottom);
  if (ssl_ == nullptr) {
    PR_Close(bottom);
    return fail(setup_outcome(SetupFailure::session_init, nss_text(PR_GetError()))), false;
  }
  if (!configure()) return false;
  if (SSL_ResetHandshake(ssl_, PR_FALSE) != SECSuccess)
    return fail(setup_outcome(SetupFailure::session_init, "SSL_ResetHandshake: " + nss_text(PR_GetError()))), false;
  return !options().resume || offer_session();  // after the reset, which would forget it
}

// The versions, the cache, the name and the check. SSL_SetURL is both the SNI (none for an IP
// literal) and the name SSL_AuthCertificate, NSS's default hook, matches with CERT_VerifyCertName.
bool Attempt::configure() {
  const Options& o = options();
  SSLVersionRange range{SSL_LIBRARY_VERSION_TLS_1_2, SSL_LIBRARY_VERSION_TLS_1_3};
  if (o.tls_max == 12) range.max = SSL_LIBRARY_VERSION_TLS_1_2;
  bool made = SSL_OptionSet(ssl_, SSL_SECURITY, PR_TRUE) == SECSuccess &&
              SSL_OptionSet(ssl_, SSL_HANDSHAKE_AS_CLIENT, PR_TRUE) == SECSuccess &&
              SSL_OptionSet(ssl_, SSL_ENABLE_SESSION_TICKETS, PR_TRUE) == SECSuccess &&
              // Without --resume no session is kept or offered: NSS's client cache would resume by itself.
              SSL_OptionSet(ssl_, SSL_NO_CACHE, o.resume ? PR_FALSE : PR_TRUE) == SECSuccess &&
              SSL_VersionRangeSet(ssl_, &range) == SECSuccess;
  if (!made) return fail(setup_outcome(SetupFailure::session_init, nss_text(PR_GetError()))), false;
  if (SSL_SetURL(ssl_, o.name.c_str()) != SECSuccess)
    return fail(setup_outcome(SetupFailure::hostname, o.name)), false;
  SECStatus hook = SECSuccess;
  if (!o.verify)
    hook = SSL_AuthCertificateHook(ssl_, accept_any, nullptr);
  else  // said, not left to the default
    hook = SSL_AuthCertificateHook(ssl_, verify, const_cast<Options*>(&o));
  if (hook == SECSuccess && run_.tls->client_cert() != nullptr)
    hook = SSL_GetClientAuthDataHook(ssl_, client_identity, run_.tls);
  if (hook == SECSuccess) hook = SSL_AlertReceivedCallback(ssl_, alert_received, this);
  if (hook != SECSuccess) return fail(setup_outcome(SetupFailure::session_init, nss_text(PR_GetError()))), false;
  if (o.resume && SSL_SetResumptionTokenCallback(ssl_, keep_token, this) != SECSuccess)
    return fail(setup_outcome(SetupFailure::session_init, nss_text(PR_GetError()))), false;
  return true;
}

SECStatus Attempt::keep_token(PRFileDesc*, const PRUint8* token, unsigned len, void* self) {
  static_cast<Attempt*>(self)->token_.assign(reinterpret_cast<const char*>(token), len);
  return SECSuccess;
}

bool Attempt::offer_session() {
  std::string saved;
  if (!run_.sessions->take(&saved)) return true;
  if (SSL_SetResumptionToken(ssl_, reinterpret_cast<const PRUint8*>(saved.data()),
                             static_cast<unsigned>(saved.size())) != SECSuccess)
    return fail(setup_outcome(SetupFailure::session_data, nss_text(PR_GetError()))), false;
  return true;
}

bool Attempt::session_to_keep(std::string* data) {
  if (token_.empty()) return false;
  *data = token_;
  return true;
}

Attempt::Step Attempt::step_handshake() {
  if (SSL_ForceHandshake(ssl_) != SECSuccess) return after_error(Stage::handshake, PR_POLL_READ);
  handshake_done();
  return next_after_handshake();
}

void Attempt::handshake_done() {
  SSLChannelInfo channel{};
  if (SSL_GetChannelInfo(ssl_, &channel, sizeof channel) != SECSuccess) return;
  resumed_ = channel.resumed != PR_FALSE;
  tls_version_ = channel.protocolVersion == SSL_LIBRARY_VERSION_TLS_1_3   ? "TLSv1.3"
                 : channel.protocolVersion == SSL_LIBRARY_VERSION_TLS_1_2 ? "TLSv1.2"
                                                                          : "";
  SSLCipherSuiteInfo suite{};
  if (SSL_GetCipherSuiteInfo(channel.cipherSuite, &suite, sizeof suite) == SECSuccess) cipher_ = suite.cipherSuiteName;
}

Attempt::Step Attempt::step_hold() {
  char buf[4096];
  PRInt32 n = PR_Read(ssl_, buf, sizeof buf);
  if (n > 0) return Step::again;
  if (n == 0) return closed();
  return after_error(Stage::read, PR_POLL_READ);
}

Attempt::Step Attempt::step_send() {
  PRInt32 n = PR_Write(ssl_, request_left(), static_cast<PRInt32>(request_left_size()));
  if (n < 0) return after_error(Stage::write, PR_POLL_WRITE);
  sent(static_cast<size_t>(n));
  return Step::again;
}

Attempt::Step Attempt::step_read() {
  unsigned char buf[16384];
  PRInt32 n = PR_Read(ssl_, buf, sizeof buf);
  if (n > 0) return take_response_bytes(buf, static_cast<size_t>(n));
  if (n == 0) return closed();
  return after_error(Stage::read, PR_POLL_READ);
}

// PR_Read returned 0: NSS returns it for the peer's close_notify and for a TCP close without one
// alike; the alert callback tells them apart (read/0, or read/-1: a truncation).
Attempt::Step Attempt::closed() {
  if (close_notify_received_)
    return fail(make_outcome(Stage::read, tlsnb::details::early_close_notify, "the peer's close_notify (PR_Read 0)"));
  return fail(make_outcome(Stage::read, tlsnb::details::peer_closed, "closed without close_notify (PR_Read 0)"));
}

void Attempt::alert_received(const PRFileDesc*, void* self, const SSLAlert* alert) {
  if (alert->description == 0) static_cast<Attempt*>(self)->close_notify_received_ = true;  // close_notify
}

// close_notify: sent by PR_Close in release_session; the peer's is not awaited.
Attempt::Step Attempt::step_bye() {
  save_session();
  return fail(make_outcome(Stage::ok, 0, "ok"));
}

// After an NSS call failed in `stage`: PR_WOULD_BLOCK_ERROR waits for what the SSL layer's poll
// method says its lower layer needs (`waiting_for` is what the call itself would wait for), and the
// same call is made again; any other error ends the attempt.
Attempt::Step Attempt::after_error(Stage stage, PRInt16 waiting_for) {
  PRErrorCode code = PR_GetError();
  int os_error = static_cast<int>(PR_GetOSError());
  if (code == PR_WOULD_BLOCK_ERROR) {
    PRInt16 out = 0;
    PRInt16 lower = ssl_->methods->poll(ssl_, waiting_for, &out);
    set_want((lower & PR_POLL_WRITE) != 0 ? EPOLLOUT : EPOLLIN);
    return Step::wait;
  }
  Leaf leaf;
  if (stage == Stage::handshake && code != PR_END_OF_FILE_ERROR)
    if (CERTCertificate* cert = SSL_PeerCertificate(ssl_)) {
      leaf.self_issued = CERT_CompareName(&cert->subject, &cert->issuer) == SECEqual;
      leaf.not_yet_valid = CERT_CheckCertValidTimes(cert, PR_Now(), PR_FALSE) == secCertTimeNotValidYet;
      CERT_DestroyCertificate(cert);
    }
  return fail(nss_outcome(stage, code, os_error, options().name_is_ip(), leaf));
}

}  // namespace tlsnss
