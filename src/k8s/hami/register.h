#pragma once

// HAMi's node register: the annotation in which HAMi's device plugin advertises a node's GPUs
// (HAMi docs/develop/protocol.md), read so that Tessera knows real GPU UUIDs and memory without
// a node agent of its own.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace tessera::k8s {

/// The node annotation that lists the node's GPUs.
inline constexpr std::string_view kHamiRegisterAnnotation = "hami.io/node-nvidia-register";

/// One GPU as HAMi's device plugin registers it in the node annotation
/// `hami.io/node-nvidia-register`.
struct HamiDevice {
  std::string uuid;         ///< e.g. "GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec"
  int32_t split_count = 0;  ///< how many pods may share it
  int64_t memory_mib = 0;   ///< device memory limit (after HAMi's memory scaling)
  int32_t cores = 0;        ///< core limit in percent (100 = the whole GPU)
  std::string type;         ///< e.g. "NVIDIA-Tesla V100-PCIE-32GB"
  int32_t numa = 0;
  bool healthy = false;
  int32_t index = 0;  ///< device index on the node (position in the list when not given)
  std::string mode;   ///< "hami-core", "mig" or "mps" ("hami-core" when not given)

  bool operator==(const HamiDevice&) const = default;
};
/// Parses HAMi's register annotation. Two encodings exist:
///  - the documented one (HAMi docs/develop/protocol.md): devices separated by ':' (a trailing
///    ':' is usual), each "UUID,splitCount,memMiB,cores,type,numa,healthy" (7 fields) or the
///    newer 9 fields "...,healthy,index,mode";
///  - a JSON array written by recent HAMi releases:
///    [{"id","index","count","devmem","devcore","type","numa","mode","health"}], absent
///    fields being zero/false (Go omitempty).
/// Errors name the device and field. Pure; thread-safe.
Result<std::vector<HamiDevice>> ParseHamiNodeRegister(std::string_view value);

}  // namespace tessera::k8s
