#pragma once

// Kubernetes Pod and Node objects as Tessera reads them, and their translation into the
// engine's PodSpec / NodeSpec. Decoding is boundary code for untrusted JSON: every error names
// the JSON path ("Pod.spec.containers[1].resources.requests.memory: bad quantity \"12Zi\" ...")
// and nothing throws. All functions are pure and thread-safe.

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "k8s/api/quantity.h"
#include "model/node.h"
#include "model/pod.h"
#include "util/result.h"

namespace tessera::k8s {

// Resource names, labels and annotations Tessera reads (docs/EXTENDER.md has the table).
inline constexpr std::string_view kResourceCpu = "cpu";
inline constexpr std::string_view kResourceMemory = "memory";
inline constexpr std::string_view kTesseraGpu = "tessera.io/gpu";               ///< GPU count
inline constexpr std::string_view kTesseraGpuMilli = "tessera.io/gpu-milli";    ///< per GPU
inline constexpr std::string_view kTesseraGpuMemory = "tessera.io/gpu-memory";  ///< MiB per GPU
inline constexpr std::string_view kNvidiaGpu = "nvidia.com/gpu";                ///< GPU count
inline constexpr std::string_view kHamiGpuMem = "nvidia.com/gpumem";            ///< MiB per GPU
inline constexpr std::string_view kHamiGpuCores = "nvidia.com/gpucores";        ///< % of a GPU
inline constexpr std::string_view kHamiGpuMemPercent = "nvidia.com/gpumem-percentage";
inline constexpr std::string_view kGpuModelKey = "tessera.io/gpu-model";  ///< pod ann., node label
inline constexpr std::string_view kGpuMemoryLabel = "tessera.io/gpu-memory";  ///< node label, MiB
inline constexpr std::string_view kClassKey = "tessera.io/class";             ///< pod label or ann.
inline constexpr std::string_view kNvidiaProductLabel = "nvidia.com/gpu.product";  ///< GFD
inline constexpr std::string_view kNvidiaMemoryLabel = "nvidia.com/gpu.memory";    ///< GFD, MiB
inline constexpr std::string_view kHamiRegisterAnnotation = "hami.io/node-nvidia-register";

/// Resource amounts by resource name ("cpu", "memory", "nvidia.com/gpu"), exact.
using ResourceList = std::map<std::string, Quantity>;

/// One container of a pod, reduced to its resources.
struct Container {
  enum class Kind : uint8_t {
    kApp,      ///< spec.containers
    kInit,     ///< spec.initContainers, runs to completion before the app containers
    kSidecar,  ///< spec.initContainers with restartPolicy: Always (runs beside the app)
  };
  std::string name;
  Kind kind = Kind::kApp;
  std::string json_path;  ///< where it was decoded, e.g. "Pod.spec.containers[1]"
  /// resources.requests, plus every resource given only in resources.limits (the API server
  /// defaults a missing request to its limit).
  ResourceList requests;
  ResourceList limits;  ///< resources.limits
};

/// A Kubernetes Pod (core/v1), the fields Tessera uses.
struct Pod {
  std::string json_path;  ///< where it was decoded, for error messages ("Pod")
  std::string uid;
  std::string name;
  std::string namespace_name;
  std::string resource_version;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::string node_name;       ///< spec.nodeName; empty while unbound
  std::string scheduler_name;  ///< spec.schedulerName
  int32_t priority = 0;        ///< spec.priority (0 when absent)
  std::string phase;           ///< status.phase: Pending, Running, Succeeded, Failed, Unknown
  bool deleting = false;       ///< metadata.deletionTimestamp is set
  /// status.qosClass when present, else computed as Kubernetes does: Guaranteed, Burstable or
  /// BestEffort.
  std::string qos_class;
  std::vector<Container> containers;  ///< app containers, then init containers, in order
  /// The pod's effective request per resource, by Kubernetes' rule: max(sum over app and
  /// sidecar containers, each init container plus the sidecars started before it) plus
  /// spec.overhead.
  ResourceList requests;
};

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

/// A Kubernetes Node (core/v1), the fields Tessera uses.
struct Node {
  std::string json_path;  ///< where it was decoded, for error messages ("Node")
  std::string name;
  std::string uid;
  std::string resource_version;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  bool unschedulable = false;  ///< spec.unschedulable (cordoned)
  /// status.allocatable / status.capacity as quantity text (JSON numbers as their text);
  /// every value is checked to be a valid, non-negative quantity when decoded.
  std::map<std::string, std::string> allocatable;
  std::map<std::string, std::string> capacity;
};

/// Decodes a Pod object. `path` names it in errors ("Pod", "NodeNameToVictims[\"n1\"].Pods[0]").
/// Field names match as Go's encoding/json does (exact, else ignoring ASCII case); unknown fields
/// are ignored; null is the zero value. Wrong types, bad or negative quantities and sums out of
/// range are errors.
Result<Pod> DecodePod(const nlohmann::json& j, std::string_view path);
/// Decodes a Node object; as DecodePod.
Result<Node> DecodeNode(const nlohmann::json& j, std::string_view path);
/// Parses JSON text holding one Pod (at most 16 MiB); errors start with "Pod".
Result<Pod> ParsePodJson(std::string_view text);
/// Parses JSON text holding one Node (at most 16 MiB); errors start with "Node".
Result<Node> ParseNodeJson(std::string_view text);

/// Parses HAMi's register annotation. Two encodings exist:
///  - the documented one (HAMi docs/develop/protocol.md): devices separated by ':' (a trailing
///    ':' is usual), each "UUID,splitCount,memMiB,cores,type,numa,healthy" (7 fields) or the
///    newer 9 fields "...,healthy,index,mode";
///  - a JSON array written by recent HAMi releases:
///    [{"id","index","count","devmem","devcore","type","numa","mode","health"}], absent
///    fields being zero/false (Go omitempty).
/// Errors name the device and field. Pure; thread-safe.
Result<std::vector<HamiDevice>> ParseHamiNodeRegister(std::string_view value);

/// The engine's view of a pod (units: milli-CPU, MiB, milli-GPU):
///  - name "namespace/name"; cpu_milli and memory_mib from the effective "cpu"/"memory"
///    requests (milli rounded up, MiB rounded down);
///  - GPUs per container, first family present: tessera.io/gpu (count; 1 when only a per-GPU
///    resource is given), tessera.io/gpu-milli (default 1000), tessera.io/gpu-memory (MiB);
///    else HAMi's nvidia.com/gpu (count; 1 when only gpumem/gpucores is given),
///    nvidia.com/gpucores (percent; milli = 10 x cores; absent or 0 = 1000, a whole GPU),
///    nvidia.com/gpumem (MiB). One GPU container gives the pod's request; several are allowed
///    only when all take whole GPUs (count by Kubernetes' effective-request rule);
///  - gpu_spec from annotation tessera.io/gpu-model ("A|B", blanks trimmed);
///  - qos from label, else annotation, tessera.io/class, else the Kubernetes QoS class.
/// Errors: CPU/memory beyond kMaxCpuMilli/kMaxMemoryMib, more than kMaxGpusPerNode GPUs,
/// per-GPU milli outside 1..1000, gpucores outside 0..100, GPU memory beyond
/// kMaxGpuMemoryMib, a fractional GPU on a multi-GPU pod, per-GPU resources with a zero count,
/// nvidia.com/gpumem-percentage (unsupported), several containers sharing GPUs.
Result<PodSpec> PodToSpec(const Pod& pod);

/// The engine's view of a node:
///  - cpu_milli / memory_mib from status.allocatable (absent = 0);
///  - gpu_count from allocatable tessera.io/gpu, else the healthy devices of HAMi's register
///    annotation (HAMi's allocatable nvidia.com/gpu counts shares, not GPUs), else allocatable
///    nvidia.com/gpu;
///  - gpu_model from label tessera.io/gpu-model, else label nvidia.com/gpu.product, else the
///    HAMi device type (all healthy devices must agree);
///  - gpu_memory_mib from label tessera.io/gpu-memory (MiB), else the smallest HAMi device
///    memory, else label nvidia.com/gpu.memory (MiB), else KnownGpuMemoryMib(model), else 0;
///  - a node without GPUs has an empty model and 0 GPU memory.
/// GPU index i of the NodeSpec is the i-th healthy HAMi device in annotation order. Errors:
/// bad quantities or labels, values beyond the model's bounds, more than kMaxGpusPerNode GPUs,
/// a malformed register annotation, mixed device types.
Result<NodeSpec> NodeToSpec(const Node& node);

}  // namespace tessera::k8s
