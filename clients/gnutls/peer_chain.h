// The certificates the peer sent, put in issuing order (leaf first, then each one's issuer
// among the rest), plus the trust anchor that issued the last of them when the store has it.
// It answers what GnuTLS's verification status bitmask does not say: whether the chain ends at
// a self-issued certificate (OpenSSL's 18 and 19 against 20), which constraint a
// GNUTLS_CERT_SIGNER_CONSTRAINTS_FAILURE is about (79, 25, 47 or 48), whether a weak key or a
// weak digest (66, 67, 68), and at which depth (OpenSSL's verify_depth, tlsnb's field).
#pragma once

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include <vector>

namespace tlsgnu {

class PeerChain {
 public:
  PeerChain(gnutls_session_t session, gnutls_certificate_credentials_t credentials);
  ~PeerChain();
  PeerChain(const PeerChain&) = delete;
  PeerChain& operator=(const PeerChain&) = delete;

  // Certificates on the issuing path the peer sent (0 when it sent none or one did not parse).
  int length() const { return static_cast<int>(path_.size()); }
  // The path's last certificate names itself as issuer (a root the client does not trust).
  bool ends_self_issued() const { return ends_self_issued_; }
  // The highest depth on the path (or the anchor, at depth length()) whose validity period
  // has ended (expired) or not begun; -1 when none is found.
  int time_error_depth(bool expired) const;
  // OpenSSL's check_auth_level order (leaf up: the key, then the signature on it): the first
  // depth whose key is under 112 bits (*key = true) or whose signature uses a digest GnuTLS does
  // not trust for certificates (*key = false); -1 when neither is found.
  int first_weak(bool* key) const;
  // The first issuer (depth >= 1, the anchor included) that is not a CA; -1 when none.
  int not_ca_depth() const;
  // The first certificate whose extended key usage leaves out TLS server authentication.
  int purpose_depth() const;
  // Which signer's constraint the chain breaks: an X509_V_ERR number (79 a CA whose key usage
  // leaves out keyCertSign, 25 a path length, 47 or 48 name constraints), 0 when none is found.
  long constraint_problem(int* depth) const;

 private:
  std::vector<gnutls_x509_crt_t> full() const;  // path_ and then the anchor, when there is one

  std::vector<gnutls_x509_crt_t> certs_;  // as sent
  std::vector<gnutls_x509_crt_t> path_;   // issuing order, borrowed from certs_
  gnutls_x509_crt_t anchor_ = nullptr;    // a copy out of the trust list
  bool ends_self_issued_ = false;
};

}  // namespace tlsgnu
