#include "sched/pod_shapes.h"

#include "util/hash.h"

namespace tessera {

int PodShapes::Id(const PodRequest& pod) {
  uint64_t h = HashMix(static_cast<uint64_t>(pod.cpu_milli), static_cast<uint64_t>(pod.memory_mib));
  h = HashMix(h, static_cast<uint64_t>(pod.gpu_count) << 32 | static_cast<uint32_t>(pod.gpu_milli));
  h = HashMix(h, static_cast<uint64_t>(pod.gpu_memory_mib));
  h = HashMix(h, pod.models);
  std::vector<int>& ids = index_[h];
  for (int id : ids) {
    if (shapes_[id] == pod) return id;
  }
  const int id = static_cast<int>(shapes_.size());
  shapes_.push_back(pod);
  ids.push_back(id);
  // Its score shape: a shape seen before that the policy scores alike, else a new one.
  int score_shape = static_cast<int>(score_shapes_.size());
  if (!reads_pod_memory_) {
    for (size_t s = 0; s < score_shapes_.size(); ++s) {
      PodRequest other = score_shapes_[s];
      other.memory_mib = pod.memory_mib;
      if (other == pod) {
        score_shape = static_cast<int>(s);
        break;
      }
    }
  }
  if (score_shape == static_cast<int>(score_shapes_.size())) score_shapes_.push_back(pod);
  score_shape_.push_back(score_shape);
  return id;
}

}  // namespace tessera
