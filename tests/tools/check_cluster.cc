// tessera_check_cluster: judges a real cluster's objects, independently of the engine.
//
// It reads what `kubectl get nodes,pods -A -o json` prints (a v1 List; several files are read
// as one cluster) and checks, from the API server's objects alone, that
//   - every bound GPU pod that is not ended (phase not Succeeded/Failed) carries the GPU
//     assignment Tessera writes (`tessera.io/gpu-indices`): no GPU pod was bound by anyone else;
//   - its GPUs exist on its node and are distinct, as many as it asked for;
//   - no GPU is given twice: on each GPU the compute shares (milli; a whole GPU is 1000) of the
//     pods on it add up to at most 1000, and their GPU memory to at most the GPU's;
//   - the pod's GPU family is one its node offers (`tessera.io/*` needs allocatable
//     `tessera.io/gpu`; `nvidia.com/*` needs allocatable `nvidia.com/gpu` or HAMi's register
//     annotation), and its GPU model constraint (`tessera.io/gpu-model`, `A|B`) names the node's;
//   - where HAMi's `hami.io/vgpu-devices-allocated` is written, it names the same GPUs (by UUID
//     from the node's `hami.io/node-nvidia-register`) as the indices.
// The nodes' truth comes from labels the test fixtures set, not from Tessera's reading rules:
// `tessera.test/gpus` (GPU count), `tessera.test/gpu-memory-mib` (per GPU; absent: memory not
// checked) and `tessera.test/model` (the model name a pod's constraint must contain). Nodes
// without `tessera.test/gpus` are not GPU nodes for the check.
//
// Requests read: `tessera.io/gpu` (count), `tessera.io/gpu-milli`, `tessera.io/gpu-memory`
// (MiB, or a quantity with Ki/Mi/Gi), `nvidia.com/gpu` (count), `nvidia.com/gpucores` (percent),
// `nvidia.com/gpumem` (MiB), from each container's requests, else its limits; one GPU container
// per pod. HAMi's defaults: gpumem without gpucores takes 1 milli of compute.
//
// Usage: tessera_check_cluster [--expect-bound N] [--pending-must-not-fit] FILE...
//   prints "OK: ..." and exits 0 when all holds; prints each violation (the first 50) and exits
//   1 otherwise; 2 on unreadable input. --expect-bound N also requires at least N bound GPU pods;
//   --pending-must-not-fit requires that no pending GPU pod would fit on a node as the objects
//   leave it (by GPUs, family and model; CPU and memory are not counted): for a settled cluster,
//   a pod left waiting beside room it could use is a scheduling defect.
// Written by hand because it must not share code with what it checks.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Json = nlohmann::json;

int violations = 0;
void Violation(const std::string& what) {
  if (++violations <= 50) std::printf("VIOLATION: %s\n", what.c_str());
}

