#include "analyze/snapshot_writer.h"

#include <nlohmann/json.hpp>

namespace tessera::analyze {
namespace {

using OrderedJson = nlohmann::ordered_json;

std::string Indices(GpuSet gpus) {
  std::string s;
  for (int g = 0; g < kMaxGpusPerNode; ++g) {
    if (gpus & (GpuSet{1} << g)) s += (s.empty() ? "" : ",") + std::to_string(g);
  }
  return s;
}

}  // namespace

std::string SnapshotJson(const std::vector<NodeSpec>& nodes, const std::vector<PodToWrite>& pods,
                         const std::vector<PdbToWrite>& pdbs) {
  OrderedJson items = OrderedJson::array();
  for (const NodeSpec& n : nodes) {
    OrderedJson res = {{"cpu", std::to_string(n.cpu_milli) + "m"},
                       {"memory", std::to_string(n.memory_mib) + "Mi"},
                       {"pods", "110"}};
    OrderedJson labels = {{"kubernetes.io/hostname", n.name}};
    if (n.gpu_count > 0) {
      res["tessera.io/gpu"] = std::to_string(n.gpu_count);
      labels["tessera.io/gpu-model"] = n.gpu_model;
      if (n.gpu_memory_mib > 0) labels["tessera.io/gpu-memory"] = std::to_string(n.gpu_memory_mib);
    }
    items.push_back(
        {{"apiVersion", "v1"},
         {"kind", "Node"},
         {"metadata", {{"name", n.name}, {"uid", "node-" + n.name}, {"labels", labels}}},
         {"spec", OrderedJson::object()},
         {"status", {{"allocatable", res}, {"capacity", res}}}});
  }
  for (size_t i = 0; i < pods.size(); ++i) {
    const PodToWrite& p = pods[i];
    OrderedJson requests = {{"cpu", std::to_string(p.spec.cpu_milli) + "m"},
                            {"memory", std::to_string(p.spec.memory_mib) + "Mi"}};
    OrderedJson limits = OrderedJson::object();
    if (p.spec.gpu_count > 0 && p.spec.gpu_milli > 0) {
      for (OrderedJson* r : {&requests, &limits}) {
        (*r)["tessera.io/gpu"] = std::to_string(p.spec.gpu_count);
        if (p.spec.gpu_milli < kMilliPerGpu) {
          (*r)["tessera.io/gpu-milli"] = std::to_string(p.spec.gpu_milli);
        }
      }
    }
    OrderedJson meta = {{"name", p.spec.name},
                        {"namespace", p.namespace_name},
                        {"uid", "uid-" + std::to_string(i)}};
    OrderedJson labels = OrderedJson::object();
    for (const auto& [k, v] : p.labels) labels[k] = v;
    if (!p.spec.qos.empty()) labels["tessera.io/class"] = p.spec.qos;
    meta["labels"] = labels;
    OrderedJson annotations = OrderedJson::object();
    if (!p.spec.gpu_spec.empty()) annotations["tessera.io/gpu-model"] = p.spec.gpu_spec;
    if (p.node >= 0 && p.gpus != 0) annotations["tessera.io/gpu-indices"] = Indices(p.gpus);
    meta["annotations"] = annotations;
    if (!p.owner_kind.empty()) {
      std::string owner = p.owner_name;
      if (owner.empty()) {
        const size_t dash = p.spec.name.rfind('-');
        owner = dash == std::string::npos ? p.spec.name : p.spec.name.substr(0, dash);
      }
      meta["ownerReferences"] = OrderedJson::array({{{"apiVersion", "apps/v1"},
                                                     {"kind", p.owner_kind},
                                                     {"name", owner},
                                                     {"uid", "owner-" + owner},
                                                     {"controller", true},
                                                     {"blockOwnerDeletion", true}}});
    }
    OrderedJson spec = {
        {"schedulerName", "tessera-scheduler"},
        {"priority", p.priority},
        {"containers",
         OrderedJson::array({{{"name", "main"},
                              {"image", "busybox"},
                              {"resources", {{"requests", requests}, {"limits", limits}}}}})}};
    if (p.node >= 0) spec["nodeName"] = nodes[p.node].name;
    OrderedJson status = {{"phase", p.node >= 0 ? "Running" : "Pending"}};
    if (p.node >= 0) {
      status["containerStatuses"] =
          OrderedJson::array({{{"name", "main"}, {"ready", true}, {"restartCount", p.restarts}}});
    }
    items.push_back({{"apiVersion", "v1"},
                     {"kind", "Pod"},
                     {"metadata", meta},
                     {"spec", spec},
                     {"status", status}});
  }
  for (const PdbToWrite& b : pdbs) {
    OrderedJson spec = {{"selector", {{"matchLabels", b.match_labels}}}};
    if (b.min_available >= 0) spec["minAvailable"] = b.min_available;
    if (b.max_unavailable >= 0) spec["maxUnavailable"] = b.max_unavailable;
    items.push_back({{"apiVersion", "policy/v1"},
                     {"kind", "PodDisruptionBudget"},
                     {"metadata", {{"name", b.name}, {"namespace", b.namespace_name}}},
                     {"spec", spec}});
  }
  OrderedJson list = {{"apiVersion", "v1"},
                      {"kind", "List"},
                      {"items", items},
                      {"metadata", {{"resourceVersion", ""}}}};
  return list.dump();
}

}  // namespace tessera::analyze
