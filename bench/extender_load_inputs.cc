// tessera_extender_inputs: writes the inputs of the extender load benchmark
// (bench/extender_load.sh) from the openb trace: kubectl-shaped NodeList and PodList JSON for
// `tessera serve`, and request bodies for wrk. Nothing here is timed.
//
// Usage: tessera_extender_inputs NODES.csv PODS.csv OUT_DIR [--nodes 1213,5000] [--load 0.5]
//
// For each cluster size N (the trace's nodes, replicated with a "-rK" suffix past the first
// copy) it writes into OUT_DIR:
//   nodes-N.json   v1 NodeList (allocatable cpu/memory/tessera.io/gpu, GPU model and memory
//                  labels), as `kubectl get nodes -o json` prints it;
//   pods-N.json    v1 PodList: the trace's pods, in trace order; those that FGD placed (on the
//                  trace's nodes, until --load of the GPU capacity is allocated) are bound
//                  (spec.nodeName + tessera.io/gpu-indices, replicated with their nodes), the
//                  rest are pending and only shape the target workload M;
//   names-N.txt    the node names, one a line;
//   filter-N-SHAPE.json  a filter/prioritize body {"Pod", "Nodes": null, "NodeNames": [every
//                  node]} for each pod shape (the most frequent pod of each kind in the trace:
//                  share, gpu1, gpu2, gpu4, gpu8, model = a pod restricted to GPU models);
// and bind-pod.json: a small sharing pod (100 milli-GPU, 100m CPU, 128 MiB) whose uid is
// "__UID__", for the filter → bind load.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "frag/target_workload.h"
#include "model/cluster.h"
#include "policy/policy.h"
#include "sched/scheduler.h"
#include "trace/csv_reader.h"
#include "util/file.h"

namespace tessera {
namespace {

using Json = nlohmann::ordered_json;

std::string Milli(int64_t milli) {
  return milli % 1000 == 0 ? std::to_string(milli / 1000) : std::to_string(milli) + "m";
}

Json NodeJson(const NodeSpec& n, const std::string& name) {
  Json labels = {{"kubernetes.io/hostname", name}, {"tessera.io/gpu-model", n.gpu_model}};
  if (n.gpu_memory_mib > 0) labels["tessera.io/gpu-memory"] = std::to_string(n.gpu_memory_mib);
  Json allocatable = {{"cpu", Milli(n.cpu_milli)},
                      {"memory", std::to_string(n.memory_mib) + "Mi"},
                      {"pods", "110"},
                      {"tessera.io/gpu", std::to_string(n.gpu_count)}};
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"uid", "uid-" + name}, {"labels", labels}}},
          {"spec", Json::object()},
          {"status", {{"allocatable", allocatable}, {"capacity", allocatable}}}};
}

std::string Indices(GpuSet gpus) {
  std::string out;
  for (int i = 0; i < kMaxGpusPerNode; ++i) {
    if (gpus & (GpuSet{1} << i)) out += (out.empty() ? "" : ",") + std::to_string(i);
  }
  return out;
}

Json PodJson(const PodSpec& p, const std::string& name, const std::string& uid,
             const std::string& node, GpuSet gpus) {
  Json limits = {{"cpu", Milli(p.cpu_milli)}, {"memory", std::to_string(p.memory_mib) + "Mi"}};
  if (p.gpu_count > 0) {
    limits["tessera.io/gpu"] = std::to_string(p.gpu_count);
    limits["tessera.io/gpu-milli"] = std::to_string(p.gpu_milli);
  }
  Json annotations = Json::object();
  if (!p.gpu_spec.empty()) annotations["tessera.io/gpu-model"] = p.gpu_spec;
  if (!node.empty() && gpus != 0) annotations["tessera.io/gpu-indices"] = Indices(gpus);
  Json spec = {{"containers",
                {{{"name", "main"},
                  {"image", "registry.example/openb:1"},
                  {"resources", {{"limits", limits}, {"requests", limits}}}}}},
               {"priority", 0},
               {"schedulerName", "tessera-scheduler"}};
  if (!node.empty()) spec["nodeName"] = node;
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", name},
            {"namespace", "openb"},
            {"uid", uid},
            {"labels", {{"app", "openb"}}},
            {"annotations", annotations}}},
          {"spec", spec},
          {"status", {{"phase", node.empty() ? "Pending" : "Running"}}}};
}

