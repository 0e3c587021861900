// A property of a fuzz target: when it does not hold, say which and abort, so libFuzzer
// saves the input under fuzz/crashes/ like any other crash.
#pragma once

#include <cstdio>
#include <cstdlib>

#define PROPERTY(cond)                                                                        \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      std::fprintf(stderr, "%s:%d: property does not hold: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                           \
    }                                                                                         \
  } while (0)
