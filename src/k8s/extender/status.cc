#include "k8s/extender/status.h"

#include <prometheus/client_metric.h>
#include <prometheus/labels.h>

#include <array>
#include <nlohmann/json.hpp>
#include <utility>

#include "k8s/api/json_util.h"
#include "model/resources.h"
#include "model/topology_text.h"

namespace tessera::k8s {
namespace {

using OrderedJson = nlohmann::ordered_json;

/// A gauge family with one sample per label set.
prometheus::MetricFamily GaugeFamily(std::string name, std::string help) {
  prometheus::MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = prometheus::MetricType::Gauge;
  return f;
}

void AddGauge(prometheus::MetricFamily* f, double value, prometheus::Labels labels = {}) {
  prometheus::ClientMetric m;
  for (auto& [k, v] : labels) m.label.push_back({k, v});
  m.gauge.value = value;
  f->metric.push_back(std::move(m));
}

}  // namespace

StatusView MakeStatusView(const ClusterModel& model, const PendingQueue& queue,
                          const Headroom& headroom, const QosClasses& classes, double now,
                          bool with_fragmentation) {
  StatusView v;
  const Cluster& cluster = model.cluster();
  v.assumed_pods = model.pods().assumed();
  v.gpu_capacity_milli = cluster.total_gpu_milli();
  v.gpu_allocated_milli = cluster.allocated_gpu_milli();
  v.model = model.View();
  v.models = cluster.models();
  const TargetWorkload* m = with_fragmentation ? model.engine().workload() : nullptr;
  v.nodes.reserve(static_cast<size_t>(cluster.size()));
  for (int n = 0; n < cluster.size(); ++n) {
    const NodeSpec& s = cluster.spec(n);
    const NodeState& st = cluster.state(n);
    StatusView::Node& node = v.nodes.emplace_back();
    node.gpu_model = s.gpu_model;
    node.gpu_count = s.gpu_count;
    node.cpu_left_milli = st.cpu_left;
    node.memory_left_mib = st.memory_left;
    node.gpu_free_milli.assign(st.gpu_free.begin(), st.gpu_free.begin() + s.gpu_count);
    if (s.topology != nullptr) node.topology = FormatCompactTopology(*s.topology);
    node.model_id = cluster.model_id(n);
    if (m != nullptr) {
      node.fragmentation_milli = m->NodeFragmentation(cluster, n);
      node.stranded_milli = m->NodeStranded(cluster, n);
    }
  }
  const std::vector<int> depth = queue.CountByClass();
  const QosClasses& qc = queue.classes();
  for (size_t c = 0; c < qc.classes.size(); ++c) v.classes.push_back({qc.classes[c], depth[c]});
  std::vector<std::pair<const std::string*, const PendingQueue::Entry*>> queued;
  for (const auto& [uid, e] : queue.pods()) queued.emplace_back(&uid, &e);
  std::sort(queued.begin(), queued.end(), [](const auto& a, const auto& b) {
    return a.second->created_s != b.second->created_s ? a.second->created_s < b.second->created_s
                                                      : *a.first < *b.first;
  });
  for (const auto& [uid, e] : queued) {
    const PodRecord* r = model.pods().Find(*uid);
    v.pending.push_back({*uid, e->key, qc.classes[e->cls].name, std::max(0.0, now - e->created_s),
                         r != nullptr ? r->meta.nominated_node : std::string()});
  }
  v.headroom.mode = headroom.options().mode;
  v.headroom.target_gpus = headroom.target();
  const std::vector<int64_t>& by_model = model.idle_gpus_by_model();  // idle GPUs per model id
  v.headroom.idle_gpus = model.idle_gpus();
  for (size_t k = 0; k < by_model.size(); ++k) {
    v.headroom.models.push_back(
        {v.models[k], headroom.model_target(static_cast<int>(k)), by_model[k], true});
  }
  for (const auto& [name, gpus] : headroom.options().model_gpus) {
    if (std::find(v.models.begin(), v.models.end(), name) == v.models.end()) {
      v.headroom.models.push_back({name, 0, 0, false});
    }
  }
  for (const QosClass& k : classes.classes) {
    if (k.use_headroom) v.headroom.classes.push_back(k.name);
  }
  return v;
}

std::string WriteStateJson(const StatusView& v) {
  OrderedJson j;
  j["policy"] = v.policy;
  j["mode"] = v.api_mode ? "api" : "files";
  j["synced"] = v.gate.empty();
  j["sync_reason"] = v.gate;
  j["gpu_capacity_milli"] = v.gpu_capacity_milli;
  j["gpu_allocated_milli"] = v.gpu_allocated_milli;
  OrderedJson nodes = OrderedJson::array();
  for (size_t n = 0; n < v.nodes.size(); ++n) {
    const StatusView::Node& s = v.nodes[n];
    const ModelView::Node& m = v.model.nodes[n];
    OrderedJson node;
    node["name"] = m.name;
    node["gpu_model"] = s.gpu_model;
    node["gpu_count"] = s.gpu_count;
    node["unschedulable"] = m.cordoned;
    node["blocked"] = m.blocked;
    node["cpu_left_milli"] = s.cpu_left_milli;
    node["memory_left_mib"] = s.memory_left_mib;
    node["gpu_free_milli"] = s.gpu_free_milli;
    node["topology"] = s.topology ? OrderedJson(*s.topology) : OrderedJson(nullptr);
    nodes.push_back(std::move(node));
  }
  j["nodes"] = std::move(nodes);
  static constexpr std::array<const char*, 4> kSources = {"annotation", "tessera", "guess",
                                                          "estimate"};
  OrderedJson assignments = OrderedJson::array();
  for (const ModelView::Placed& a : v.model.placed) {
    OrderedJson e;
    e["uid"] = a.uid;
    e["pod"] = a.pod;
    e["node"] = v.model.nodes[static_cast<size_t>(a.node)].name;
    OrderedJson gpus = OrderedJson::array();
    for (int g = 0; g < kMaxGpusPerNode; ++g) {
      if (a.gpus & (GpuSet{1} << g)) gpus.push_back(g);
    }
    e["gpus"] = std::move(gpus);
    e["gpu_milli"] = a.gpu_milli;
    e["state"] = a.assumed ? "assumed" : "confirmed";
    e["gpus_from"] = kSources[static_cast<int>(a.source)];
    assignments.push_back(std::move(e));
  }
  j["assignments"] = std::move(assignments);
  OrderedJson unaccounted = OrderedJson::array();
  for (const ModelView::Unaccounted& u : v.model.unaccounted) {
    unaccounted.push_back({{"uid", u.uid},
                           {"pod", u.pod},
                           {"node", v.model.nodes[static_cast<size_t>(u.node)].name},
                           {"why", u.why}});
  }
  j["unaccounted"] = std::move(unaccounted);
  OrderedJson classes = OrderedJson::array();
  for (const StatusView::Class& c : v.classes) {
    const QosClass& k = c.qos;
    OrderedJson e;
    e["name"] = k.name;
    e["priority"] = k.priority;
    e["slo_wait_seconds"] = k.slo_wait_s >= 0 ? OrderedJson(k.slo_wait_s) : nullptr;
    e["preemptible"] = k.preemptible;
    e["use_headroom"] = k.use_headroom;
    e["pending"] = c.pending;
    classes.push_back(std::move(e));
  }
  j["classes"] = std::move(classes);
  OrderedJson pending = OrderedJson::array();
  for (const StatusView::Pending& e : v.pending) {
    OrderedJson p;
    p["uid"] = e.uid;
    p["pod"] = e.pod;
    p["class"] = e.cls;
    p["waiting_seconds"] = e.waiting_s;
    // The node its preemption made room on (status.nominatedNodeName, or this extender's own
    // preemption before the API shows it); null: none.
    p["nominated_node"] =
        e.nominated_node.empty() ? OrderedJson(nullptr) : OrderedJson(e.nominated_node);
    pending.push_back(std::move(p));
  }
  j["pending"] = std::move(pending);
  static constexpr const char* kModes[] = {"none", "static", "forecast", "backlog"};
  OrderedJson h;
  h["mode"] = kModes[static_cast<int>(v.headroom.mode)];
  h["target_gpus"] = v.headroom.target_gpus;
  h["idle_gpus"] = v.headroom.idle_gpus;
  // Every GPU model of the cluster, then each model with a floor that the cluster lacks
  // (target 0: it matches no node).
  OrderedJson models = OrderedJson::array();
  for (const StatusView::HeadroomModel& m : v.headroom.models) {
    OrderedJson e;
    e["model"] = m.model;
    e["target_gpus"] = m.target_gpus;
    e["idle_gpus"] = m.idle_gpus;
    models.push_back(std::move(e));
  }
  h["models"] = std::move(models);
  h["classes"] = v.headroom.classes;
  j["headroom"] = std::move(h);
  return DumpJson(j);
}

void AppendModelGauges(const StatusView& v, std::vector<prometheus::MetricFamily>* out) {
  prometheus::MetricFamily synced =
      GaugeFamily("tessera_synced",
                  "1 while the extender is in sync with the Kubernetes API and answers, else 0 "
                  "(file mode: always 1).");
  AddGauge(&synced, v.gate.empty() ? 1 : 0);
  out->push_back(std::move(synced));
  prometheus::MetricFamily assumed = GaugeFamily(
      "tessera_assumed_pods", "Pods bound by this extender that the API has not shown bound yet.");
  AddGauge(&assumed, v.assumed_pods);
  out->push_back(std::move(assumed));
  prometheus::MetricFamily headroom_target =
      GaugeFamily("tessera_headroom_target_gpus",
                  "Whole idle GPUs kept for the classes that may use headroom (0: none kept).");
  AddGauge(&headroom_target, static_cast<double>(v.headroom.target_gpus));
  out->push_back(std::move(headroom_target));
  prometheus::MetricFamily idle_gpus =
      GaugeFamily("tessera_idle_gpus", "Whole idle GPUs (nothing allocated on them).");
  AddGauge(&idle_gpus, static_cast<double>(v.headroom.idle_gpus));
  out->push_back(std::move(idle_gpus));
  // Per GPU model: every model of the cluster, 0 where no floor is kept.
  prometheus::MetricFamily model_idle = GaugeFamily(
      "tessera_model_idle_gpus", "Whole idle GPUs (nothing allocated on them) per GPU model.");
  prometheus::MetricFamily model_target =
      GaugeFamily("tessera_model_headroom_target_gpus",
                  "Whole idle GPUs of each GPU model kept for the classes that may use headroom "
                  "(headroom.models; 0: none kept), besides tessera_headroom_target_gpus.");
  for (const StatusView::HeadroomModel& m : v.headroom.models) {
    if (!m.in_cluster) continue;
    const prometheus::Labels labels = {{"model", m.model}};
    AddGauge(&model_idle, static_cast<double>(m.idle_gpus), labels);
    AddGauge(&model_target, static_cast<double>(m.target_gpus), labels);
  }
  out->push_back(std::move(model_idle));
  out->push_back(std::move(model_target));
  int blocked = 0;
  for (const ModelView::Node& n : v.model.nodes) blocked += n.blocked.empty() ? 0 : 1;
  prometheus::MetricFamily nodes_blocked =
      GaugeFamily("tessera_nodes_blocked",
                  "Nodes that take no GPU pod because a pod bound to them cannot be fully "
                  "accounted for (see /state).");
  AddGauge(&nodes_blocked, blocked);
  out->push_back(std::move(nodes_blocked));
  prometheus::MetricFamily pods_unaccounted = GaugeFamily(
      "tessera_pods_fail_closed",
      "Bound pods counted without knowing all of their request (estimated as whole GPUs, "
      "unreadable, or not placed beside the others).");
  AddGauge(&pods_unaccounted, static_cast<double>(v.model.unaccounted.size()));
  out->push_back(std::move(pods_unaccounted));
  prometheus::MetricFamily allocated =
      GaugeFamily("tessera_gpu_allocated_milli", "GPU allocated in the cluster model, milli-GPU.");
  AddGauge(&allocated, static_cast<double>(v.gpu_allocated_milli));
  out->push_back(std::move(allocated));
  prometheus::MetricFamily capacity =
      GaugeFamily("tessera_gpu_capacity_milli", "GPU capacity of the cluster model, milli-GPU.");
  AddGauge(&capacity, static_cast<double>(v.gpu_capacity_milli));
  out->push_back(std::move(capacity));

  // Per node, then fragmentation against the target workload M (FGD's measure), stranded GPU,
  // and allocation per GPU model.
  prometheus::MetricFamily node_free =
      GaugeFamily("tessera_node_gpu_free_milli", "Free GPU on each node, milli-GPU.");
  double frag = 0;
  int64_t idle = 0;
  int64_t stranded = 0;
  const size_t models = v.models.size();
  std::vector<int64_t> model_allocated(models, 0);
  std::vector<int64_t> model_capacity(models, 0);
  for (size_t n = 0; n < v.nodes.size(); ++n) {
    const StatusView::Node& s = v.nodes[n];
    int64_t free = 0;
    for (int64_t f : s.gpu_free_milli) free += f;
    AddGauge(&node_free, static_cast<double>(free), {{"node", v.model.nodes[n].name}});
    idle += free;
    frag += s.fragmentation_milli;
    stranded += s.stranded_milli;
    if (s.model_id >= 0 && static_cast<size_t>(s.model_id) < models) {
      model_capacity[s.model_id] += int64_t{s.gpu_count} * kMilliPerGpu;
      model_allocated[s.model_id] += int64_t{s.gpu_count} * kMilliPerGpu - free;
    }
  }
  out->push_back(std::move(node_free));

  // The GPU queue and the classes.
  prometheus::MetricFamily pending = GaugeFamily(
      "tessera_pending_gpu_pods",
      "GPU pods for this scheduler that are pending (not bound, not ended, not being deleted), "
      "by class: the GPU queue depth.");
  prometheus::MetricFamily slo = GaugeFamily(
      "tessera_class_slo_seconds", "The scheduling-wait SLO of each class that has one, seconds.");
  for (const StatusView::Class& c : v.classes) {
    AddGauge(&pending, c.pending, {{"class", c.qos.name}});
    if (c.qos.slo_wait_s >= 0) AddGauge(&slo, c.qos.slo_wait_s, {{"class", c.qos.name}});
  }
  out->push_back(std::move(pending));
  out->push_back(std::move(slo));

  prometheus::MetricFamily fragmentation = GaugeFamily(
      "tessera_gpu_fragmentation_milli",
      "Cluster GPU fragmentation, milli-GPU: the sum over nodes of FGD's F_n(M), idle GPU that "
      "the target workload M (--workload's or the bound pods' request mix) cannot use, weighted "
      "by M.");
  AddGauge(&fragmentation, frag);
  out->push_back(std::move(fragmentation));
  prometheus::MetricFamily ratio =
      GaugeFamily("tessera_gpu_fragmentation_ratio",
                  "tessera_gpu_fragmentation_milli over idle GPU (0..1; 0 when no GPU is idle).");
  AddGauge(&ratio, idle > 0 ? frag / static_cast<double>(idle) : 0);
  out->push_back(std::move(ratio));
  prometheus::MetricFamily idle_family =
      GaugeFamily("tessera_gpu_idle_milli", "Idle (unallocated) GPU in the cluster, milli-GPU.");
  AddGauge(&idle_family, static_cast<double>(idle));
  out->push_back(std::move(idle_family));
  prometheus::MetricFamily stranded_family = GaugeFamily(
      "tessera_gpu_stranded_milli",
      "Idle GPU that no pod class of the target workload M could use where it is (its node "
      "hosts no class of M, or the GPU's free share is below every class that fits), "
      "milli-GPU.");
  AddGauge(&stranded_family, static_cast<double>(stranded));
  out->push_back(std::move(stranded_family));
  prometheus::MetricFamily by_model_allocated =
      GaugeFamily("tessera_gpu_model_allocated_milli", "GPU allocated per GPU model, milli-GPU.");
  prometheus::MetricFamily by_model_capacity =
      GaugeFamily("tessera_gpu_model_capacity_milli", "GPU capacity per GPU model, milli-GPU.");
  for (size_t k = 0; k < models; ++k) {
    AddGauge(&by_model_allocated, static_cast<double>(model_allocated[k]),
             {{"model", v.models[k]}});
    AddGauge(&by_model_capacity, static_cast<double>(model_capacity[k]), {{"model", v.models[k]}});
  }
  out->push_back(std::move(by_model_allocated));
  out->push_back(std::move(by_model_capacity));
}

}  // namespace tessera::k8s
