#pragma once

// A node type's `topology:` block in YAML (the scenario's node pools, the planner's catalog):
// a mapping {nvlink, numa, numa_cpu_milli, links, kubelet_policy} or the compact text of the
// node-list CSV ("nvlink=0-3/4-7;numa=0-3/4-7"). One reader for both files, validated by
// BuildTopology (model/topology_text.h). Pure; thread-safe.

#include <yaml-cpp/yaml.h>

#include <string>

#include "model/topology.h"

namespace tessera {

/// Where a `topology:` block is wrong: the YAML line (1-based), the field path (below the
/// `path` given, e.g. "nodes[0].topology.nvlink[1][3]") and what is wrong.
struct TopologyYamlError {
  int line = 1;
  std::string field;
  std::string what;
};

/// Reads `node` (the value of a `topology:` key at `path`) for a node type of `gpus` GPUs into
/// *out (a new shared object). Returns false and fills *error on: a value that is neither a
/// mapping nor a string, an unknown or repeated key, wrong types, and BuildTopology's errors.
bool ReadTopologyYaml(const YAML::Node& node, const std::string& path, int gpus, TopologyPtr* out,
                      TopologyYamlError* error);

}  // namespace tessera
