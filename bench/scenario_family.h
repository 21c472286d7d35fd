#pragma once

// Seeded families of fleets and workloads for the robustness benchmark (bench/robustness.cc,
// docs/POLICIES.md "Robustness"): scenarios no policy was tuned to, drawn from a handful of
// fleet shapes and workload mixes. Each scenario is a trace/scenario.h Scenario, so that one
// can be written out as YAML and run with `tessera frag --scenario`.

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

/// The scenario as YAML that ParseScenario reads back to the same nodes and pods.
std::string ScenarioYaml(const Scenario& scenario);

}  // namespace tessera
