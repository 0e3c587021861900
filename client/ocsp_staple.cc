#include "ocsp_staple.h"

#include <openssl/err.h>
#include <openssl/ocsp.h>
#include <openssl/x509v3.h>

#include <memory>

#include "tls_context.h"

namespace tlsnb {

namespace {

struct OcspFree {
  void operator()(OCSP_RESPONSE* p) const { OCSP_RESPONSE_free(p); }
  void operator()(OCSP_BASICRESP* p) const { OCSP_BASICRESP_free(p); }
  void operator()(OCSP_CERTID* p) const { OCSP_CERTID_free(p); }
};
template <class T>
using OcspPtr = std::unique_ptr<T, OcspFree>;

constexpr long tls_feature_status_request = 5;  // RFC 6066's status_request, as RFC 7633 lists it

int refuse_with(SSL* ssl, int verify_error) {
  record_verify_error(ssl, verify_error, 0);
  return 0;
}

int refuse_with_reason(int ocsp_reason) {
  ERR_raise(ERR_LIB_OCSP, ocsp_reason);
  return 0;
}

// The status of the leaf in a response that verified: good 1, revoked or unknown 0 (recorded).
int judge_status(SSL* ssl, OCSP_BASICRESP* basic, X509* leaf, X509* issuer) {
  OcspPtr<OCSP_CERTID> id(OCSP_cert_to_id(nullptr, leaf, issuer));
  if (!id) return 0;
  int status = 0, reason = 0;
  ASN1_GENERALIZEDTIME *revoked_at = nullptr, *this_update = nullptr, *next_update = nullptr;
  if (OCSP_resp_find_status(basic, id.get(), &status, &reason, &revoked_at, &this_update, &next_update) != 1)
    return refuse_with_reason(OCSP_R_RESPONSE_CONTAINS_NO_REVOCATION_DATA);  // a response for another certificate
  if (OCSP_check_validity(this_update, next_update, staple_clock_skew_s, -1) != 1) return refuse_with_one_reason();
  if (status == V_OCSP_CERTSTATUS_REVOKED) return refuse_with(ssl, X509_V_ERR_CERT_REVOKED);
  if (status != V_OCSP_CERTSTATUS_GOOD) return refuse_with(ssl, X509_V_ERR_OCSP_CERT_UNKNOWN);
  return 1;
}

}  // namespace

// The queue after a failed OCSP call holds a lower layer's reason (EVP, ASN.1) and the OCSP
// library's, sometimes two of them (an unauthorised responder: MISSING_OCSPSIGNING_USAGE, then
// ROOT_CA_NOT_TRUSTED from the fallback check): keep the first OCSP reason alone (else the
// first error), so each way a staple fails is one detail.
int refuse_with_one_reason() {
  unsigned long kept = 0, code = 0;
  while ((code = ERR_get_error()) != 0)
    if (kept == 0 || (ERR_GET_LIB(code) == ERR_LIB_OCSP && ERR_GET_LIB(kept) != ERR_LIB_OCSP)) kept = code;
  if (kept != 0) ERR_raise(ERR_GET_LIB(kept), ERR_GET_REASON(kept));
  return 0;
}

bool must_staple(X509* cert) {
  auto* features = static_cast<STACK_OF(ASN1_INTEGER)*>(X509_get_ext_d2i(cert, NID_tlsfeature, nullptr, nullptr));
  if (features == nullptr) return false;
  bool found = false;
  for (int i = 0; i < sk_ASN1_INTEGER_num(features) && !found; ++i)
    found = ASN1_INTEGER_get(sk_ASN1_INTEGER_value(features, i)) == tls_feature_status_request;
  sk_ASN1_INTEGER_pop_free(features, ASN1_INTEGER_free);
  return found;
}

int judge_staple(SSL* ssl, StaplePolicy policy) {
  // A resumed session carries the judgement of the full handshake that made it: only a
  // handshake whose staple passed completes, and only a completed one yields a session. TLS 1.2
  // resumption skips this callback; TLS 1.3's calls it with no staple and no verified chain
  // (gaps/status_cb_not_on_resumption).
  if (SSL_session_reused(ssl) == 1) return 1;
  X509* leaf = SSL_get0_peer_certificate(ssl);
  STACK_OF(X509)* chain = SSL_get0_verified_chain(ssl);
  if (leaf == nullptr || chain == nullptr) return 0;
  bool required = policy == StaplePolicy::require || must_staple(leaf);
  const unsigned char* der = nullptr;
  long len = SSL_get_tlsext_status_ocsp_resp(ssl, &der);
  if (der == nullptr || len <= 0) return required ? refuse_with(ssl, X509_V_ERR_OCSP_VERIFY_NEEDED) : 1;
  OcspPtr<OCSP_RESPONSE> response(d2i_OCSP_RESPONSE(nullptr, &der, len));
  if (!response) return 0;  // queued: the ASN.1 reason
  if (OCSP_response_status(response.get()) != OCSP_RESPONSE_STATUS_SUCCESSFUL)
    return refuse_with_reason(OCSP_R_NO_RESPONSE_DATA);
  OcspPtr<OCSP_BASICRESP> basic(OCSP_response_get1_basic(response.get()));
  if (!basic) return 0;
  // The signature, and the signer: the issuer itself, or a responder it delegated with the
  // OCSP-signing EKU, chained to the trust store (the verified chain helps find them).
  X509_STORE* store = SSL_CTX_get_cert_store(SSL_get_SSL_CTX(ssl));
  if (OCSP_basic_verify(basic.get(), chain, store, 0) != 1) return refuse_with_one_reason();
  X509* issuer = sk_X509_num(chain) > 1 ? sk_X509_value(chain, 1) : leaf;
  return judge_status(ssl, basic.get(), leaf, issuer);
}

}  // namespace tlsnb
