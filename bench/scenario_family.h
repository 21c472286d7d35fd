#pragma once

// Seeded families of fleets and workloads for the robustness benchmark (bench/robustness.cc,
// docs/experiments/2026-12-06-robustness.md): scenarios no policy was tuned to, drawn from a
// handful of fleet shapes and workload mixes. Each scenario is a trace/scenario.h Scenario, so that
// one can be written out as YAML and run with `tessera frag --scenario`.

#include <cstdint>
#include <string>
#include <vector>

#include "trace/scenario.h"

namespace tessera {

/// The families, in the order GenerateScenario cycles through them.
///  - inference: 8-GPU A100, 4-GPU A10 and 2-GPU T4 nodes; quarter- and half-GPU shares, 1-
///    and 2-GPU services, a few 4- and 8-GPU training jobs (the 8-GPU ones often A100 only);
///  - share-heavy: V100/T4 fleets where most pods share a GPU in two to four sizes, with a few
///    8-GPU jobs;
///  - training: 8- and 4-GPU nodes, whole-GPU jobs of 1 to 8 GPUs, some shares;
///  - cpu-heavy: few cores per GPU and pods that ask for more, CPU-only pods beside them;
///  - constrained: three or four models, many classes limited to one or two of them;
///  - mixed: everything drawn at random.
std::vector<std::string> ScenarioFamilies();

/// Scenario `index` of the benchmark for generation seed `seed`: family index % families,
/// the rest drawn from Rng(seed, index). Deterministic. Every class fits at least one node
/// of an empty cluster; the pods' GPU request is about the cluster's GPU capacity. Sizes:
/// `gpus` GPUs in all, give or take a node per pool.
Scenario GenerateScenario(uint64_t seed, int index, int gpus = 512);

/// Scenario `index` of the SLO family (bench/slo_family.cc, docs/experiments/
/// 2026-12-07-slo-family.md) for generation seed `seed`: a replay timeline (horizon 24 or 48 h)
/// on one to three node pools (8-, 4-, 2- and 1-GPU nodes, `gpus` GPUs in all, give or take a
/// node per pool) with two to four of the default classes (LS, Guaranteed, Burstable, BE; at
/// least one with a wait SLO), each class one or two pod kinds: GPU requests from a quarter GPU
/// to 8 GPUs, sometimes limited to one model; lognormal durations from minutes to a day;
/// Poisson arrivals, sometimes on a daily wave, LS sometimes with a burst of three to five
/// times its rate. The offered load is 40 to 110 % of the cluster's GPUs. Deterministic.
Scenario GenerateSloScenario(uint64_t seed, int index, int gpus = 128);

/// The scenario as YAML that ParseScenario reads back to the same nodes, pods and timeline.
std::string ScenarioYaml(const Scenario& scenario);

}  // namespace tessera
