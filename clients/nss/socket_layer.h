// The bottom of an attempt's NSPR stack: an I/O layer over the program's own non-blocking socket
// (clients/contract's AttemptBase holds it, connects it, watches it and closes it). NSS's SSL layer
// sits on it (SSL_ImportFD) and moves every byte through it: recv(2), and send(2) with MSG_NOSIGNAL
// (a peer's reset is an error, never a signal), an error as NSPR's PR_*_ERROR with the errno kept
// (PR_GetOSError). Closing the layer frees it and leaves the socket open: the base closes it after
// draining what is unread. PR_ImportTCPSocket would hand the descriptor to NSPR, which closes it
// itself; a dup of it would be a descriptor the I/O shim and the fd accounting do not know.
#pragma once

#include <prio.h>

namespace tlsnss {

// A new bottom layer over `socket_fd` (null when NSPR could not make one: PR_GetError says why).
PRFileDesc* socket_layer(int socket_fd);

}  // namespace tlsnss
