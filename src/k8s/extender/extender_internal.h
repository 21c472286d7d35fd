#pragma once

// Helpers shared by the extender's files (the verbs, the cluster model, its state, bind,
// preemption, file mode's objects). Internal to src/k8s/; pure and thread-safe.

#include <cstdint>
#include <string>
#include <string_view>

#include "k8s/api/objects.h"
#include "model/fit.h"
#include "util/result.h"

namespace tessera::k8s {

/// Parses annotation tessera.io/gpu-indices ("0-3", "1,3", "0-1,4") into a GPU set over
/// `gpu_count` GPUs. Errors quote the value.
Result<GpuSet> ParseGpuIndices(std::string_view text, int gpu_count);
/// The inverse: "0-3", "1,3" (ranges of 3 or more GPUs are written as ranges; "0-1" for 2).
std::string FormatGpuIndices(GpuSet gpus);
/// "<filter>: <explanation>", e.g. "cpu: not enough CPU left".
std::string FitExplanation(FitReason reason);
/// FitExplanation(kGpuModel) naming both sides: "gpu-model: GPU model not allowed by the pod:
/// node has T4, pod allows A10|V100M16" (engine names, CanonicalGpuModel).
std::string ModelRefusal(std::string_view node_model, std::string_view allowed);
/// The UID a pod is known by; "namespace/name" when the object carries no UID.
std::string PodUid(const Pod& pod);
/// A metadata.resourceVersion as a number; 0 when it is not one. Kubernetes calls them opaque;
/// every API server in use writes etcd's revision, and Tessera only compares the versions of
/// one object (what the watch delivered against a later read of the same pod).
uint64_t NumericVersion(std::string_view resource_version);
/// Whether a pod in `phase` has ended (Succeeded or Failed): it holds no resources.
inline bool PodEnded(std::string_view phase) { return phase == "Succeeded" || phase == "Failed"; }

}  // namespace tessera::k8s
