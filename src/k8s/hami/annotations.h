#pragma once

// HAMi's pod annotations (HAMi docs/develop/protocol.md): what a scheduler writes when it binds a
// pod to GPUs, so that HAMi's device plugin enforces the assignment (memory and core limits),
// and what HAMi's own scheduler wrote on pods it bound. Pure and thread-safe.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "k8s/api/objects.h"
#include "k8s/hami/register.h"
#include "model/pod.h"
#include "model/resources.h"
#include "util/result.h"

namespace tessera::k8s {

/// "UUID,NVIDIA,memMiB,cores:" per device, ";" between containers.
inline constexpr std::string_view kHamiDevicesToAllocate = "hami.io/vgpu-devices-to-allocate";
/// The same value; HAMi's own scheduler counts a pod's devices from it.
inline constexpr std::string_view kHamiDevicesAllocated = "hami.io/vgpu-devices-allocated";
/// Unix seconds; HAMi's device plugin only picks up pods that carry it.
inline constexpr std::string_view kHamiBindTime = "hami.io/bind-time";
inline constexpr std::string_view kHamiVgpuNode = "hami.io/vgpu-node";
inline constexpr std::string_view kHamiVgpuTime = "hami.io/vgpu-time";
inline constexpr std::string_view kHamiBindPhase = "hami.io/bind-phase";

/// A node's HAMi devices by GPU index: the healthy devices of its register annotation in
/// annotation order (as NodeToSpec numbers them); empty when the node has no register
/// annotation, it does not parse, or its healthy devices do not number `gpu_count`.
std::vector<HamiDevice> HamiGpus(const Node& node, int gpu_count);

/// GPUs per container in HAMi's order (init containers, then app containers), with whether the
/// container runs alone (a regular init container, which runs before the others).
using HamiContainerLayout = std::vector<std::pair<int, bool>>;
/// The layout of a pod's containers, counting each container's GPUs by PodToSpec's family rule
/// (tessera.io/gpu, else 1 when another tessera.io/gpu-* resource is named; else the same with
/// nvidia.com names).
HamiContainerLayout HamiLayout(const Pod& pod);

/// The annotations that hand GPUs `gpus` of a node with HAMi `devices` (by GPU index) to a pod
/// requesting `request`: devices-to-allocate and -allocated ("UUID,NVIDIA,memMiB,cores:" per
/// device; app containers and sidecars take the pod's GPUs in turn, a regular init container
/// takes them from the first; one entry without a layout), vgpu-node, vgpu-time, bind-time
/// (`unix_seconds`) and bind-phase=allocating. Memory is the request's per-GPU memory, else the
/// device's; cores are the request's milli / 10.
std::map<std::string, std::string> HamiBindAnnotations(
    const HamiContainerLayout* layout, GpuSet gpus, const std::vector<HamiDevice>& devices,
    const PodRequest& request, const std::string& node, int64_t unix_seconds);

/// The GPU indices (by `devices`) that a hami.io/vgpu-devices-allocated value names (the UUIDs
/// of every container). Error: a UUID the node does not register, or a malformed value.
Result<GpuSet> HamiAllocatedGpus(std::string_view value, const std::vector<HamiDevice>& devices);

}  // namespace tessera::k8s
