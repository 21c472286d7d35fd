#pragma once

// The translation of Kubernetes objects into the engine's terms: a Pod's GPU request as a
// PodSpec, a Node's capacity as a NodeSpec, which device plugin's resources each speaks
// (docs/EXTENDER.md, "What Tessera reads from a pod"). Pure and thread-safe.

#include <cstdint>
#include <string>
#include <string_view>

#include "k8s/api/objects.h"
#include "model/node.h"
#include "model/pod.h"
#include "util/result.h"

namespace tessera::k8s {

/// The pod annotation with the pod's topology intent ("required", "preferred:numa", ...).
inline constexpr std::string_view kPodTopologyAnnotation = "tessera.io/topology";

/// The device plugin families whose resources a pod asks for or a node offers, as bits: the
/// kubelet drops extended resources a node does not advertise, so a pod of one family bound to
/// a node of another starts without a GPU.
enum GpuFamily : uint8_t {
  kNoGpuFamily = 0,
  kTesseraFamily = 1,  ///< tessera.io/gpu, tessera.io/gpu-milli, tessera.io/gpu-memory
  kNvidiaFamily = 2,   ///< nvidia.com/gpu and HAMi's nvidia.com/gpumem, -gpucores, ...
};

/// The engine's view of a pod (units: milli-CPU, MiB, milli-GPU):
///  - name "namespace/name"; cpu_milli and memory_mib from the effective "cpu"/"memory"
///    requests (milli rounded up, MiB rounded down);
///  - GPUs per container, first family present: tessera.io/gpu (count; 1 when only a per-GPU
///    resource is given), tessera.io/gpu-milli (default 1000), tessera.io/gpu-memory
///    (GpuMemoryToMiB: bytes with a unit suffix, MiB as a bare number); else HAMi's
///    nvidia.com/gpu (count; 1 when only gpumem/gpumem-percentage/gpucores is given),
///    nvidia.com/gpucores (percent; milli = 10 x cores), nvidia.com/gpumem (MiB),
///    nvidia.com/gpumem-percentage (gpu_memory_percent). Without cores (or with 0) a request
///    with memory on one GPU shares it by memory with 1 milli of compute; otherwise absent or
///    0 cores is a whole GPU. One GPU container gives the pod's request; several are allowed
///    only when all take whole GPUs (count by Kubernetes' effective-request rule);
///  - gpu_spec from annotation tessera.io/gpu-model ("A|B"; each model by its engine name,
///    CanonicalGpuModels: "A10|Tesla-T4" -> "A10|T4");
///  - qos from label, else annotation, tessera.io/class, else the Kubernetes QoS class;
///  - topology from annotation tessera.io/topology (ParseTopologyRequest:
///    required|preferred[:nvlink|:numa], or none).
/// Errors: CPU/memory beyond kMaxCpuMilli/kMaxMemoryMib, more than kMaxGpusPerNode GPUs,
/// per-GPU milli outside 1..1000, gpucores outside 0..100, GPU memory beyond
/// kMaxGpuMemoryMib (or not whole MiB as a bare number), gpumem-percentage outside 0..100, a
/// fractional GPU on a multi-GPU pod, per-GPU resources with a zero count, several containers
/// sharing GPUs, a tessera.io/topology value ParseTopologyRequest refuses.
Result<PodSpec> PodToSpec(const Pod& pod);

/// The engine's view of a node:
///  - cpu_milli / memory_mib from status.allocatable (absent = 0);
///  - gpu_count from allocatable tessera.io/gpu, else the healthy devices of HAMi's register
///    annotation (HAMi's allocatable nvidia.com/gpu counts shares, not GPUs), else allocatable
///    nvidia.com/gpu;
///  - gpu_model from label tessera.io/gpu-model, else label nvidia.com/gpu.product (GPU feature
///    discovery), else the HAMi device type (all healthy devices must agree), by its engine
///    name (CanonicalGpuModel: "Tesla-T4" -> "T4", "NVIDIA-A10" -> "A10");
///  - gpu_memory_mib from label tessera.io/gpu-memory (MiB), else the smallest HAMi device
///    memory, else label nvidia.com/gpu.memory (MiB), else KnownGpuMemoryMib(model), else 0;
///  - a node without GPUs has an empty model and 0 GPU memory.
/// GPU index i of the NodeSpec is the i-th healthy HAMi device in annotation order. Errors:
/// bad quantities or labels, values beyond the model's bounds, more than kMaxGpusPerNode GPUs,
/// a malformed register annotation, mixed device types.
///  - topology from NodeTopology (tessera.io/gpu-topology, else HAMi's score annotation); a
///    malformed topology annotation is not an error of the node: the node gets no topology
///    and the message (naming the node's field) goes to *topology_error when given ("" when
///    the annotations are fine).
Result<NodeSpec> NodeToSpec(const Node& node, std::string* topology_error = nullptr);

/// The families of a pod's GPU resources (any container, requests or limits): tessera.io/* and
/// nvidia.com/* names as GpuFamily bits; kNoGpuFamily for a pod without GPU resources.
uint8_t PodGpuFamilies(const Pod& pod);
/// The families a node offers: allocatable tessera.io/gpu > 0 gives kTesseraFamily;
/// allocatable nvidia.com/gpu > 0 or a HAMi register annotation gives kNvidiaFamily.
uint8_t NodeGpuFamilies(const Node& node);
/// What a pod that PodToSpec rejects takes, counted so that nothing it may use looks free
/// (fail closed): CPU and memory from its effective requests, each capped at the engine's bound
/// (0 when unreadable); GPUs as whole GPUs, per container the largest count any GPU resource
/// gives (tessera.io/gpu, nvidia.com/gpu; 1 when only per-GPU resources are named), summed
/// over the containers and capped at kMaxGpusPerNode. The model constraint and class are read
/// as PodToSpec reads them. Never fails.
PodSpec FailClosedSpec(const Pod& pod);

}  // namespace tessera::k8s