std::string Str(const Json& obj, const std::string& key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

// A quantity as an integer: plain digits, or with a binary suffix, in units of `unit` bytes
// (MiB: 1 << 20). -1 when unreadable.
int64_t Quantity(const std::string& s, int64_t unit) {
  if (s.empty()) return -1;
  size_t i = 0;
  int64_t v = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') v = v * 10 + (s[i++] - '0');
  if (i == 0) return -1;
  const std::string suffix = s.substr(i);
  if (suffix.empty()) return v;  // a bare number is already in the unit
  int64_t mult = 0;
  if (suffix == "Ki") mult = int64_t{1} << 10;
  if (suffix == "Mi") mult = int64_t{1} << 20;
  if (suffix == "Gi") mult = int64_t{1} << 30;
  if (mult == 0) return -1;
  return v * mult / unit;
}

struct Node {
  int gpus = 0;
  int64_t memory_mib = -1;
  std::string model;
  bool offers_tessera = false;
  bool offers_nvidia = false;
  std::vector<std::string> hami_uuids;  // healthy devices of the register, in order
  std::vector<int64_t> milli;           // per GPU
  std::vector<int64_t> mem;             // per GPU
  std::vector<std::vector<std::string>> holders;
};

struct Request {
  bool tessera = false, nvidia = false;
  int gpus = 0;
  int64_t milli = 1000;
  int64_t memory_mib = 0;
};

std::string ValueOf(const Json& resources, const std::string& key) {
  for (const char* part : {"requests", "limits"}) {
    if (!resources.contains(part) || !resources[part].is_object()) continue;
    const Json& m = resources[part];
    auto it = m.find(key);
    if (it == m.end()) continue;
    if (it->is_string()) return it->get<std::string>();
    if (it->is_number_integer()) return std::to_string(it->get<int64_t>());
  }
  return "";
}

Request RequestOf(const Json& pod) {
  Request r;
  const Json& spec = pod.value("spec", Json::object());
  for (const char* list : {"initContainers", "containers"}) {
    if (!spec.contains(list)) continue;
    for (const Json& c : spec[list]) {
      const Json& res = c.value("resources", Json::object());
      const std::string tg = ValueOf(res, "tessera.io/gpu");
      const std::string tm = ValueOf(res, "tessera.io/gpu-milli");
      const std::string tmem = ValueOf(res, "tessera.io/gpu-memory");
      const std::string ng = ValueOf(res, "nvidia.com/gpu");
      const std::string nc = ValueOf(res, "nvidia.com/gpucores");
      const std::string nmem = ValueOf(res, "nvidia.com/gpumem");
      if (!tg.empty() || !tm.empty() || !tmem.empty()) {
        r.tessera = true;
        r.gpus = tg.empty() ? 1 : static_cast<int>(Quantity(tg, 1));
        if (!tm.empty()) r.milli = Quantity(tm, 1);
        if (!tmem.empty()) {
          const bool bare = tmem.find_first_not_of("0123456789") == std::string::npos;
          r.memory_mib = bare ? Quantity(tmem, 1) : Quantity(tmem, int64_t{1} << 20);
        }
      } else if (!ng.empty() || !nc.empty() || !nmem.empty()) {
        r.nvidia = true;
        r.gpus = ng.empty() ? 1 : static_cast<int>(Quantity(ng, 1));
        const int64_t cores = nc.empty() ? 0 : Quantity(nc, 1);
        if (!nmem.empty()) r.memory_mib = Quantity(nmem, 1);
        if (cores > 0) {
          r.milli = 10 * cores;
        } else if (!nmem.empty() && r.gpus == 1) {
          r.milli = 1;  // a share by memory (HAMi's default of 0 cores)
        }
      }
    }
  }
  if (r.milli <= 0 || r.gpus < 0) r.milli = 1000;
  return r;
}

std::vector<int> Indices(const std::string& s, bool* ok) {
  std::vector<int> out;
  *ok = true;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ',')) {
    const size_t dash = part.find('-');
    try {
      if (dash == std::string::npos) {
        out.push_back(std::stoi(part));
      } else {
        const int a = std::stoi(part.substr(0, dash));
        const int b = std::stoi(part.substr(dash + 1));
        for (int i = a; i <= b; ++i) out.push_back(i);
      }
    } catch (...) {
      *ok = false;
    }
  }
  return out;
}

// HAMi's register: JSON list or "UUID,count,mem,cores,type,numa,healthy[,index,mode]:" items.
std::vector<std::string> HamiUuids(const std::string& reg) {
  std::vector<std::string> out;
  if (reg.empty()) return out;
  if (reg[0] == '[') {
    for (const Json& d : Json::parse(reg, nullptr, false)) {
      if (d.is_object() && d.value("health", false)) out.push_back(d.value("id", ""));
    }
    return out;
  }
  std::stringstream ss(reg);
  std::string dev;
  while (std::getline(ss, dev, ':')) {
    if (dev.empty()) continue;
    std::vector<std::string> f;
    std::stringstream fs(dev);
    std::string x;
    while (std::getline(fs, x, ',')) f.push_back(x);
    if (f.size() >= 7 && (f[6] == "true" || f[6] == "1" || f[6] == "T" || f[6] == "True")) {
      out.push_back(f[0]);
    }
  }
  return out;
}

