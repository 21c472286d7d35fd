// curve.csv and placements.csv.

#include <charconv>
#include <string>
#include <string_view>
#include <vector>

#include "report/report.h"
#include "util/format.h"

namespace tessera {
namespace {

/// `text` made safe for an unquoted CSV field: commas, quotes and line breaks become spaces
/// (reasons use "cpu:12 gpu:1201", so nothing meaningful is lost).
void AppendField(std::string* out, std::string_view text) {
  for (char c : text) {
    *out += (c == ',' || c == '"' || c == '\n' || c == '\r') ? ' ' : c;
  }
}

/// "0-3-5": the GPU indices of `gpus`, ascending; empty for none.
void AppendGpus(std::string* out, GpuSet gpus) {
  bool first = true;
  for (int i = 0; i < 32; ++i) {
    if ((gpus >> i) & 1u) {
      if (!first) *out += '-';
      *out += std::to_string(i);
      first = false;
    }
  }
}

}  // namespace

std::string CurveCsv(const std::vector<RunResult>& runs) {
  bool memory = false;
  for (const RunResult& run : runs) memory |= run.has_gpu_memory;
  std::string out =
      "policy,seed,arrival_pct,arrived_pct,allocated_milli,unallocated_pct,frag_milli,"
      "frag_ratio";
  out += memory ? ",unallocated_mem_mib,unallocated_mem_pct,failed,gpus_compute_no_memory,"
                  "gpus_memory_no_compute\n"
                : "\n";
  for (const RunResult& run : runs) {
    for (const CurvePoint& p : run.curve) {
      AppendField(&out, run.policy);
      out += ',';
      out += std::to_string(run.seed);
      out += ',';
      AppendNumber(&out, p.arrival_pct);
      out += ',';
      AppendNumber(&out, p.arrived_pct);
      out += ',';
      AppendNumber(&out, p.allocated_milli);
      out += ',';
      AppendNumber(&out, p.unallocated_pct);
      out += ',';
      AppendNumber(&out, p.frag_milli);
      out += ',';
      AppendNumber(&out, p.frag_ratio);
      if (memory) {
        out += ',';
        AppendNumber(&out, p.unallocated_mem_mib);
        out += ',';
        AppendNumber(&out, p.unallocated_mem_pct);
        out += ',';
        out += std::to_string(p.failed);
        out += ',';
        out += std::to_string(p.gpus_compute_no_memory);
        out += ',';
        out += std::to_string(p.gpus_memory_no_compute);
      }
      out += '\n';
    }
  }
  return out;
}

std::string PlacementsCsv(const std::vector<RunResult>& runs, const std::vector<PodSpec>& pods,
                          const std::vector<NodeSpec>& nodes) {
  std::string out = "policy,seed,seq,pod,node,gpus,milli_per_gpu,status\n";
  for (const RunResult& run : runs) {
    for (const PlacementRecord& rec : run.placements) {
      const bool pod_known = rec.pod >= 0 && static_cast<size_t>(rec.pod) < pods.size();
      const bool node_known = rec.node >= 0 && static_cast<size_t>(rec.node) < nodes.size();
      AppendField(&out, run.policy);
      out += ',';
      out += std::to_string(run.seed);
      out += ',';
      out += std::to_string(rec.seq);
      out += ',';
      if (pod_known) {
        AppendField(&out, pods[rec.pod].name);
      } else {
        out += "#" + std::to_string(rec.pod);  // not expected: an index outside the pod list
      }
      if (rec.clone > 0) out += "~" + std::to_string(rec.clone);
      out += ',';
      if (node_known) {
        AppendField(&out, nodes[rec.node].name);
      } else if (rec.node >= 0) {
        out += "#" + std::to_string(rec.node);
      }
      out += ',';
      AppendGpus(&out, rec.gpus);
      out += ',';
      const bool cpu_only =
          !pod_known || pods[rec.pod].gpu_count == 0 || pods[rec.pod].gpu_milli == 0;
      out += std::to_string(cpu_only ? 0 : pods[rec.pod].gpu_milli);
      out += ',';
      if (rec.node >= 0) {
        out += "OK";
      } else {
        out += "FAILED";
        if (!rec.reason.empty()) {
          out += ' ';
          AppendField(&out, rec.reason);
        }
      }
      out += '\n';
    }
  }
  return out;
}

}  // namespace tessera
