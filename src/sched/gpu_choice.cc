#include "sched/gpu_choice.h"

namespace tessera {

GpuSet DrawSharedGpu(int gpu_count, const NodeState& state, const PodRequest& pod, Rng& rng) {
  int with_room = 0;
  for (int i = 0; i < gpu_count; ++i) with_room += GpuHasRoom(state, i, pod);
  int pick = static_cast<int>(rng.Below(static_cast<uint64_t>(with_room)));
  for (int i = 0; i < gpu_count; ++i) {
    if (GpuHasRoom(state, i, pod) && pick-- == 0) return GpuSet{1} << i;
  }
  return 0;
}

}  // namespace tessera
