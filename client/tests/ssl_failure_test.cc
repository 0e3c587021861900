// The outcome table, row by row: what an attempt saw around a failed SSL call -> one Outcome,
// printed whole ("stage/detail depth D: text") and compared whole.
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <cerrno>
#include <string>
#include <vector>

#include "ssl_failure.h"

using namespace tlsnb;

namespace {

const unsigned long verify_failed = ERR_PACK(ERR_LIB_SSL, 0, SSL_R_CERTIFICATE_VERIFY_FAILED);
const unsigned long unexpected_eof = ERR_PACK(ERR_LIB_SSL, 0, SSL_R_UNEXPECTED_EOF_WHILE_READING);
const unsigned long protocol_alert = ERR_PACK(ERR_LIB_SSL, 0, SSL_R_TLSV1_ALERT_PROTOCOL_VERSION);
const unsigned long bad_record_mac = ERR_PACK(ERR_LIB_SSL, 0, SSL_R_DECRYPTION_FAILED_OR_BAD_RECORD_MAC);

// An SSL call of `stage` that failed with `ssl_error`, `queue_top` queued and errno `saved_errno`.
SslFailure call(Stage stage, int ssl_error, unsigned long queue_top = 0, int saved_errno = 0) {
  SslFailure f;
  f.stage = stage;
  f.ssl_error = ssl_error;
  f.queue_top = queue_top;
  f.saved_errno = saved_errno;
  return f;
}

// A handshake the verify callback failed: SSL_ERROR_SSL with "certificate verify failed" queued.
SslFailure verify(int error, int depth) {
  SslFailure f = call(Stage::handshake, SSL_ERROR_SSL, verify_failed);
  f.verify_error = error;
  f.verify_depth = depth;
  return f;
}

// The transport failed (or ended) while it moved the ciphertext of a `stage` call.
SslFailure moved(Stage stage, TransportEvent event, int err = 0) {
  SslFailure f = call(stage, SSL_ERROR_NONE);
  f.transport = event;
  f.transport_errno = err;
  return f;
}

SslFailure with_verify(SslFailure f, int error) {
  f.verify_error = error;
  f.verify_depth = 0;
  return f;
}

std::string shown(const Outcome& o) {
  std::string depth = o.verify_depth >= 0 ? " depth " + std::to_string(o.verify_depth) : "";
  return o.key() + depth + ": " + o.text;
}

struct Row {
  const char* name;  // the behaviour the row pins
  SslFailure seen;
  std::string expected;
};

std::ostream& operator<<(std::ostream& out, const Row& row) { return out << row.name; }

const std::vector<Row>& rows() {
  static const std::vector<Row> table = {
      // handshake: X509_V_ERR_* when verification failed, with the depth it failed at
      {"ExpiredLeafIsItsX509CodeAtDepth0", verify(X509_V_ERR_CERT_HAS_EXPIRED, 0),
       "handshake/10 depth 0: certificate has expired"},
      {"ExpiredIntermediateKeepsItsDepth", verify(X509_V_ERR_CERT_HAS_EXPIRED, 1),
       "handshake/10 depth 1: certificate has expired"},
      {"WrongHostIsHostnameMismatch", verify(X509_V_ERR_HOSTNAME_MISMATCH, 0), "handshake/62 depth 0: hostname mismatch"},
      {"LeafOfAnotherPkiIsUnknownIssuer", verify(X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, 0),
       "handshake/20 depth 0: unable to get local issuer certificate"},
      {"SelfSignedLeafIs18", verify(X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, 0), "handshake/18 depth 0: self-signed certificate"},
      // handshake: -1 when the peer closed without an alert (EOF, ECONNRESET, EPIPE)
      {"HandshakeEofIsPeerClosedWithoutAlert", call(Stage::handshake, SSL_ERROR_SYSCALL),
       "handshake/-1: peer closed the connection without an alert"},
      {"HandshakeResetIsPeerClosedNamingTheErrno", call(Stage::handshake, SSL_ERROR_SYSCALL, 0, ECONNRESET),
       "handshake/-1: peer closed the connection without an alert (Connection reset by peer)"},
      {"HandshakeEpipeIsPeerClosed", call(Stage::handshake, SSL_ERROR_SYSCALL, 0, EPIPE),
       "handshake/-1: peer closed the connection without an alert (Broken pipe)"},
      {"HandshakeAnySocketErrnoIsPeerClosed", call(Stage::handshake, SSL_ERROR_SYSCALL, 0, ETIMEDOUT),
       "handshake/-1: peer closed the connection without an alert (Connection timed out)"},
      {"HandshakeUnexpectedEofIsPeerClosed", call(Stage::handshake, SSL_ERROR_SSL, unexpected_eof),
       "handshake/-1: peer closed the connection without an alert"},
      {"HandshakeSendFailureIsPeerClosed", moved(Stage::handshake, TransportEvent::io_error, ECONNRESET),
       "handshake/-1: peer closed the connection without an alert (Connection reset by peer)"},
      {"HandshakeEndOfStreamWhileWantingBytesIsMinus1", moved(Stage::handshake, TransportEvent::eof),
       "handshake/-1: peer closed the connection"},
      {"TransportFailureWinsOverTheVerifyRecord",
       with_verify(moved(Stage::handshake, TransportEvent::io_error, EPIPE), X509_V_ERR_HOSTNAME_MISMATCH),
       "handshake/-1: peer closed the connection without an alert (Broken pipe)"},
      // handshake: else the first OpenSSL error, packed
      {"HandshakeAlertIsThePackedCode", call(Stage::handshake, SSL_ERROR_SSL, protocol_alert),
       "handshake/167773230: error:0A00042E:SSL routines::tlsv1 alert protocol version"},
      {"HandshakeSslErrorWithNothingQueuedIsMinus1", call(Stage::handshake, SSL_ERROR_SSL),
       "handshake/-1: peer closed the connection without an alert"},
      {"HandshakeCloseNotifyIs0", call(Stage::handshake, SSL_ERROR_ZERO_RETURN),
       "handshake/0: peer sent close_notify before the end"},
      // read: -1 truncation, 0 early close_notify, errno, OpenSSL code
      {"ReadEofWithoutCloseNotifyIsTruncation", call(Stage::read, SSL_ERROR_SYSCALL),
       "read/-1: peer closed the connection without close_notify"},
      {"ReadUnexpectedEofIsTruncation", call(Stage::read, SSL_ERROR_SSL, unexpected_eof),
       "read/-1: peer closed the connection without close_notify"},
      {"ReadEndOfStreamWhileWantingBytesIsMinus1", moved(Stage::read, TransportEvent::eof),
       "read/-1: peer closed the connection"},
      {"ReadEarlyCloseNotifyIs0", call(Stage::read, SSL_ERROR_ZERO_RETURN), "read/0: peer sent close_notify before the end"},
      {"ReadResetIsErrno104", call(Stage::read, SSL_ERROR_SYSCALL, 0, ECONNRESET), "read/104: Connection reset by peer"},
      {"ReadRecvFailureIsItsErrno", moved(Stage::read, TransportEvent::io_error, ECONNRESET),
       "read/104: Connection reset by peer"},
      {"ReadBadRecordMacIsThePackedCode", call(Stage::read, SSL_ERROR_SSL, bad_record_mac),
       "read/167772441: error:0A000119:SSL routines::decryption failed or bad record mac"},
      {"ReadSyscallWithACodeQueuedIsThatCode", call(Stage::read, SSL_ERROR_SYSCALL, bad_record_mac, ECONNRESET),
       "read/167772441: error:0A000119:SSL routines::decryption failed or bad record mac"},
      {"ReadSslErrorWithNothingQueuedIsMinus1", call(Stage::read, SSL_ERROR_SSL),
       "read/-1: peer closed the connection without an alert"},
      {"ReadIgnoresTheVerifyRecord", with_verify(call(Stage::read, SSL_ERROR_SSL, bad_record_mac), 62),
       "read/167772441: error:0A000119:SSL routines::decryption failed or bad record mac"},
      // write: errno or OpenSSL code
      {"WriteEpipeIsErrno32", call(Stage::write, SSL_ERROR_SYSCALL, 0, EPIPE), "write/32: Broken pipe"},
      {"WriteSendFailureIsItsErrno", moved(Stage::write, TransportEvent::io_error, EPIPE), "write/32: Broken pipe"},
      {"WriteEofWithoutCloseNotifyIsTruncation", call(Stage::write, SSL_ERROR_SYSCALL),
       "write/-1: peer closed the connection without close_notify"},
      {"WritePackedCodeIsTheDetail", call(Stage::write, SSL_ERROR_SSL, bad_record_mac),
       "write/167772441: error:0A000119:SSL routines::decryption failed or bad record mac"},
  };
  return table;
}

class SslFailureTable : public testing::TestWithParam<Row> {
 protected:
  static void SetUpTestSuite() { OPENSSL_init_ssl(OPENSSL_INIT_LOAD_SSL_STRINGS, nullptr); }
};

}  // namespace

TEST_P(SslFailureTable, IsOneOutcome) { EXPECT_EQ(GetParam().expected, shown(ssl_failure_outcome(GetParam().seen))); }

INSTANTIATE_TEST_SUITE_P(Outcomes, SslFailureTable, testing::ValuesIn(rows()),
                         [](const testing::TestParamInfo<Row>& info) { return std::string(info.param.name); });

/* The attempt reads ERR_peek_error: the first error raised, not the last */
TEST(SslFailure, TheQueueTopIsTheFirstErrorRaised) {
  OPENSSL_init_ssl(OPENSSL_INIT_LOAD_SSL_STRINGS, nullptr);
  ERR_clear_error();
  ERR_raise(ERR_LIB_SSL, SSL_R_TLSV1_ALERT_PROTOCOL_VERSION);
  ERR_raise(ERR_LIB_SSL, SSL_R_UNEXPECTED_EOF_WHILE_READING);
  EXPECT_EQ(ERR_peek_error(), protocol_alert);
  ERR_clear_error();
}
