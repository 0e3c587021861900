// One attempt on Botan 2: the library's half of contract::AttemptBase (clients/contract). The
// socket, the connect, epoll, the timers and the response reader are the base's; here a sans-IO
// Botan::TLS::Client: what arrives is recv()d and handed to received_data(), what Botan emits
// (tls_emit_data) is kept and send()t, the rest waiting for EPOLLOUT while the socket is full.
#pragma once

#include <botan/tls_callbacks.h>
#include <botan/tls_client.h>
#include <botan/tls_session_manager.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "clients/contract/attempt_base.h"
#include "error_map.h"
#include "options.h"
#include "tls_config.h"

namespace tlsbotan {

using tlsnb::Outcome;
using tlsnb::Stage;

// What could not be made (stage setup); 3, 7 and 8 are clients/contract's BaseSetup.
enum class SetupFailure : long { session_init = 1, context = 9, session_data = 10 };
Outcome setup_outcome(SetupFailure what, const std::string& why = "");

// Botan's callbacks of one attempt: bytes to send, application data, alerts, the session and
// the verification of the server's chain.
class AttemptCallbacks : public Botan::TLS::Callbacks {
 public:
  explicit AttemptCallbacks(const Options& o) : options_(o) {}

  void tls_emit_data(const uint8_t data[], size_t size) override;
  void tls_record_received(uint64_t seq_no, const uint8_t data[], size_t size) override;
  void tls_alert(Botan::TLS::Alert alert) override;
  bool tls_session_established(const Botan::TLS::Session& session) override;
  void tls_verify_cert_chain(const std::vector<Botan::X509_Certificate>& chain,
                             const std::vector<std::shared_ptr<const Botan::OCSP::Response>>& ocsp,
                             const std::vector<Botan::Certificate_Store*>& trusted_roots, Botan::Usage_Type usage,
                             const std::string& hostname, const Botan::TLS::Policy& policy) override;

  std::string out;              // emitted, not yet sent
  std::string app;              // application data received, not yet taken
  std::optional<Botan::TLS::Alert::Type> peer_alert;  // close_notify or a fatal alert the peer sent
  std::optional<Outcome> verify_failed;               // what x509_path_validate said
  std::string version, cipher;
  Botan::secure_vector<uint8_t> master;  // the established session's master secret

 private:
  const Options& options_;
};

class Attempt : public contract::AdapterAttempt<TlsConfig> {
 public:
  Attempt(uint64_t conn, Shared& shared);
  ~Attempt() override { release_session(); }

 private:
  bool open_session() override;
  Step step_handshake() override;
  Step step_hold() override;
  Step step_send() override;
  Step step_read() override;
  Step step_bye() override;
  void release_session() override;
  bool session_to_keep(std::string* data) override;

  bool offer_session();
  int send_emitted();
  std::optional<Step> pending_output(Stage stage);  // none: everything emitted has gone out
  Step read_some(Stage stage);
  Step after_exception(Outcome outcome);

  std::unique_ptr<AttemptCallbacks> callbacks_;
  std::unique_ptr<Botan::TLS::Session_Manager> sessions_;
  std::unique_ptr<Botan::TLS::Client> tls_;
  Botan::secure_vector<uint8_t> offered_master_;
  bool request_queued_ = false;  // the request is with Botan, its records still going out
  bool bye_sent_ = false;
};

}  // namespace tlsbotan