std::string NodeName(const std::vector<NodeSpec>& base, int i) {
  const int b = i % static_cast<int>(base.size());
  const int replica = i / static_cast<int>(base.size());
  return replica == 0 ? base[b].name : base[b].name + "-r" + std::to_string(replica);
}

// The most frequent pod of each kind.
std::map<std::string, PodSpec> Shapes(const std::vector<PodSpec>& pods) {
  std::map<std::string, std::map<std::tuple<int64_t, int64_t, int, int32_t, std::string>, int>>
      counts;
  std::map<std::tuple<int64_t, int64_t, int, int32_t, std::string>, PodSpec> example;
  for (const PodSpec& p : pods) {
    std::string kind;
    if (!p.gpu_spec.empty()) {
      kind = "model";
    } else if (p.gpu_count == 1 && p.gpu_milli < kMilliPerGpu) {
      kind = "share";
    } else if (p.gpu_count == 1 || p.gpu_count == 2 || p.gpu_count == 4 || p.gpu_count == 8) {
      kind = "gpu" + std::to_string(p.gpu_count);
    } else {
      continue;
    }
    auto key = std::make_tuple(p.cpu_milli, p.memory_mib, p.gpu_count, p.gpu_milli, p.gpu_spec);
    ++counts[kind][key];
    example.emplace(key, p);
  }
  std::map<std::string, PodSpec> out;
  for (const auto& [kind, by_key] : counts) {
    auto best = by_key.begin();
    for (auto it = by_key.begin(); it != by_key.end(); ++it) {
      if (it->second > best->second) best = it;
    }
    out[kind] = example.at(best->first);
  }
  return out;
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "tessera_extender_inputs: %s\n", message.c_str());
  return 2;
}

