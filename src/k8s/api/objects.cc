#include "k8s/api/objects.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "k8s/api/json_util.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;

// Reads one quantity value (a string, or a number as Quantity.UnmarshalJSON accepts).
Result<Quantity> ReadQuantity(const Json& v, std::string_view path) {
  std::string text;
  if (v.is_string()) {
    text = v.get_ref<const std::string&>();
  } else if (v.is_number()) {
    text = v.dump();
  } else {
    return TypeError(path, "quantity string", v);
  }
  Result<Quantity> q = ParseQuantity(text);
  if (!q.ok()) return ErrorAt(path, q.error().message);
  if (q->nano < 0) return ErrorAt(path, "negative quantity " + QuoteForError(text));
  return q;
}

// Reads a map of quantities (resources.requests, status.allocatable) into *out as exact values
// and, when `text` is given, as their text.
Status ReadResourceMap(const Json* v, std::string_view path, ResourceList* out,
                       std::map<std::string, std::string>* text = nullptr) {
  if (v == nullptr || v->is_null()) return Status();
  if (!v->is_object()) return TypeError(path, "object of quantities", *v);
  for (auto it = v->begin(); it != v->end(); ++it) {
    if (it->is_null()) continue;
    const std::string item_path = PathKey(path, it.key());
    Result<Quantity> q = ReadQuantity(*it, item_path);
    if (!q.ok()) return q.error();
    if (out != nullptr) (*out)[it.key()] = *q;
    if (text != nullptr) {
      (*text)[it.key()] = it->is_string() ? it->get<std::string>() : it->dump();
    }
  }
  return Status();
}

// Adds every amount of `b` into `a`.
Status AddInto(ResourceList* a, const ResourceList& b, std::string_view path) {
  for (const auto& [name, q] : b) {
    Result<Quantity> sum = AddQuantities((*a)[name], q);
    if (!sum.ok())
      return ErrorAt(path, "total of " + QuoteForError(name) + ": " + sum.error().message);
    (*a)[name] = *sum;
  }
  return Status();
}

// Raises every amount of `a` to at least that of `b`.
void MaxInto(ResourceList* a, const ResourceList& b) {
  for (const auto& [name, q] : b) {
    auto it = a->find(name);
    if (it == a->end()) {
      a->emplace(name, q);
    } else if (it->second < q) {
      it->second = q;
    }
  }
}

Result<Container> DecodeContainer(const Json& j, std::string path, Container::Kind kind) {
  if (!j.is_object()) return TypeError(path, "container object", j);
  Container c;
  c.kind = kind;
  c.json_path = path;
  TESSERA_RETURN_IF_ERROR(ReadString(FindField(j, "name"), PathKey(path, "name"), &c.name));
  if (kind != Container::Kind::kApp) {
    std::string restart_policy;
    TESSERA_RETURN_IF_ERROR(
        ReadString(FindField(j, "restartPolicy"), PathKey(path, "restartPolicy"), &restart_policy));
    if (restart_policy == "Always") c.kind = Container::Kind::kSidecar;
  }
  const Json* resources = nullptr;
  TESSERA_ASSIGN_OR_RETURN(resources, ObjectField(j, "resources", path));
  if (resources != nullptr) {
    const std::string rpath = PathKey(path, "resources");
    std::map<std::string, std::string> request_text;
    std::map<std::string, std::string> limit_text;
    TESSERA_RETURN_IF_ERROR(ReadResourceMap(
        FindField(*resources, "requests"), PathKey(rpath, "requests"), &c.requests, &request_text));
    TESSERA_RETURN_IF_ERROR(ReadResourceMap(FindField(*resources, "limits"),
                                            PathKey(rpath, "limits"), &c.limits, &limit_text));
    const std::string key(kTesseraGpuMemory);
    if (auto it = request_text.find(key); it != request_text.end()) {
      c.gpu_memory_text = it->second;
    } else if (auto lt = limit_text.find(key); lt != limit_text.end()) {
      c.gpu_memory_text = lt->second;
    }
  }
  for (const auto& [name, q] : c.limits) c.requests.emplace(name, q);  // request defaults to limit
  return c;
}

// *a += b, held at kMaxNano (only compared afterwards, so saturation is harmless).
void SaturatingAdd(Quantity* a, Quantity b) {
  Result<Quantity> sum = AddQuantities(*a, b);
  *a = sum.ok() ? *sum : Quantity{Quantity::kMaxNano};
}

