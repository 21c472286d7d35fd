#include "sched/score_columns.h"

#include <algorithm>

#include "util/check.h"

namespace tessera {

void ScoreColumns::AddShape() {
  ++shapes_;
  scores_.resize(shapes_ * per_shape_ * stride_, kUnknown);
  if (tagged_) tags_.resize(shapes_ * stride_, 0);
}

void ScoreColumns::Grow(int gid) {
  const size_t stride = std::max<size_t>({64, 2 * stride_, static_cast<size_t>(gid) + 1});
  std::vector<int32_t> wider(shapes_ * per_shape_ * stride, kUnknown);
  for (size_t s = 0; s < shapes_ * per_shape_; ++s) {
    std::copy_n(scores_.data() + s * stride_, stride_, wider.data() + s * stride);
  }
  scores_.swap(wider);
  if (tagged_) {
    std::vector<int64_t> wider_tags(shapes_ * stride, 0);
    for (size_t s = 0; s < shapes_; ++s) {
      std::copy_n(tags_.data() + s * stride_, stride_, wider_tags.data() + s * stride);
    }
    tags_.swap(wider_tags);
  }
  stride_ = stride;
}

// Reasons are cached like scores: a pod that fits no group has no score or bound in the
// column, only rejections and kUnknown.
void ScoreColumns::CountRejections(int shape, const NodeGroups& groups, const FitQuery& query,
                                   const PodRequest& pod,
                                   std::array<int, kNumFitReasons>& rejected) {
  int32_t* col = column(shape);
  const int n = groups.ids();
  for (int gid = 0; gid < n; ++gid) {
    const NodeGroups::Record& r = groups.record(gid);
    if (r.members == 0) continue;  // a free group id
    int32_t v = col[gid];
    if (!IsRejection(v)) {
      TESSERA_CHECK(v == kUnknown);  // a score or a bound: it fits
      const FitReason reason = query.ExactOn(r.fit) ? query.Reason(r.fit) : groups.Check(gid, pod);
      TESSERA_CHECK(reason != FitReason::kFits);
      v = col[gid] = kRejected + static_cast<int32_t>(reason);
    }
    rejected[v - kRejected] += r.members;
  }
}

}  // namespace tessera
