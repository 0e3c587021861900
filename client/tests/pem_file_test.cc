// pem_file.h: the files a run is given, checked before OpenSSL loads them: each refusal one line,
// and no descriptor left open whatever the answer (the C++ adapters call the same check).
#include "pem_file.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "process_figures.h"

namespace tlsnb {
namespace {

std::string scratch_file(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "pem_file_test_" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(PemFile, AReadableFileIsUsableAndLeftClosed) {
  std::string path = scratch_file("plain", "some text\n");
  long fds = count_open_fds();
  std::string why;
  EXPECT_EQ(FileCheck::usable, check_readable_file(path, &why)) << why;
  EXPECT_EQ(fds, count_open_fds());
  std::remove(path.c_str());
}

TEST(PemFile, AMissingFileIsTheUsersAndOpensNothing) {
  long fds = count_open_fds();
  std::string why;
  EXPECT_EQ(FileCheck::unusable, check_readable_file("/nonexistent/ca.pem", &why));
  EXPECT_EQ("cannot read '/nonexistent/ca.pem': No such file or directory", why);
  EXPECT_EQ(FileCheck::unusable, check_pem_file("/nonexistent/ca.pem", {"-----BEGIN CERTIFICATE-----"}, "PEM certificate", &why));
  EXPECT_EQ(fds, count_open_fds());
}

TEST(PemFile, AFolderAnEmptyFileAndNoMarkerAreEachSaid) {
  std::string why;
  EXPECT_EQ(FileCheck::unusable, check_readable_file("/", &why));
  EXPECT_EQ("'/' is not a regular file", why);
  std::string empty = scratch_file("empty", "");
  EXPECT_EQ(FileCheck::unusable, check_readable_file(empty, &why));
  EXPECT_EQ("'" + empty + "' is empty", why);
  std::string other = scratch_file("other", "-----BEGIN X509 CRL-----\nAAAA\n");
  long fds = count_open_fds();
  EXPECT_EQ(FileCheck::unusable, check_pem_file(other, {"-----BEGIN CERTIFICATE-----"}, "PEM certificate", &why));
  EXPECT_EQ("no PEM certificate in '" + other + "'", why);
  EXPECT_EQ(FileCheck::usable, check_pem_file(other, {"-----BEGIN CERTIFICATE-----", "-----BEGIN X509 CRL-----"}, "PEM", &why));
  EXPECT_EQ(fds, count_open_fds());
  std::remove(empty.c_str());
  std::remove(other.c_str());
}

}  // namespace
}  // namespace tlsnb