// The Kubernetes QoS class (pkg/apis/core/v1/helper/qos), from defaulted requests.
std::string ComputeQosClass(const std::vector<Container>& containers) {
  ResourceList requests;
  ResourceList limits;
  bool guaranteed = true;
  for (const Container& c : containers) {
    for (const auto& [name, q] : c.requests) {
      if ((name == kResourceCpu || name == kResourceMemory) && q.nano != 0) {
        SaturatingAdd(&requests[name], q);
      }
    }
    int limits_found = 0;
    for (const auto& [name, q] : c.limits) {
      if ((name == kResourceCpu || name == kResourceMemory) && q.nano != 0) {
        ++limits_found;
        SaturatingAdd(&limits[name], q);
      }
    }
    if (limits_found != 2) guaranteed = false;
  }
  if (requests.empty() && limits.empty()) return "BestEffort";
  if (guaranteed) {
    for (const auto& [name, q] : requests) {
      auto it = limits.find(name);
      if (it == limits.end() || it->second != q) {
        guaranteed = false;
        break;
      }
    }
  }
  return guaranteed && requests.size() == limits.size() ? "Guaranteed" : "Burstable";
}

// The pod's effective request (k8s.io/component-helpers/resource PodRequests).
Result<ResourceList> EffectiveRequests(const std::vector<Container>& containers,
                                       const ResourceList& overhead, std::string_view path) {
  ResourceList sum;
  ResourceList sidecars;
  ResourceList init_max;
  for (const Container& c : containers) {
    switch (c.kind) {
      case Container::Kind::kApp:
        TESSERA_RETURN_IF_ERROR(AddInto(&sum, c.requests, path));
        break;
      case Container::Kind::kSidecar:
        TESSERA_RETURN_IF_ERROR(AddInto(&sum, c.requests, path));
        TESSERA_RETURN_IF_ERROR(AddInto(&sidecars, c.requests, path));
        MaxInto(&init_max, sidecars);
        break;
      case Container::Kind::kInit: {
        ResourceList with_sidecars = c.requests;
        TESSERA_RETURN_IF_ERROR(AddInto(&with_sidecars, sidecars, path));
        MaxInto(&init_max, with_sidecars);
        break;
      }
    }
  }
  MaxInto(&sum, init_max);
  TESSERA_RETURN_IF_ERROR(AddInto(&sum, overhead, path));
  return sum;
}

Status DecodeMetadata(const Json& obj, std::string_view path, std::string* uid, std::string* name,
                      std::string* ns, std::string* resource_version,
                      std::map<std::string, std::string>* labels,
                      std::map<std::string, std::string>* annotations, bool* deleting,
                      std::string* created = nullptr) {
  const Json* m = nullptr;
  TESSERA_ASSIGN_OR_RETURN(m, ObjectField(obj, "metadata", path));
  if (m == nullptr) return Status();
  const std::string mpath = PathKey(path, "metadata");
  TESSERA_RETURN_IF_ERROR(ReadString(FindField(*m, "uid"), PathKey(mpath, "uid"), uid));
  TESSERA_RETURN_IF_ERROR(ReadString(FindField(*m, "name"), PathKey(mpath, "name"), name));
  if (ns != nullptr) {
    TESSERA_RETURN_IF_ERROR(
        ReadString(FindField(*m, "namespace"), PathKey(mpath, "namespace"), ns));
  }
  TESSERA_RETURN_IF_ERROR(ReadString(FindField(*m, "resourceVersion"),
                                     PathKey(mpath, "resourceVersion"), resource_version));
  TESSERA_RETURN_IF_ERROR(ReadStringMap(FindField(*m, "labels"), PathKey(mpath, "labels"), labels));
  TESSERA_RETURN_IF_ERROR(
      ReadStringMap(FindField(*m, "annotations"), PathKey(mpath, "annotations"), annotations));
  if (deleting != nullptr) {
    std::string deletion;
    const Json* d = FindField(*m, "deletionTimestamp");
    TESSERA_RETURN_IF_ERROR(ReadString(d, PathKey(mpath, "deletionTimestamp"), &deletion));
    *deleting = d != nullptr && !d->is_null();
  }
  if (created != nullptr) {
    // Only for the wait metrics: a creationTimestamp that is not a string is ignored, not an
    // error (the pod's request and placement do not depend on it).
    const Json* c = FindField(*m, "creationTimestamp");
    if (c != nullptr && c->is_string()) *created = c->get<std::string>();
  }
  return Status();
}

}  // namespace

