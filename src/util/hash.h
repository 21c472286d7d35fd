#pragma once

// The mixing step of the engine's hash functions (node states, pod shapes): boost's
// hash_combine on 64 bits. Not a cryptographic hash; pure.

#include <cstdint>

namespace tessera {

/// `h` with `v` mixed in.
inline uint64_t HashMix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

}  // namespace tessera
