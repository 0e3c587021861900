// How an attempt's ciphertext meets its socket (--transport):
//   bio (default): the program's callbacks: sendmsg(..., MSG_NOSIGNAL) as GnuTLS's vectored push,
//     recv as its pull, a poll(0) as its pull-timeout (GnuTLS must never wait), and the errno
//     handed back with gnutls_transport_set_errno;
//   fd: gnutls_transport_set_int: GnuTLS's own system_writev (sendmsg without MSG_NOSIGNAL unless
//     the session was made with GNUTLS_NO_SIGNAL, which this client does not ask for) and recv.
#pragma once

#include <gnutls/gnutls.h>

#include "options.h"

namespace tlsgnu {

struct SocketIo {
  int fd = -1;
  gnutls_session_t session = nullptr;
  int last_errno = 0;  // the errno of the last failed send or receive (0: none yet)
};

void attach_socket_io(SocketIo* io, Transport transport);

}  // namespace tlsgnu