Result<Pod> DecodePod(const Json& j, std::string_view path) {
  if (!j.is_object()) return TypeError(path, "Pod object", j);
  Pod pod;
  pod.json_path = std::string(path);
  TESSERA_RETURN_IF_ERROR(DecodeMetadata(j, path, &pod.uid, &pod.name, &pod.namespace_name,
                                         &pod.resource_version, &pod.labels, &pod.annotations,
                                         &pod.deleting, &pod.creation_timestamp));
  const Json* spec = nullptr;
  TESSERA_ASSIGN_OR_RETURN(spec, ObjectField(j, "spec", path));
  ResourceList overhead;
  if (spec != nullptr) {
    const std::string spath = PathKey(path, "spec");
    TESSERA_RETURN_IF_ERROR(
        ReadString(FindField(*spec, "nodeName"), PathKey(spath, "nodeName"), &pod.node_name));
    TESSERA_RETURN_IF_ERROR(ReadString(FindField(*spec, "schedulerName"),
                                       PathKey(spath, "schedulerName"), &pod.scheduler_name));
    int64_t priority = 0;
    TESSERA_RETURN_IF_ERROR(ReadInt64(FindField(*spec, "priority"), PathKey(spath, "priority"),
                                      std::numeric_limits<int32_t>::min(),
                                      std::numeric_limits<int32_t>::max(), &priority));
    pod.priority = static_cast<int32_t>(priority);
    std::string preemption_policy;
    TESSERA_RETURN_IF_ERROR(ReadString(FindField(*spec, "preemptionPolicy"),
                                       PathKey(spath, "preemptionPolicy"), &preemption_policy));
    pod.preempt_never = preemption_policy == "Never";
    const std::pair<std::string_view, Container::Kind> lists[] = {
        {"containers", Container::Kind::kApp}, {"initContainers", Container::Kind::kInit}};
    for (const auto& [key, kind] : lists) {
      const Json* list = nullptr;
      TESSERA_ASSIGN_OR_RETURN(list, ArrayField(*spec, key, spath));
      if (list == nullptr) continue;
      const std::string lpath = PathKey(spath, key);
      for (size_t i = 0; i < list->size(); ++i) {
        Container c;
        TESSERA_ASSIGN_OR_RETURN(c, DecodeContainer((*list)[i], PathIndex(lpath, i), kind));
        pod.containers.push_back(std::move(c));
      }
    }
    TESSERA_RETURN_IF_ERROR(
        ReadResourceMap(FindField(*spec, "overhead"), PathKey(spath, "overhead"), &overhead));
  }
  const Json* status = nullptr;
  TESSERA_ASSIGN_OR_RETURN(status, ObjectField(j, "status", path));
  if (status != nullptr) {
    const std::string stpath = PathKey(path, "status");
    TESSERA_RETURN_IF_ERROR(
        ReadString(FindField(*status, "phase"), PathKey(stpath, "phase"), &pod.phase));
    TESSERA_RETURN_IF_ERROR(
        ReadString(FindField(*status, "qosClass"), PathKey(stpath, "qosClass"), &pod.qos_class));
    TESSERA_RETURN_IF_ERROR(ReadString(FindField(*status, "nominatedNodeName"),
                                       PathKey(stpath, "nominatedNodeName"),
                                       &pod.nominated_node_name));
    // Read leniently, as creationTimestamp: only the victim order depends on it.
    const Json* started = FindField(*status, "startTime");
    if (started != nullptr && started->is_string()) {
      pod.start_timestamp = started->get<std::string>();
    }
    // Conditions of the wrong shape are ignored, not an error: only `tessera record` (the
    // PodScheduled time) and the headroom (DisruptionTarget: a preemption victim) read them.
    const Json* conditions = FindField(*status, "conditions");
    if (conditions != nullptr && conditions->is_array()) {
      for (const Json& c : *conditions) {
        if (!c.is_object()) continue;
        const Json* type = FindField(c, "type");
        const Json* value = FindField(c, "status");
        if (type == nullptr || !type->is_string() || value == nullptr || !value->is_string() ||
            *value != "True") {
          continue;
        }
        // kube-scheduler's mark on a preemption victim; drains, the taint manager, pod GC and
        // the kubelet set the same condition with other reasons.
        const Json* reason = FindField(c, "reason");
        if (*type == "DisruptionTarget" && reason != nullptr && reason->is_string() &&
            *reason == "PreemptionByScheduler") {
          pod.disruption_target = true;
        }
        const Json* at = FindField(c, "lastTransitionTime");
        if (*type == "PodScheduled" && at != nullptr && at->is_string()) {
          pod.scheduled_timestamp = at->get<std::string>();
        }
      }
    }
  }
  if (pod.qos_class.empty()) pod.qos_class = ComputeQosClass(pod.containers);
  TESSERA_ASSIGN_OR_RETURN(pod.requests,
                           EffectiveRequests(pod.containers, overhead, PathKey(path, "spec")));
  return pod;
}

