#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "model/gpu_catalog.h"
#include "model/node.h"
#include "model/pod.h"
#include "util/result.h"

namespace tessera {

/// Reads an openb node list (columns sn,cpu_milli,memory_mib,gpu,model; header required,
/// columns found by name, extra columns ignored). `file` names the source in errors, which
/// read "file:line: field 'x': what is wrong" (line: 1-based physical line, the header is 1).
/// Rejects malformed rows, missing columns, negative or absurd quantities, more than
/// kMaxGpusPerNode GPUs, a GPU node without a model, duplicate node names, and a file with no
/// rows. Fields may be double-quoted ("" for a quote); CRLF line ends, a UTF-8 byte order mark
/// and blank lines are tolerated. Models are read by their engine names (CanonicalGpuModel:
/// "Tesla-T4" -> "T4"); the model of a node without GPUs is dropped. Optional column
/// gpu_memory_mib: per-GPU memory in MiB (empty or absent: KnownGpuMemoryMib of the model;
/// 0: unknown, not enforced). Optional column gpu_topology: the node's GPU topology in the
/// compact form of ParseCompactTopology ("nvlink=0-3/4-7;numa=0-3/4-7;kubelet=restricted";
/// empty = none), validated by BuildTopology; rows with the same text and GPU count share one
/// TopologyPtr. Pure function of its arguments; thread-safe.
Result<std::vector<NodeSpec>> ReadNodeCsv(std::string_view text, std::string_view file);

/// Reads an openb pod list: required name,cpu_milli,memory_mib,num_gpu,gpu_milli; optional
/// gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time (the multigpu files have
/// only the required five). Validates as ReadNodeCsv does; gpu_milli must be 1..1000 for GPU
/// pods and 1000 for multi-GPU pods (a pod with num_gpu 0 is CPU-only and its gpu_milli is
/// set to 0). Empty or absent times are -1; gpu_spec keeps its non-empty '|'-separated models
/// by their engine names (CanonicalGpuModels: "A||Tesla-T4" -> "A|T4"); pod_phase is not kept.
/// Optional columns gpu_memory_mib (per GPU, MiB; 0..kMaxGpuMemoryMib) and gpu_memory_percent
/// (per GPU, 0..100, used when gpu_memory_mib is 0): the pod's GPU memory request, as
/// PodSpec holds it (empty or absent: 0, none; ignored for CPU-only pods). Optional column
/// topology: the pod's intent as ParseTopologyRequest reads it (required|preferred[:nvlink|:numa];
/// empty = none).
Result<std::vector<PodSpec>> ReadPodCsv(std::string_view text, std::string_view file);

}  // namespace tessera
