// pem_load.h: a refused load told apart by OpenSSL's error queue, and the one line that says it.
// The client rows bad-input/*-not-decoding check exit and file; the wording is tlsnb's own, here.
#include "pem_load.h"

#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

namespace tlsnb {
namespace {

TEST(PemLoad, ADecodingErrorIsTheUsersFile) {
  ERR_clear_error();
  ERR_raise(ERR_LIB_PEM, PEM_R_BAD_BASE64_DECODE);
  ERR_raise(ERR_LIB_ASN1, ASN1_R_TOO_LONG);
  EXPECT_EQ(FileCheck::unusable, load_failure());
  EXPECT_EQ(0u, ERR_peek_error()) << "the queue is read to its end";
}

TEST(PemLoad, AnAllocationFailureIsTheRunsWhateverElseTheQueueSays) {
  ERR_clear_error();
  ERR_raise(ERR_LIB_PEM, PEM_R_BAD_BASE64_DECODE);
  ERR_raise(ERR_LIB_ASN1, ERR_R_MALLOC_FAILURE);
  EXPECT_EQ(FileCheck::no_memory, load_failure());
}

TEST(PemLoad, AnEmptyQueueIsTheRuns) {
  ERR_clear_error();
  EXPECT_EQ(FileCheck::no_memory, load_failure());
}

TEST(PemLoad, AKeyMismatchIsTheUsersOnlyFromX509) {
  ERR_clear_error();
  ERR_raise(ERR_LIB_X509, X509_R_KEY_VALUES_MISMATCH);
  LoadErrors seen = drain_error_queue();
  EXPECT_TRUE(seen.key_mismatch);
  EXPECT_FALSE(seen.decoding);
  EXPECT_FALSE(seen.memory);
  ERR_raise(ERR_LIB_EVP, X509_R_KEY_VALUES_MISMATCH);  // the same reason number from another library
  EXPECT_FALSE(drain_error_queue().key_mismatch);
}

TEST(PemLoad, TheLineSaysWhichOfTheTwo) {
  EXPECT_EQ("'ca.pem' holds a certificate that does not decode", refused_load(FileCheck::unusable, "ca.pem", "certificate"));
  EXPECT_EQ("'ca.crl' could not be loaded", refused_load(FileCheck::no_memory, "ca.crl", "CRL"));
}

}  // namespace
}  // namespace tlsnb
