#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "model/fit.h"
#include "policy/policy.h"
#include "util/check.h"

namespace tessera {

namespace hypothetical_detail {

// The placements of BestHypotheticalPlacements (below), with the pod's GPU memory taken from
// each GPU it uses when kMemory (BestHypotheticalPlacements2D): `score_after` is then called
// with the free MiB per GPU as a third argument, and sharing GPUs are deduplicated by
// (free milli, free MiB) instead of by free milli.
template <bool kMemory, size_t N, typename ScoreAfter>
std::array<NodeScore, N> Best(const NodeView& node, const PodRequest& pod, ScoreAfter score_after) {
  const int g = node.spec.gpu_count;
  const int64_t cpu_after = node.state.cpu_left - pod.cpu_milli;
  // The free MiB per GPU exist only with kMemory (the one-dimensional scores are the hot path).
  struct None {};
  using Mem = std::conditional_t<kMemory, std::array<int32_t, kMaxGpusPerNode>, None>;
  std::array<int32_t, kMaxGpusPerNode> free = node.state.gpu_free;
  Mem mem;
  if constexpr (kMemory) mem = node.state.gpu_mem_free;
  const auto pod_mem = static_cast<int32_t>(pod.gpu_memory_mib);
  const auto score = [&] {
    if constexpr (kMemory) {
      return score_after(cpu_after, free.data(), mem.data());
    } else {
      return score_after(cpu_after, free.data());
    }
  };
  std::array<NodeScore, N> out{};
  if (pod.IsSharing()) {
    std::array<int64_t, N> best_score;
    best_score.fill(std::numeric_limits<int64_t>::min());
    std::array<int, N> best_gpu;
    best_gpu.fill(-1);
    std::array<int32_t, kMaxGpusPerNode> tried_free{};
    Mem tried_mem{};
    std::array<std::array<int64_t, N>, kMaxGpusPerNode> tried_score{};
    int num_tried = 0;
    const auto tried = [&](int k, int i) {
      if constexpr (kMemory) {
        return tried_free[k] == free[i] && tried_mem[k] == mem[i];
      } else {
        return tried_free[k] == free[i];
      }
    };
    // On a node with a topology, GPUs with equal free milli differ by their domains.
    const bool dedupe = node.spec.topology == nullptr;
    for (int i = 0; i < g; ++i) {
      if (!GpuHasRoom(node.state, i, pod)) continue;
      int k = dedupe ? 0 : num_tried;
      while (k < num_tried && !tried(k, i)) ++k;
      if (k == num_tried) {
        tried_free[k] = free[i];
        free[i] -= pod.gpu_milli;
        if constexpr (kMemory) {
          tried_mem[k] = mem[i];
          mem[i] -= pod_mem;
        }
        tried_score[k] = score();
        free[i] += pod.gpu_milli;
        if constexpr (kMemory) mem[i] += pod_mem;
        ++num_tried;
      }
      for (size_t v = 0; v < N; ++v) {
        if (tried_score[k][v] > best_score[v]) {
          best_score[v] = tried_score[k][v];
          best_gpu[v] = i;
        }
      }
    }
    for (size_t v = 0; v < N; ++v) {
      TESSERA_CHECK(best_gpu[v] >= 0);
      out[v] = {static_cast<double>(best_score[v]), GpuSet{1} << best_gpu[v]};
    }
    return out;
  }
  GpuSet gpus = 0;
  if (!pod.IsCpuOnly()) {
    gpus = DefaultGpuChoice(g, node.state, pod, node.spec.topology.get());
    for (GpuSet s = gpus; s != 0; s &= s - 1) {
      free[std::countr_zero(s)] -= pod.gpu_milli;
      if constexpr (kMemory) mem[std::countr_zero(s)] -= pod_mem;
    }
  }
  const std::array<int64_t, N> scores = score();
  for (size_t v = 0; v < N; ++v) out[v] = {static_cast<double>(scores[v]), gpus};
  return out;
}

}  // namespace hypothetical_detail

/// BestHypotheticalPlacement (below) for N scores at once: `score_after` returns a std::array
/// of N integer scores per placement, and out[v] is what BestHypotheticalPlacement would return
/// with the v-th of them (each placement is weighed once for all N).
template <size_t N, typename ScoreAfter>
std::array<NodeScore, N> BestHypotheticalPlacements(const NodeView& node, const PodRequest& pod,
                                                    ScoreAfter score_after) {
  return hypothetical_detail::Best<false, N>(node, pod, score_after);
}

/// The placements a fragmentation-style policy (fgd, tessera) weighs on one node, scored by
/// `score_after(cpu_left_after, gpu_free_after)` (an integer; higher wins) on the node's state
/// after the hypothetical placement:
///   - a sharing pod: every GPU with room; the first best by index wins. GPUs with equal free
///     milli give equal scores (the scores must not depend on GPU order), so each free value
///     is scored once (on a node without topology; with one, each GPU);
///   - a whole-GPU pod: DefaultGpuChoice (the lowest-index free GPUs, also the tightest
///     sufficient ones; on a node with a topology, TopologyGpuChoice);
///   - a CPU-only pod: no GPU.
/// Precondition: the pod fits the node.
template <typename ScoreAfter>
NodeScore BestHypotheticalPlacement(const NodeView& node, const PodRequest& pod,
                                    ScoreAfter score_after) {
  return BestHypotheticalPlacements<1>(node, pod, [&](int64_t cpu_after, const int32_t* free) {
    return std::array<int64_t, 1>{score_after(cpu_after, free)};
  })[0];
}

/// BestHypotheticalPlacements in two dimensions, for policies that also weigh GPU memory:
/// `score_after(cpu_left_after, gpu_free_after, gpu_mem_free_after)` sees the node's free
/// milli and free MiB per GPU after the hypothetical placement (the pod's memory taken from
/// each GPU it uses). The placements are those of BestHypotheticalPlacements; sharing GPUs
/// with equal (free milli, free MiB) are scored once.
template <size_t N, typename ScoreAfter>
std::array<NodeScore, N> BestHypotheticalPlacements2D(const NodeView& node, const PodRequest& pod,
                                                      ScoreAfter score_after) {
  return hypothetical_detail::Best<true, N>(node, pod, score_after);
}

}  // namespace tessera
