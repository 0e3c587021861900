// The PEM files a run is given (--cafile, --crl, --cert, --key): checked before a TLS library
// loads them, so that a load which fails afterwards can be told apart (pem_load.h). A file that
// is missing, not a regular file, empty or without a PEM block of its kind is the user's to fix
// (exit 2); an open that failed for want of memory is the run's (exit 1). No TLS library here:
// the adapters on GnuTLS, Mbed TLS and wolfSSL call the same check (clients/contract).
#pragma once

#include <initializer_list>
#include <string>

namespace tlsnb {

enum class FileCheck { usable, unusable, no_memory };

// A readable, non-empty regular file that opens: WHY gets one line when not ("cannot read 'PATH':
// REASON", "'PATH' is not a regular file", "'PATH' is empty"). What it holds is the loader's to say.
FileCheck check_readable_file(const std::string& path, std::string* why);

// check_readable_file, and a line that begins one of MARKERS, the BEGIN lines that count as a
// block of KIND ("PEM certificate"); else WHY is "no KIND in 'PATH'".
FileCheck check_pem_file(const std::string& path, std::initializer_list<const char*> markers, const char* kind,
                         std::string* why);

}  // namespace tlsnb
