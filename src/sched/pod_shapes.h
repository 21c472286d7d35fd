#pragma once

// The pod shapes a Scheduler has been asked about: each distinct PodRequest gets an id, by
// which the score cache and the score columns keep what they know of it. Shapes that the
// policy scores alike (they differ only in the host memory request, which a policy may not
// read: Policy::ReadsPodMemory) share a score shape, so one score serves both; whether a pod
// fits is still known per shape. Ids are dense and never reused. Not copyable; not
// thread-safe.

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "model/pod.h"

namespace tessera {

class PodShapes {
 public:
  /// `reads_pod_memory`: Policy::ReadsPodMemory (false: shapes that differ only in the host
  /// memory request share a score shape).
  explicit PodShapes(bool reads_pod_memory) : reads_pod_memory_(reads_pod_memory) {}
  PodShapes(const PodShapes&) = delete;
  PodShapes& operator=(const PodShapes&) = delete;

  /// The id of `pod`'s shape; a shape not seen before gets the next id (size() − 1 after).
  int Id(const PodRequest& pod);

  /// How many shapes have an id.
  size_t size() const { return shapes_.size(); }
  const PodRequest& shape(int id) const { return shapes_[id]; }
  /// The score shape of shape `id`, in [0, score_shapes()).
  int score_shape(int id) const { return score_shape_[id]; }
  size_t score_shapes() const { return score_shapes_.size(); }

 private:
  const bool reads_pod_memory_;
  std::vector<PodRequest> shapes_;
  std::unordered_map<uint64_t, std::vector<int>> index_;  // hash -> shape ids
  std::vector<int> score_shape_;                          // by shape id
  std::vector<PodRequest> score_shapes_;                  // one shape of each score shape
};

}  // namespace tessera
