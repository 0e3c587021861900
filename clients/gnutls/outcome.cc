#include "outcome.h"

#include "clients/contract/attempt_base.h"

namespace tlsgnu {

Outcome setup_outcome(SetupFailure what, const std::string& why) {
  static const char* const names[] = {"",
                                      "gnutls_init failed",
                                      "gnutls_priority_set failed",
                                      "socket() failed",
                                      "gnutls_credentials_set failed",
                                      "gnutls_session_set_verify_cert2 failed",
                                      "gnutls_server_name_set failed",
                                      "epoll_ctl failed",
                                      "out of memory",
                                      "credentials or priorities could not be made",
                                      "gnutls_session_set_data failed"};
  auto index = static_cast<long>(what);
  return contract::setup_outcome(index, names[index], why);
}

}  // namespace tlsgnu