Result<Node> DecodeNode(const Json& j, std::string_view path) {
  if (!j.is_object()) return TypeError(path, "Node object", j);
  Node node;
  node.json_path = std::string(path);
  TESSERA_RETURN_IF_ERROR(DecodeMetadata(j, path, &node.uid, &node.name, nullptr,
                                         &node.resource_version, &node.labels, &node.annotations,
                                         nullptr));
  const Json* spec = nullptr;
  TESSERA_ASSIGN_OR_RETURN(spec, ObjectField(j, "spec", path));
  if (spec != nullptr) {
    TESSERA_RETURN_IF_ERROR(ReadBool(FindField(*spec, "unschedulable"),
                                     PathKey(PathKey(path, "spec"), "unschedulable"),
                                     &node.unschedulable));
  }
  const Json* status = nullptr;
  TESSERA_ASSIGN_OR_RETURN(status, ObjectField(j, "status", path));
  if (status != nullptr) {
    const std::string stpath = PathKey(path, "status");
    TESSERA_RETURN_IF_ERROR(ReadResourceMap(FindField(*status, "allocatable"),
                                            PathKey(stpath, "allocatable"), nullptr,
                                            &node.allocatable));
    TESSERA_RETURN_IF_ERROR(ReadResourceMap(FindField(*status, "capacity"),
                                            PathKey(stpath, "capacity"), nullptr, &node.capacity));
  }
  return node;
}

Result<Pod> ParsePodJson(std::string_view text) {
  Result<Json> j = ParseJson(text, kDefaultMaxBodyBytes, "Pod");
  if (!j.ok()) return j.error();
  return DecodePod(*j, "Pod");
}

Result<Node> ParseNodeJson(std::string_view text) {
  Result<Json> j = ParseJson(text, kDefaultMaxBodyBytes, "Node");
  if (!j.ok()) return j.error();
  return DecodeNode(*j, "Node");
}

std::optional<double> Rfc3339Seconds(std::string_view t) {
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM); std::chrono's civil calendar does the days.
  const auto digits = [&](size_t at, size_t n, int* out) {
    if (at + n > t.size()) return false;
    const auto [p, ec] = std::from_chars(t.data() + at, t.data() + at + n, *out);
    return ec == std::errc() && p == t.data() + at + n;
  };
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (t.size() < 20 || !digits(0, 4, &y) || t[4] != '-' || !digits(5, 2, &mo) || t[7] != '-' ||
      !digits(8, 2, &d) || (t[10] != 'T' && t[10] != 't') || !digits(11, 2, &h) || t[13] != ':' ||
      !digits(14, 2, &mi) || t[16] != ':' || !digits(17, 2, &s) || h > 23 || mi > 59 || s > 60) {
    return std::nullopt;
  }
  const std::chrono::year_month_day date{std::chrono::year{y},
                                         std::chrono::month{static_cast<unsigned>(mo)},
                                         std::chrono::day{static_cast<unsigned>(d)}};
  if (!date.ok()) return std::nullopt;
  size_t at = 19;
  double fraction = 0;
  if (t[at] == '.') {
    double scale = 0.1;
    ++at;
    const size_t begin = at;
    for (; at < t.size() && t[at] >= '0' && t[at] <= '9'; ++at, scale /= 10) {
      fraction += (t[at] - '0') * scale;
    }
    if (at == begin) return std::nullopt;
  }
  int offset_s = 0;
  if (at + 1 == t.size() && (t[at] == 'Z' || t[at] == 'z')) {
    // UTC
  } else if (at + 6 == t.size() && (t[at] == '+' || t[at] == '-') && t[at + 3] == ':') {
    int oh = 0, om = 0;
    if (!digits(at + 1, 2, &oh) || !digits(at + 4, 2, &om) || oh > 23 || om > 59) {
      return std::nullopt;
    }
    offset_s = (t[at] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
  } else {
    return std::nullopt;
  }
  const auto days = std::chrono::sys_days(date).time_since_epoch().count();
  return static_cast<double>(days) * 86400 + h * 3600 + mi * 60 + s - offset_s + fraction;
}

}  // namespace tessera::k8s
