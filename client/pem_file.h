// The PEM files a run is given (--cafile, --crl, --cert, --key): checked before OpenSSL loads
// them, so that a load which fails afterwards can be told apart. A file that is missing, not a
// regular file, empty or without a PEM block of its kind is the user's to fix (exit 2); a load
// of a checked file that fails with an allocation failure (or silently) failed for want of
// memory, the run's (exit 1): the allocation sweeps with --crl and --cert found both told as a
// bad file.
#pragma once

#include <initializer_list>
#include <string>

namespace tlsnb {

enum class FileCheck { usable, unusable, no_memory };

// MARKERS: the BEGIN lines that count as a block of KIND ("PEM certificate"); WHY gets one line.
FileCheck check_pem_file(const std::string& path, std::initializer_list<const char*> markers, const char* kind,
                         std::string* why);

// OpenSSL's error queue read to its end (and so emptied): what a refused load left in it. The one
// reader of the queue for the files a run is given (the CA file, CRLs, the client's certificate and key).
struct LoadErrors {
  bool memory = false;        // an allocation failed: the run's want, whatever else the queue says
  bool decoding = false;      // a PEM or ASN.1 decoding error
  bool key_mismatch = false;  // X509_R_KEY_VALUES_MISMATCH: a key that is not the certificate's
};
LoadErrors drain_error_queue();

// After OpenSSL refused a file check_pem_file passed: unusable when its error queue names a
// decoding error or a key mismatch and no allocation failure, no_memory otherwise. Empties the queue.
FileCheck load_failure();

// The one line for a load of PATH that CHECK judged: "'PATH' holds a WHAT that does not decode"
// (unusable) or "'PATH' could not be loaded" (no_memory).
std::string refused_load(FileCheck check, const std::string& path, const char* what);

}  // namespace tlsnb
