#pragma once

#include <cstdint>

namespace tessera {

/// One whole GPU, in milli-GPU (the unit of GPU compute everywhere in Tessera).
inline constexpr int32_t kMilliPerGpu = 1000;
/// The most GPUs one node may have; larger inputs are rejected where they are read.
inline constexpr int kMaxGpusPerNode = 16;
/// The most distinct GPU models one cluster may have (width of ModelMask).
inline constexpr int kMaxGpuModels = 64;

/// A set of GPU models (bit i = model id i of a Cluster).
using ModelMask = uint64_t;
inline constexpr ModelMask kAnyModel = ~ModelMask{0};

/// A set of GPU indices on one node (bit i = GPU i).
using GpuSet = uint32_t;

/// Bounds for "absurd" quantities, rejected at input boundaries.
inline constexpr int64_t kMaxCpuMilli = int64_t{1} << 40;   // ~1e9 cores
inline constexpr int64_t kMaxMemoryMib = int64_t{1} << 40;  // ~1 EiB
inline constexpr int64_t kMaxGpuMemoryMib = int64_t{1} << 30;

}  // namespace tessera
