#pragma once

// Kubernetes Pod and Node objects as Tessera reads them (core/v1, the fields it uses). Decoding
// is boundary code for untrusted JSON: every error names the JSON path
// ("Pod.spec.containers[1].resources.requests.memory: bad quantity \"12Zi\" ...") and nothing
// throws. All functions are pure and thread-safe. The translation into the engine's PodSpec /
// NodeSpec is in k8s/translate/translate.h.

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "k8s/api/quantity.h"
#include "util/result.h"

namespace tessera::k8s {

// Resource names, labels and annotations Tessera reads (docs/EXTENDER.md has the table).
inline constexpr std::string_view kResourceCpu = "cpu";
inline constexpr std::string_view kResourceMemory = "memory";
inline constexpr std::string_view kTesseraGpu = "tessera.io/gpu";             ///< GPU count
inline constexpr std::string_view kTesseraGpuMilli = "tessera.io/gpu-milli";  ///< per GPU
inline constexpr std::string_view kTesseraGpuMemory =
    "tessera.io/gpu-memory";                                          ///< per GPU (GpuMemoryToMiB)
inline constexpr std::string_view kNvidiaGpu = "nvidia.com/gpu";      ///< GPU count
inline constexpr std::string_view kHamiGpuMem = "nvidia.com/gpumem";  ///< MiB per GPU
inline constexpr std::string_view kHamiGpuCores = "nvidia.com/gpucores";  ///< % of a GPU
inline constexpr std::string_view kHamiGpuMemPercent = "nvidia.com/gpumem-percentage";
inline constexpr std::string_view kGpuModelKey = "tessera.io/gpu-model";  ///< pod ann., node label
inline constexpr std::string_view kGpuMemoryLabel =
    "tessera.io/gpu-memory";                                       ///< node label (GpuMemoryToMiB)
inline constexpr std::string_view kClassKey = "tessera.io/class";  ///< pod label or ann.
inline constexpr std::string_view kNvidiaProductLabel = "nvidia.com/gpu.product";  ///< GFD
inline constexpr std::string_view kNvidiaMemoryLabel = "nvidia.com/gpu.memory";    ///< GFD, MiB

/// The key of a namespaced object in the model, `/state` and the logs: "namespace/name", or the
/// name alone when the namespace is empty.
inline std::string ObjectKey(std::string_view ns, std::string_view name) {
  std::string key;
  if (!ns.empty()) {
    key.reserve(ns.size() + 1 + name.size());
    key.append(ns).push_back('/');
  }
  return key.append(name);
}

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
  /// tessera.io/gpu-memory as written (the request, else the limit); empty when absent. Its
  /// unit rule (GpuMemoryToMiB: a suffix means bytes, a bare number MiB) needs the text.
  std::string gpu_memory_text;

  bool operator==(const Container&) const = default;
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
  bool preempt_never = false;  ///< spec.preemptionPolicy: Never (it never evicts other pods)
  std::string phase;           ///< status.phase: Pending, Running, Succeeded, Failed, Unknown
  /// status.nominatedNodeName: where kube-scheduler's preemption made room for the pod.
  std::string nominated_node_name;
  /// status.conditions holds DisruptionTarget=True with reason PreemptionByScheduler:
  /// kube-scheduler marks a preemption victim so before deleting it (an eviction by a drain,
  /// the taint manager or the kubelet has another reason and is not a victim).
  bool disruption_target = false;
  bool deleting = false;  ///< metadata.deletionTimestamp is set
  /// metadata.creationTimestamp as given (RFC 3339, "2026-01-02T03:04:05Z"; "" when absent or
  /// not a string); CreationSeconds reads it.
  std::string creation_timestamp;
  /// status.conditions[type=PodScheduled, status=True].lastTransitionTime as given (RFC 3339;
  /// "" when absent or not a string): when the pod was bound. Read leniently, as
  /// creation_timestamp (for `tessera record`).
  std::string scheduled_timestamp;
  /// status.startTime as given (RFC 3339; "" when absent or not a string): when the kubelet
  /// started it (the victim order of preemption reads it, as kube-scheduler does).
  std::string start_timestamp;
  /// status.qosClass when present, else computed as Kubernetes does: Guaranteed, Burstable or
  /// BestEffort.
  std::string qos_class;
  std::vector<Container> containers;  ///< app containers, then init containers, in order
  /// The pod's effective request per resource, by Kubernetes' rule: max(sum over app and
  /// sidecar containers, each init container plus the sidecars started before it) plus
  /// spec.overhead.
  ResourceList requests;

  bool operator==(const Pod&) const = default;
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

  bool operator==(const Node&) const = default;
};

/// Seconds since the Unix epoch of an RFC 3339 UTC time as the API server writes it
/// ("2026-01-02T03:04:05Z", optionally with a fraction of a second or a numeric offset); nullopt
/// when `text` is not one. Pure.
std::optional<double> Rfc3339Seconds(std::string_view text);

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

}  // namespace tessera::k8s