int Main(int argc, char** argv) {
  if (argc < 4) {
    return Fail(
        "usage: tessera_extender_inputs NODES.csv PODS.csv OUT_DIR [--nodes 1213,5000] "
        "[--load 0.5]");
  }
  const std::string out_dir = argv[3];
  std::vector<int> sizes = {1213, 5000};
  double load = 0.5;
  for (int i = 4; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--nodes") {
      sizes.clear();
      std::stringstream ss(argv[i + 1]);
      for (std::string part; std::getline(ss, part, ',');) {
        char* end = nullptr;
        const long v = std::strtol(part.c_str(), &end, 10);
        if (part.empty() || *end != '\0' || v < 1 || v > 1000000) {
          return Fail("--nodes: bad size \"" + part + "\" (1..1000000)");
        }
        sizes.push_back(static_cast<int>(v));
      }
    } else if (flag == "--load") {
      char* end = nullptr;
      load = std::strtod(argv[i + 1], &end);
      if (*end != '\0' || !(load >= 0 && load <= 1)) return Fail("--load: expected 0..1");
    } else {
      return Fail("unknown option " + flag);
    }
  }
  Result<std::string> node_text = ReadFile(argv[1]);
  if (!node_text.ok()) return Fail(node_text.error().message);
  Result<std::vector<NodeSpec>> base = ReadNodeCsv(*node_text, argv[1]);
  if (!base.ok()) return Fail(base.error().message);
  Result<std::string> pod_text = ReadFile(argv[2]);
  if (!pod_text.ok()) return Fail(pod_text.error().message);
  Result<std::vector<PodSpec>> pods = ReadPodCsv(*pod_text, argv[2]);
  if (!pods.ok()) return Fail(pods.error().message);
  if (Status s = MakeDirectories(out_dir); !s.ok()) return Fail(s.error().message);

  // Place the trace's pods with FGD on the trace's nodes until `load` of the GPU is taken.
  Cluster cluster(*base);
  TargetWorkload workload = TargetWorkload::FromPods(*pods);
  workload.Resolve(cluster);
  PolicyContext context;
  context.workload = &workload;
  std::unique_ptr<Policy> policy = MakePolicy("fgd", context);
  std::vector<int> order(cluster.size());
  std::iota(order.begin(), order.end(), 0);
  Scheduler scheduler(&cluster, policy.get(), order, 42);
  std::vector<Decision> placed(pods->size());
  for (size_t i = 0; i < pods->size(); ++i) {
    if (cluster.allocated_gpu_milli() >= load * cluster.total_gpu_milli()) break;
    const PodRequest request = cluster.MakeRequest((*pods)[i]);
    Decision d = scheduler.Decide(request);
    if (d.ok()) scheduler.Bind(d.node, request, d.gpus);
    placed[i] = d;
  }

  const std::map<std::string, PodSpec> shapes = Shapes(*pods);
  const int base_n = static_cast<int>(base->size());
  for (int n : sizes) {
    const std::string tag = std::to_string(n);
    Json items = Json::array();
    std::string names;
    Json name_list = Json::array();
    for (int i = 0; i < n; ++i) {
      const std::string name = NodeName(*base, i);
      items.push_back(NodeJson((*base)[i % base_n], name));
      names += name + "\n";
      name_list.push_back(name);
    }
    Json node_list = {{"apiVersion", "v1"},
                      {"kind", "List"},
                      {"metadata", {{"resourceVersion", ""}}},
                      {"items", std::move(items)}};
    Json pod_items = Json::array();
    const int replicas = (n + base_n - 1) / base_n;
    for (size_t p = 0; p < pods->size(); ++p) {
      const PodSpec& spec = (*pods)[p];
      if (!placed[p].ok()) {
        pod_items.push_back(PodJson(spec, spec.name, "uid-" + spec.name, "", 0));
        continue;
      }
      for (int r = 0; r < replicas; ++r) {
        const int node = r * base_n + placed[p].node;
        if (node >= n) break;
        const std::string suffix = r == 0 ? "" : "-r" + std::to_string(r);
        pod_items.push_back(PodJson(spec, spec.name + suffix, "uid-" + spec.name + suffix,
                                    NodeName(*base, node), placed[p].gpus));
      }
    }
    Json pod_list = {{"apiVersion", "v1"},
                     {"kind", "List"},
                     {"metadata", {{"resourceVersion", ""}}},
                     {"items", std::move(pod_items)}};
    for (const auto& [file, content] : std::vector<std::pair<std::string, std::string>>{
             {"nodes-" + tag + ".json", node_list.dump()},
             {"pods-" + tag + ".json", pod_list.dump()},
             {"names-" + tag + ".txt", names}}) {
      if (Status s = WriteFile(out_dir + "/" + file, content); !s.ok()) {
        return Fail(s.error().message);
      }
    }
    for (const auto& [kind, spec] : shapes) {
      Json body = {{"Pod", PodJson(spec, "load-" + kind, "uid-load-" + kind, "", 0)},
                   {"Nodes", nullptr},
                   {"NodeNames", name_list}};
      if (Status s = WriteFile(out_dir + "/filter-" + tag + "-" + kind + ".json", body.dump());
          !s.ok()) {
        return Fail(s.error().message);
      }
    }
    std::printf("%d nodes: %d pods, %zu shapes\n", n, static_cast<int>(pod_list["items"].size()),
                shapes.size());
  }
  PodSpec small;
  small.cpu_milli = 100;
  small.memory_mib = 128;
  small.gpu_count = 1;
  small.gpu_milli = 100;
  if (Status s = WriteFile(out_dir + "/bind-pod.json",
                           PodJson(small, "bind-__UID__", "__UID__", "", 0).dump());
      !s.ok()) {
    return Fail(s.error().message);
  }
  std::printf("GPU allocated by the bound pods: %.1f %% of %lld milli (1213-node cluster)\n",
              100.0 * static_cast<double>(cluster.allocated_gpu_milli()) /
                  static_cast<double>(cluster.total_gpu_milli()),
              static_cast<long long>(cluster.total_gpu_milli()));
  for (const auto& [kind, spec] : shapes) {
    std::printf("shape %-5s: cpu %lldm, memory %lld MiB, %d GPU x %d milli%s%s\n", kind.c_str(),
                static_cast<long long>(spec.cpu_milli), static_cast<long long>(spec.memory_mib),
                spec.gpu_count, spec.gpu_milli, spec.gpu_spec.empty() ? "" : ", models ",
                spec.gpu_spec.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) { return tessera::Main(argc, argv); }
