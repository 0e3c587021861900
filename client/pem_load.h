// A PEM file that pem_file.h passed and OpenSSL then refused to load, told apart by OpenSSL's error
// queue: a decoding error or a key mismatch is the user's file (exit 2), an allocation failure the
// run's (exit 1). The allocation sweeps with --crl and --cert found both told as a bad file.
#pragma once

#include <string>

#include "pem_file.h"

namespace tlsnb {

// OpenSSL's error queue read to its end (and so emptied): what a refused load left in it. The one
// reader of the queue for the files a run is given (the CA file, CRLs, the client's certificate and key).
struct LoadErrors {
  bool memory = false;        // an allocation failed: the run's want, whatever else the queue says
  bool decoding = false;      // a PEM or ASN.1 decoding error
  bool key_mismatch = false;  // X509_R_KEY_VALUES_MISMATCH: a key that is not the certificate's
};
LoadErrors drain_error_queue();

// What a refused load's queue makes of it: unusable when it names a decoding error or a key mismatch
// and no allocation failure, no_memory otherwise.
FileCheck judged(const LoadErrors& seen);

// After OpenSSL refused a file check_pem_file passed: judged(drain_error_queue()).
FileCheck load_failure();

// The one line for a load of PATH that CHECK judged: "'PATH' holds a WHAT that does not decode"
// (unusable) or "'PATH' could not be loaded" (no_memory).
std::string refused_load(FileCheck check, const std::string& path, const char* what);

}  // namespace tlsnb
