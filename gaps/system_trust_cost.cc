// gaps/system_trust_cost: SSL_CTX_set_default_verify_paths parses the whole system bundle
// (Debian: about 140 roots) and costs far more than loading one CA file: load trust once
// per process (one SSL_CTX, made in main), never per attempt. Both are timed in the same
// run, median of kReps; the record holds a bound on the ratio, the figures are printed.
#include <openssl/x509.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "gaplib.h"

namespace {

constexpr int kReps = 7;
constexpr double kBound = 3.0;  // the recorded claim: the system store costs > 3x one CA file

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string ms(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// Milliseconds to make a client context and give it `trust`; the count of what it loaded.
double time_trust(const std::function<int(SSL_CTX*)>& trust, size_t* objects) {
  double start = gap::now_ms();
  gap::Ctx ctx(SSL_CTX_new(TLS_client_method()));
  if (trust(ctx.get()) != 1) gap::die("loading trust failed: " + gap::reason_name(ERR_peek_last_error()));
  double spent = gap::now_ms() - start;
  *objects = static_cast<size_t>(sk_X509_OBJECT_num(X509_STORE_get0_objects(SSL_CTX_get_cert_store(ctx.get()))));
  return spent;
}

}  // namespace

int main(int argc, char** argv) {
  gap::init(argc, argv);
  // What the system store is must not come from the caller's environment.
  unsetenv("SSL_CERT_FILE");
  unsetenv("SSL_CERT_DIR");
  std::string ca = gap::cert_file("ca.pem");
  gap::Ctx warm(SSL_CTX_new(TLS_client_method()));  // the first context loads config and providers
  std::vector<double> file_ms, system_ms;
  size_t file_objects = 0, system_objects = 0;
  for (int i = 0; i < kReps; ++i) {
    file_ms.push_back(time_trust([&](SSL_CTX* c) { return SSL_CTX_load_verify_locations(c, ca.c_str(), nullptr); },
                                 &file_objects));
    system_ms.push_back(time_trust([](SSL_CTX* c) { return SSL_CTX_set_default_verify_paths(c); }, &system_objects));
  }
  double f = median(file_ms), s = median(system_ms), ratio = s / f;
  gap::figure("ca_file_ms", ms(f));
  gap::figure("system_ms", ms(s));
  gap::figure("ratio", ms(ratio));
  gap::figure("system_file", X509_get_default_cert_file());
  gap::figure("objects", std::to_string(file_objects) + "/" + std::to_string(system_objects));
  gap::Observation obs;
  obs.add("system_over_ca_file", ratio > kBound ? "more_than_3x" : "at_most_3x");
  obs.add("system_store_loaded", system_objects > 1 ? "yes" : "no");
  return obs.print();
}
