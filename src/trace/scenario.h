#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/node.h"
#include "model/pod.h"
#include "model/topology.h"
#include "util/result.h"

namespace tessera {

/// A group of identical nodes in a scenario.
struct NodePool {
  std::string name;            ///< node names are "<name>-<index>"
  std::string model;           ///< GPU model (engine name, CanonicalGpuModel); empty: CPU-only
  int gpus = 0;                ///< GPUs per node
  int64_t gpu_memory_mib = 0;  ///< per GPU; 0 = unknown
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int count = 0;
  TopologyPtr topology;  ///< GPU topology of each node (shared by the pool); null = none
};

/// Extra arrivals during one window of the run (e.g. a two-hour peak-sale spike).
struct RateBurst {
  double start_h = 0;     ///< from the start of the run, hours
  double duration_h = 0;  ///< hours, > 0
  double rate_per_h = 0;  ///< added to the class's rate while the burst lasts
};

/// A Poisson arrival process for the replay: rate(t) = rate_per_h · profile[hour of day]
/// (1 when the profile is empty) + the rates of the bursts active at t.
struct ArrivalProcess {
  double rate_per_h = 0;
  std::vector<double> profile;  ///< 24 multipliers, one per hour of the day, or empty
  std::vector<RateBurst> bursts;
};

/// How long a generated pod runs once placed.
struct DurationDist {
  enum class Kind { kFixed, kExponential, kLognormal };
  Kind kind = Kind::kExponential;
  double mean_s = 3600;
  double sigma = 1;  ///< kLognormal: σ of the log
};

/// A kind of pod in a scenario, with its share of all pods.
struct PodClass {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int gpu_count = 0;
  int32_t gpu_milli = 0;  ///< per GPU; 1000 for whole GPUs
  int64_t gpu_memory_mib = 0;
  std::string gpu_spec;  ///< allowed models (engine names) joined with '|'; empty = any
  std::string qos;
  double share = 0;          ///< fraction of pods, > 0; shares are renormalised
  bool has_arrival = false;  ///< replay timeline: this class arrives by `arrival`
  ArrivalProcess arrival;
  DurationDist duration;
  TopologyRequest topology;  ///< the class's topology intent (`topology: required[:numa]`)
};

/// A hand-written description of a cluster and a workload mix, from which nodes and pods
/// are generated. YAML form (see docs/SCENARIOS.md):
///   name: openb-like
///   pods: 8152            # how many pods to generate
///   seed: 1               # generation seed
///   nodes:  [{name, model, gpus, gpu_memory_mib, cpu_milli, memory_mib, count, topology},
///            ...]
///   classes: [{name, cpu_milli, memory_mib, gpu_count, gpu_milli, gpu_memory_mib,
///              models: [A, B], qos, share, arrival, duration, topology}, ...]
///   horizon_h: 24         # replay timeline length; required when a class has `arrival`
/// arrival: {rate_per_h, profile: [24 numbers], bursts: [{start_h, duration_h, rate_per_h}]}
/// duration: {dist: fixed|exponential|lognormal, mean_s, sigma}
/// node topology: {nvlink: [[0,1,2,3],[4,5,6,7]], numa: [[...]], numa_cpu_milli: [..],
///                 links: [[..]], kubelet_policy: restricted} (model/topology_text.h), or the
///                 compact text "nvlink=0-3/4-7;numa=0-3/4-7"
/// class topology: required|preferred[:nvlink|:numa]
struct Scenario {
  std::string name;
  std::string description;
  int pods = 0;
  uint64_t seed = 1;
  double horizon_h = 0;  ///< replay timeline length in hours; 0 = no timeline
  std::vector<NodePool> nodes;
  std::vector<PodClass> classes;
};

/// Parses a scenario. Unknown keys, wrong types, missing required fields, negative or absurd
/// quantities give an error "file:line: field 'x': what is wrong" (line from the YAML mark;
/// x is a path such as "nodes[2].gpus"). Broken YAML gives "file:line: yaml syntax error: ...".
Result<Scenario> ParseScenario(std::string_view yaml, std::string_view file);

/// The nodes of a scenario, pool by pool, in order.
std::vector<NodeSpec> ScenarioNodes(const Scenario& scenario);
/// `scenario.pods` pods: each class gets its share (largest remainder rounding), named
/// "<class>-<k>", then the list is shuffled with `scenario.seed`. Deterministic.
std::vector<PodSpec> ScenarioPods(const Scenario& scenario);

/// The YAML text of an embedded scenario ("openb-like"), or empty if there is none.
std::string_view EmbeddedScenario(std::string_view name);
/// Names of the embedded scenarios.
std::vector<std::string> EmbeddedScenarioNames();

}  // namespace tessera
