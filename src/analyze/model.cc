#include "analyze/model.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "k8s/translate/translate.h"
#include "util/check.h"

namespace tessera::analyze {
namespace {

bool Ended(const std::string& phase) { return phase == "Succeeded" || phase == "Failed"; }

/// The controlling owner, or null.
const OwnerReference* Controller(const SnapshotPod& p) {
  for (const OwnerReference& o : p.owners) {
    if (o.controller) return &o;
  }
  return nullptr;
}

double CostOf(const ModelPod& p, const CostWeights& w) {
  double cost = 1.0;
  cost += std::min(w.priority_cap, std::max<double>(0, p.priority) / 1000.0 * w.priority_per_1000);
  if (p.cls == "LS") {
    cost += w.class_ls;
  } else if (p.cls == "Guaranteed") {
    cost += w.class_guaranteed;
  }
  cost += std::min(w.restart_cap, w.restart * static_cast<double>(p.restarts));
  return cost;
}

int ScaledCount(const IntOrPercent& v, int total) {
  if (!v.percent) return static_cast<int>(v.value);
  // Kubernetes scales a budget's percentage rounding up (intstr.GetScaledValueFromIntOrPercent).
  return static_cast<int>((v.value * total + 99) / 100);
}

}  // namespace

Result<std::unique_ptr<Model>> BuildModel(const Snapshot& snapshot, const CostWeights& weights) {
  auto m = std::make_unique<Model>();
  std::vector<NodeSpec> specs;
  for (size_t i = 0; i < snapshot.nodes.size(); ++i) {
    const k8s::Node& node = snapshot.nodes[i];
    Result<NodeSpec> spec = k8s::NodeToSpec(node);
    if (!spec.ok()) return Error{snapshot.node_paths[i] + ": " + spec.error().message};
    specs.push_back(std::move(*spec));
    ModelNode mn;
    mn.name = node.name;
    mn.families = k8s::NodeGpuFamilies(node);
    if (node.unschedulable) {
      mn.usable = false;
      mn.unusable = "cordoned (spec.unschedulable)";
    }
    m->node_index[node.name] = static_cast<int>(i);
    m->nodes.push_back(std::move(mn));
  }
  std::set<std::string> models;
  for (const NodeSpec& s : specs) {
    if (s.gpu_count > 0) models.insert(s.gpu_model);
  }
  if (models.size() > static_cast<size_t>(kMaxGpuModels)) {
    return Error{"the snapshot has " + std::to_string(models.size()) +
                 " GPU models; the engine takes at most " + std::to_string(kMaxGpuModels)};
  }
  m->cluster = Cluster(specs);

  // serve's extender places the bound pods' GPUs.
  k8s::ExtenderOptions options;
  options.policy = "fgd";
  Result<std::unique_ptr<k8s::Extender>> ext = MakeFileExtender(snapshot, options);
  if (!ext.ok()) return ext.error();
  m->extender = std::move(*ext);
  m->warnings = m->extender->warnings();
  m->budgets_not_read = snapshot.budgets_not_read;
  if (!m->budgets_not_read.empty()) m->warnings.push_back(m->budgets_not_read);
  const k8s::ModelView view = m->extender->View();
  std::map<std::string, std::pair<int, GpuSet>> assigned;  // uid → (node, GPUs)
  for (const k8s::ModelView::Placed& a : view.placed) {
    assigned[a.uid] = {m->NodeOf(view.nodes[static_cast<size_t>(a.node)].name), a.gpus};
  }
  for (const k8s::ModelView::Node& n : view.nodes) {
    const int node = m->NodeOf(n.name);
    if (!n.blocked.empty() && node >= 0) {
      m->nodes[node].usable = false;
      m->nodes[node].unusable = "blocked: " + n.blocked;
    }
  }
  std::map<std::string, std::string> unaccounted;  // uid → why
  for (const k8s::ModelView::Unaccounted& u : view.unaccounted) {
    unaccounted[u.uid] = u.why;
    m->warnings.push_back("pod " + u.pod + " on node " +
                          view.nodes[static_cast<size_t>(u.node)].name + ": " + u.why);
  }

  std::vector<PodSpec> demand;  // M: bound and pending pods
  for (size_t i = 0; i < snapshot.pods.size(); ++i) {
    const SnapshotPod& sp = snapshot.pods[i];
    const k8s::Pod& pod = sp.pod;
    if (Ended(pod.phase)) continue;
    ModelPod p;
    p.snapshot_index = static_cast<int>(i);
    p.key = k8s::ObjectKey(pod.namespace_name, pod.name);
    p.namespace_name = pod.namespace_name;
    p.uid = pod.uid.empty() ? p.key : pod.uid;
    Result<PodSpec> spec = k8s::PodToSpec(pod);
    const bool readable = spec.ok();
    p.spec = readable ? *spec : k8s::FailClosedSpec(pod);
    p.spec.name = p.key;
    p.priority = pod.priority;
    p.cls = p.spec.qos;
    p.restarts = sp.restarts;
    p.families = k8s::PodGpuFamilies(pod);
    p.target_request = m->cluster.MakeRequest(p.spec);
    p.request = p.target_request;
    p.request.models = kAnyModel;
    p.gpu = !p.request.IsCpuOnly();
    p.cost = CostOf(p, weights);
    if (const OwnerReference* c = Controller(sp)) {
      p.workload = c->kind + "/" + pod.namespace_name + "/" + c->name;
    }
    if (pod.node_name.empty()) {
      p.pending = !pod.deleting;
      if (p.pending && readable) demand.push_back(p.spec);
      if (p.pending && p.gpu) p.object = std::make_shared<const k8s::Pod>(pod);
    } else if (auto a = assigned.find(p.uid); a != assigned.end() && a->second.first >= 0) {
      p.node = a->second.first;
      p.gpus = a->second.second;
      p.placed = true;
      m->cluster.Allocate(p.node, p.request, p.request.IsCpuOnly() ? 0 : p.gpus);
      if (readable) demand.push_back(p.spec);
    }
    // Movable: owned by a controller that recreates it elsewhere, and nothing speaks against.
    const OwnerReference* c = Controller(sp);
    if (!p.placed) {
      p.unmovable = "not placed";
    } else if (!p.gpu) {
      p.unmovable = "requests no GPU";
    } else if (c == nullptr) {
      p.unmovable = "bare pod (no controller owner)";
    } else if (c->kind == "DaemonSet") {
      p.unmovable = "DaemonSet pod";
    } else if (c->kind == "Node") {
      p.unmovable = "static (mirror) pod";
    } else if (pod.deleting) {
      p.unmovable = "being deleted";
    } else if (pod.phase != "Running" && pod.phase != "Pending" && !pod.phase.empty()) {
      p.unmovable = "phase " + pod.phase;
    } else if (!readable) {
      p.unmovable = "request not readable: " + spec.error().message;
    } else if (unaccounted.count(p.uid)) {
      p.unmovable = "not counted as given: " + unaccounted[p.uid];
    } else if (pod.priority >= kSystemPriority) {
      p.unmovable = "system priority";
    } else if (!m->nodes[p.node].usable) {
      p.unmovable = "on a node that is " + m->nodes[p.node].unusable;
    }
    p.movable = p.unmovable.empty();
    m->pods.push_back(std::move(p));
  }

  // Budgets: which pods each covers, and what it allows now.
  for (size_t b = 0; b < snapshot.pdbs.size(); ++b) {
    const SnapshotPdb& sp = snapshot.pdbs[b];
    ModelPdb pdb;
    pdb.key = k8s::ObjectKey(sp.pdb.namespace_name, sp.pdb.name);
    for (ModelPod& p : m->pods) {
      if (!p.placed) continue;
      const k8s::Pod& pod = snapshot.pods[p.snapshot_index].pod;
      if (!sp.pdb.Covers(pod.namespace_name, pod.name, pod.labels)) continue;
      p.pdbs.push_back(static_cast<int>(b));
      ++pdb.matching;
      if (pod.phase == "Running" && !pod.deleting) ++pdb.healthy;
    }
    int allowed = sp.pdb.disruptions_allowed;
    if (sp.min_available) {
      allowed = pdb.healthy - ScaledCount(*sp.min_available, pdb.matching);
      if (sp.has_status) allowed = std::min(allowed, sp.pdb.disruptions_allowed);
    } else if (sp.max_unavailable) {
      allowed = ScaledCount(*sp.max_unavailable, pdb.matching) - (pdb.matching - pdb.healthy);
      if (sp.has_status) allowed = std::min(allowed, sp.pdb.disruptions_allowed);
    }
    pdb.allowed = std::max(0, allowed);
    m->pdbs.push_back(std::move(pdb));
  }

  m->workload = TargetWorkload::FromPods(demand);
  if (m->workload.classes().empty()) {
    TargetClass one;
    one.gpu_milli = kMilliPerGpu;
    one.gpu_count = 1;
    one.probability = 1;
    m->workload = TargetWorkload::FromClasses({one});
  }
  m->workload.Resolve(m->cluster);
  return m;
}

}  // namespace tessera::analyze
