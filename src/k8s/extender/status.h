#pragma once

// What `tessera serve` says about its model: /state (StateJson) and the gauges of /metrics that
// describe the model, written from one typed snapshot (StatusView) that the Extender takes
// under its lock (MakeStatusView). Functions over the view and its inputs: no lock, no clock,
// no I/O.

#include <prometheus/metric_family.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "k8s/extender/cluster_model.h"
#include "k8s/extender/pending_queue.h"
#include "sched/classes.h"
#include "sched/headroom.h"

namespace tessera::k8s {

/// The model as /state and the gauges show it (Extender::Status).
struct StatusView {
  std::string policy;
  bool api_mode = false;
  std::string gate;  ///< why the verbs do not answer; "" when in sync
  int assumed_pods = 0;
  int64_t gpu_capacity_milli = 0;
  int64_t gpu_allocated_milli = 0;
  /// Per node, in the model's order (model.nodes has the same order).
  struct Node {
    std::string gpu_model;
    int gpu_count = 0;
    int64_t cpu_left_milli = 0;
    int64_t memory_left_mib = 0;
    std::vector<int64_t> gpu_free_milli;
    std::optional<std::string> topology;  ///< the compact text; none: no topology
    int model_id = -1;
    double fragmentation_milli = 0;  ///< F_n(M) (with_fragmentation only)
    int64_t stranded_milli = 0;      ///< with_fragmentation only
  };
  std::vector<Node> nodes;
  ModelView model;
  std::vector<std::string> models;  ///< the cluster's GPU model names by id
  struct Class {
    QosClass qos;
    int pending = 0;
  };
  std::vector<Class> classes;  ///< in config order
  struct Pending {
    std::string uid;
    std::string pod;
    std::string cls;
    double waiting_s = 0;
    std::string nominated_node;  ///< "" when none
  };
  std::vector<Pending> pending;  ///< longest wait first
  struct HeadroomModel {
    std::string model;
    int64_t target_gpus = 0;
    int64_t idle_gpus = 0;
    bool in_cluster = true;  ///< false: a configured floor for a model no node has
  };
  struct HeadroomState {
    HeadroomOptions::Mode mode = HeadroomOptions::Mode::kNone;
    int64_t target_gpus = 0;
    int64_t idle_gpus = 0;
    std::vector<HeadroomModel> models;
    std::vector<std::string> classes;  ///< the classes that may use it
  } headroom;
};

/// The view of `model` with the GPU queue and the headroom beside it, at `now_s` (the queue's
/// waits); F_n(M) and the stranded GPU per node only `with_fragmentation` (the metrics; /state
/// does not show them). The caller fills policy, api_mode and gate.
StatusView MakeStatusView(const ClusterModel& model, const PendingQueue& queue,
                          const Headroom& headroom, const QosClasses& classes, double now_s,
                          bool with_fragmentation);
/// The /state document (Extender::StateJson documents its fields).
std::string WriteStateJson(const StatusView& v);
/// The gauges that describe the model (tessera_synced, tessera_idle_gpus, the fragmentation
/// and per-model families, ...), appended to `out`. `v` must be taken with fragmentation.
void AppendModelGauges(const StatusView& v, std::vector<prometheus::MetricFamily>* out);

}  // namespace tessera::k8s
