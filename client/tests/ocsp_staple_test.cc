// The staple's parts that no handshake can single out: the TLS Feature list of a must-staple
// certificate, read whole (under LeakSanitizer: the decoded list is freed), and the one reason a
// refused staple leaves on the error queue, whatever the OCSP call queued before it.
#include "ocsp_staple.h"

#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ocsp.h>
#include <openssl/x509v3.h>

#include <vector>

namespace {

// A certificate with nothing in it but a TLS Feature extension listing FEATURES (OpenSSL's
// config syntax: "status_request", "status_request_v2", or numbers); none when empty.
X509* certificate_with_features(const char* features) {
  X509* cert = X509_new();
  if (*features != '\0') {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, nullptr, NID_tlsfeature, features);
    EXPECT_NE(nullptr, ext) << features;
    X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
  }
  return cert;
}

bool must_staple_with(const char* features) {
  X509* cert = certificate_with_features(features);
  bool found = tlsnb::must_staple(cert);
  X509_free(cert);
  return found;
}

using Queue = std::vector<std::pair<int, int>>;

// Every (library, reason) on the queue, first raised first; the queue is left empty.
Queue drain_queue() {
  Queue queue;
  for (unsigned long code = 0; (code = ERR_get_error()) != 0;)
    queue.emplace_back(ERR_GET_LIB(code), ERR_GET_REASON(code));
  return queue;
}

}  // namespace

/* status_request (5) anywhere in the list makes a leaf must-staple; status_request_v2 (17) alone does not */
TEST(MustStaple, StatusRequestAnywhereInTheFeatureList) {
  EXPECT_FALSE(must_staple_with(""));
  EXPECT_TRUE(must_staple_with("status_request"));
  EXPECT_FALSE(must_staple_with("status_request_v2"));
  EXPECT_TRUE(must_staple_with("status_request_v2,status_request"));
  EXPECT_TRUE(must_staple_with("status_request,status_request_v2"));
  EXPECT_FALSE(must_staple_with("status_request_v2,6,4"));
}

/* The first OCSP reason is kept, whatever came before or after it */
TEST(RefusedStaple, KeepsTheFirstOcspReason) {
  ERR_clear_error();
  ERR_raise(ERR_LIB_EVP, EVP_R_BAD_DECRYPT);
  ERR_raise(ERR_LIB_OCSP, OCSP_R_MISSING_OCSPSIGNING_USAGE);
  ERR_raise(ERR_LIB_OCSP, OCSP_R_ROOT_CA_NOT_TRUSTED);
  ERR_raise(ERR_LIB_ASN1, ASN1_R_TOO_LONG);
  EXPECT_EQ(0, tlsnb::refuse_with_one_reason());
  EXPECT_EQ((Queue{{ERR_LIB_OCSP, OCSP_R_MISSING_OCSPSIGNING_USAGE}}), drain_queue());

  ERR_raise(ERR_LIB_OCSP, OCSP_R_STATUS_EXPIRED);
  ERR_raise(ERR_LIB_EVP, EVP_R_BAD_DECRYPT);
  EXPECT_EQ(0, tlsnb::refuse_with_one_reason());
  EXPECT_EQ((Queue{{ERR_LIB_OCSP, OCSP_R_STATUS_EXPIRED}}), drain_queue());
}

/* Without an OCSP reason the first error is kept; an empty queue stays empty, so the error raised
   next (the handshake's own) is the first one read (an entry of code 0 would hide it) */
TEST(RefusedStaple, WithoutAnOcspReasonKeepsTheFirstError) {
  ERR_clear_error();
  ERR_raise(ERR_LIB_ASN1, ASN1_R_TOO_LONG);
  ERR_raise(ERR_LIB_EVP, EVP_R_BAD_DECRYPT);
  EXPECT_EQ(0, tlsnb::refuse_with_one_reason());
  EXPECT_EQ((Queue{{ERR_LIB_ASN1, ASN1_R_TOO_LONG}}), drain_queue());

  EXPECT_EQ(0, tlsnb::refuse_with_one_reason());
  ERR_raise(ERR_LIB_SSL, SSL_R_INVALID_STATUS_RESPONSE);
  EXPECT_EQ((Queue{{ERR_LIB_SSL, SSL_R_INVALID_STATUS_RESPONSE}}), drain_queue());
}
