#pragma once

#include <string_view>
#include <vector>

#include "model/node.h"
#include "model/pod.h"
#include "util/result.h"

namespace tessera {

/// Reads an openb node list (columns sn,cpu_milli,memory_mib,gpu,model; header required,
/// columns found by name, extra columns ignored). `file` names the source in errors, which
/// read "file:line: field 'x': what is wrong". Rejects malformed rows, missing columns,
/// negative or absurd quantities, more than kMaxGpusPerNode GPUs, duplicate node names.
Result<std::vector<NodeSpec>> ReadNodeCsv(std::string_view text, std::string_view file);

/// Reads an openb pod list: required name,cpu_milli,memory_mib,num_gpu,gpu_milli; optional
/// gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time (the multigpu files have
/// only the required five). Validates as ReadNodeCsv does; gpu_milli must be 1..1000 for GPU
/// pods and 1000 for multi-GPU pods.
Result<std::vector<PodSpec>> ReadPodCsv(std::string_view text, std::string_view file);

}  // namespace tessera