void Collect(const Json& doc, std::vector<Json>* items) {
  if (doc.is_object() && doc.contains("items") && doc["items"].is_array()) {
    for (const Json& i : doc["items"]) items->push_back(i);
  } else if (doc.is_object() && doc.contains("kind")) {
    items->push_back(doc);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int64_t expect_bound = -1;
  bool pending_must_not_fit = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--expect-bound" && i + 1 < argc) {
      expect_bound = std::atoll(argv[++i]);
    } else if (a == "--pending-must-not-fit") {
      pending_must_not_fit = true;
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: %s [--expect-bound N] FILE...\n", argv[0]);
    return 2;
  }
  std::vector<Json> items;
  for (const std::string& f : files) {
    std::ifstream in(f);
    if (!in) {
      std::fprintf(stderr, "cannot open %s\n", f.c_str());
      return 2;
    }
    Json doc = Json::parse(in, nullptr, false);
    if (doc.is_discarded()) {
      std::fprintf(stderr, "%s: not JSON\n", f.c_str());
      return 2;
    }
    Collect(doc, &items);
  }

  std::map<std::string, Node> nodes;
  for (const Json& it : items) {
    if (Str(it, "kind") != "Node") continue;
    const Json& meta = it.value("metadata", Json::object());
    const Json labels = meta.value("labels", Json::object());
    const Json annotations = meta.value("annotations", Json::object());
    const Json alloc = it.value("status", Json::object()).value("allocatable", Json::object());
    Node n;
    if (labels.contains("tessera.test/gpus"))
      n.gpus = std::atoi(Str(labels, "tessera.test/gpus").c_str());
    if (labels.contains("tessera.test/gpu-memory-mib")) {
      n.memory_mib = std::atoll(Str(labels, "tessera.test/gpu-memory-mib").c_str());
    }
    n.model = Str(labels, "tessera.test/model");
    n.offers_tessera = alloc.contains("tessera.io/gpu");
    const std::string reg = Str(annotations, "hami.io/node-nvidia-register");
    n.offers_nvidia = alloc.contains("nvidia.com/gpu") || !reg.empty();
    n.hami_uuids = HamiUuids(reg);
    n.milli.assign(n.gpus, 0);
    n.mem.assign(n.gpus, 0);
    n.holders.assign(n.gpus, {});
    nodes[Str(meta, "name")] = n;
  }

  int bound = 0, pending = 0, ended = 0;
  std::vector<std::pair<std::string, Json>> pending_pods;
  for (const Json& it : items) {
    if (Str(it, "kind") != "Pod") continue;
    const Json& meta = it.value("metadata", Json::object());
    const std::string name = Str(meta, "namespace") + "/" + Str(meta, "name");
    const Request r = RequestOf(it);
    if (r.gpus == 0 && !r.tessera && !r.nvidia) continue;  // not a GPU pod
    const std::string phase = Str(it.value("status", Json::object()), "phase");
    const std::string node_name = Str(it.value("spec", Json::object()), "nodeName");
    if (phase == "Succeeded" || phase == "Failed") {
      ++ended;
      continue;
    }
    if (node_name.empty()) {
      ++pending;
      pending_pods.emplace_back(name, it);
      continue;
    }
    ++bound;
    auto nit = nodes.find(node_name);
    if (nit == nodes.end() || nit->second.gpus == 0) {
      Violation(name + " is bound to " + node_name + ", which has no GPUs for the check");
      continue;
    }
    Node& n = nit->second;
    const Json annotations = meta.value("annotations", Json::object());
    if (r.tessera && !n.offers_tessera) {
      Violation(name + " asks for tessera.io/* GPUs but node " + node_name +
                " does not offer them");
    }
    if (r.nvidia && !n.offers_nvidia) {
      Violation(name + " asks for nvidia.com/* GPUs but node " + node_name +
                " does not offer them");
    }
    const std::string models = Str(annotations, "tessera.io/gpu-model");
    if (!models.empty()) {
      bool allowed = false;
      std::stringstream ss(models);
      std::string m;
      while (std::getline(ss, m, '|')) {
        if (!m.empty() && n.model.find(m) != std::string::npos) allowed = true;
      }
      if (!allowed)
        Violation(name + " allows models '" + models + "' but is on " + node_name + " (" + n.model +
                  ")");
    }
    if (!annotations.contains("tessera.io/gpu-indices")) {
      Violation(name + " is bound to " + node_name + " without tessera.io/gpu-indices");
      continue;
    }
    bool ok = true;
    const std::vector<int> idx = Indices(Str(annotations, "tessera.io/gpu-indices"), &ok);
    const std::set<int> distinct(idx.begin(), idx.end());
    if (!ok || static_cast<int>(idx.size()) != r.gpus || distinct.size() != idx.size()) {
      Violation(name + ": gpu-indices '" + Str(annotations, "tessera.io/gpu-indices") + "' for " +
                std::to_string(r.gpus) + " GPU(s)");
      continue;
    }
    for (int g : idx) {
      if (g < 0 || g >= n.gpus) {
        Violation(name + ": GPU " + std::to_string(g) + " does not exist on " + node_name);
        continue;
      }
      n.milli[g] += r.milli;
      n.mem[g] += r.memory_mib;
      n.holders[g].push_back(name);
    }
    const std::string hami = Str(annotations, "hami.io/vgpu-devices-allocated");
    if (!hami.empty()) {
      for (int g : idx) {
        if (g >= 0 && g < static_cast<int>(n.hami_uuids.size()) &&
            hami.find(n.hami_uuids[g]) == std::string::npos) {
          Violation(name + ": hami.io/vgpu-devices-allocated lacks GPU " + std::to_string(g) +
                    "'s UUID " + n.hami_uuids[g]);
        }
      }
    }
  }

  int64_t gpus = 0, used = 0;
  for (const auto& [name, n] : nodes) {
    for (int g = 0; g < n.gpus; ++g) {
      ++gpus;
      if (n.milli[g] > 0) ++used;
      std::string who;
      for (const std::string& h : n.holders[g]) who += (who.empty() ? "" : ", ") + h;
      if (n.milli[g] > 1000) {
        Violation("GPU " + std::to_string(g) + " of " + name +
                  " is given twice: " + std::to_string(n.milli[g]) + " milli to " + who);
      }
      if (n.memory_mib >= 0 && n.mem[g] > n.memory_mib) {
        Violation("GPU " + std::to_string(g) + " of " + name + ": " + std::to_string(n.mem[g]) +
                  " MiB given of " + std::to_string(n.memory_mib) + " to " + who);
      }
    }
  }
  if (pending_must_not_fit) {
    for (const auto& [name, pod] : pending_pods) {
      if (pod.value("metadata", Json::object()).contains("deletionTimestamp")) continue;
      const Request r = RequestOf(pod);
      const Json annotations =
          pod.value("metadata", Json::object()).value("annotations", Json::object());
      const std::string models = Str(annotations, "tessera.io/gpu-model");
      for (const auto& [node_name, n] : nodes) {
        if ((r.tessera && !n.offers_tessera) || (r.nvidia && !n.offers_nvidia)) continue;
        if (!models.empty()) {
          bool allowed = false;
          std::stringstream ss(models);
          std::string m;
          while (std::getline(ss, m, '|')) {
            if (!m.empty() && n.model.find(m) != std::string::npos) allowed = true;
          }
          if (!allowed) continue;
        }
        int free = 0;
        for (int g = 0; g < n.gpus; ++g) {
          const bool whole = r.milli >= 1000;
          const bool compute = whole ? n.milli[g] == 0 : n.milli[g] + r.milli <= 1000;
          const bool memory = n.memory_mib < 0 || n.mem[g] + r.memory_mib <= n.memory_mib;
          free += compute && memory;
        }
        if (free >= r.gpus) {
          Violation(name + " is pending, but " + node_name + " has room for it (" +
                    std::to_string(free) + " GPUs fit)");
          break;
        }
      }
    }
  }
  if (expect_bound >= 0 && bound < expect_bound) {
    Violation(std::to_string(bound) + " GPU pods bound, expected at least " +
              std::to_string(expect_bound));
  }
  if (violations > 0) {
    std::printf("FAILED: %d violation(s); %d GPU pods bound, %d pending, %d ended\n", violations,
                bound, pending, ended);
    return 1;
  }
  std::printf("OK: %zu nodes, %d GPU pods bound (%lld of %lld GPUs in use), %d pending, %d ended\n",
              nodes.size(), bound, static_cast<long long>(used), static_cast<long long>(gpus),
              pending, ended);
  return 0;
}
