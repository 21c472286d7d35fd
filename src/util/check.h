#pragma once

#include <cstdio>
#include <cstdlib>

/// TESSERA_CHECK(cond): an engine invariant (never untrusted input). Active in every build:
/// a broken invariant aborts with its place rather than corrupting results silently.
#define TESSERA_CHECK(cond)                                                               \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      std::fprintf(stderr, "%s:%d: invariant violated: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                       \
    }                                                                                     \
  } while (0)
