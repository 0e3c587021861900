// What a failed SSL call means, as one pure function: from what the attempt saw around the
// call (SSL_get_error, the top of the error queue, errno, the verify callback's record, what
// moving ciphertext reported) to an Outcome. It reads no SSL, no error queue and no errno, so
// every row of the outcome table is a line of client/tests/ssl_failure_test.cc.
#pragma once

#include "outcome.h"

namespace tlsnb {

// What the transport reported while it moved the call's ciphertext.
enum class TransportEvent {
  none,      // nothing wrong: the SSL call's own result decides
  io_error,  // send or recv failed; transport_errno says why
  eof,       // the stream had ended and the SSL still wanted bytes
};

struct SslFailure {
  Stage stage = Stage::handshake;  // the stage whose SSL call failed
  int ssl_error = 0;               // SSL_get_error of the call (unused with a transport event)
  unsigned long queue_top = 0;     // ERR_peek_error() after the call: the first error, 0 when none
  int saved_errno = 0;             // errno right after the call (the socket BIO's), before any other call
  int verify_error = 0;            // X509_V_ERR_* the verify callback recorded first, 0 when none
  int verify_depth = -1;           // the depth of the certificate it was recorded for
  TransportEvent transport = TransportEvent::none;
  int transport_errno = 0;         // with io_error: send's or recv's errno
};

// The one outcome of the failure. Only OpenSSL's static reason strings are consulted, for the text.
Outcome ssl_failure_outcome(const SslFailure& failure);

}  // namespace tlsnb
