// FitQuery on a FitSummary must never reject a pod that CheckFit accepts, and must be
// CheckFit itself (verdict and reason) when it says it is exact.
#include "model/fit_summary.h"

#include <gtest/gtest.h>

#include "util/rng.h"

namespace tessera {
namespace {

TEST(FitSummary, AgreesWithCheckFitOnRandomStates) {
  Rng rng(11);
  int exact = 0;
  int fits = 0;
  for (int it = 0; it < 200000; ++it) {
    const int gpus = static_cast<int>(rng.Below(kMaxGpusPerNode + 1));
    const int model = gpus == 0 ? -1 : static_cast<int>(rng.Below(3)) * 30;  // ids 0, 30, 60
    NodeState st;
    st.cpu_left = 1000 * static_cast<int64_t>(rng.Below(5));
    st.memory_left = 1000 * static_cast<int64_t>(rng.Below(5));
    for (int i = 0; i < gpus; ++i) {
      const uint64_t k = rng.Below(4);
      st.gpu_free[i] = k == 0 ? 1000 : k == 1 ? 0 : static_cast<int32_t>(rng.Below(1001));
      st.gpu_mem_free[i] = 1000 * static_cast<int32_t>(rng.Below(3));
    }
    PodRequest p;
    p.cpu_milli = 1000 * static_cast<int64_t>(rng.Below(5));
    p.memory_mib = 1000 * static_cast<int64_t>(rng.Below(5));
    switch (rng.Below(5)) {
      case 0:  // CPU-only
        break;
      case 1:  // sharing
        p.gpu_count = 1;
        p.gpu_milli = 1 + static_cast<int32_t>(rng.Below(999));
        break;
      case 2:  // whole GPUs
        p.gpu_count = 1 + static_cast<int32_t>(rng.Below(kMaxGpusPerNode + 2));
        p.gpu_milli = 1000;
        break;
      case 3:  // several GPUs, a share of each
        p.gpu_count = 1 + static_cast<int32_t>(rng.Below(3));
        p.gpu_milli = 1 + static_cast<int32_t>(rng.Below(1000));
        break;
      default:  // more than a field holds
        p.gpu_count = 1;
        p.gpu_milli = 1000;
        p.cpu_milli = int64_t{1} << 35;
        break;
    }
    if (!p.IsCpuOnly()) {
      if (rng.Below(4) == 0) p.gpu_memory_mib = 1000 * static_cast<int64_t>(rng.Below(3));
      if (rng.Below(2) == 0) p.models = ModelMask{1} << (30 * rng.Below(3));
    }
    const FitSummary s = FitSummary::Of(gpus, model, st);
    const FitQuery q(p);
    const FitReason want = CheckFit(gpus, model, st, p);
    ASSERT_FALSE(q.MayFit(FitSummary::None()));
    if (want == FitReason::kFits) {
      ASSERT_TRUE(q.MayFit(s)) << it;
      ++fits;
    }
    if (q.exact()) {
      ++exact;
      ASSERT_EQ(q.MayFit(s), want == FitReason::kFits) << it;
      ASSERT_EQ(q.Reason(s), want) << it;
    }
  }
  EXPECT_GT(exact, 100000);  // CPU-only, sharing and whole-GPU pods without GPU memory
  EXPECT_GT(fits, 20000);
}

TEST(FitSummary, ClampedValuesKeepTheTestNecessary) {
  NodeState st;
  st.cpu_left = int64_t{1} << 40;  // more than the field holds
  st.memory_left = int64_t{1} << 36;
  st.gpu_free[0] = 1000;
  const FitSummary s = FitSummary::Of(1, 0, st);
  PodRequest p;
  p.cpu_milli = (int64_t{1} << 40) + 1;  // one more than the node has
  p.memory_mib = 1;
  const FitQuery q(p);
  EXPECT_FALSE(q.exact());
  EXPECT_TRUE(q.MayFit(s));  // the clamp cannot tell: CheckFit must confirm
  EXPECT_EQ(CheckFit(1, 0, st, p), FitReason::kCpu);
  p.cpu_milli = int64_t{1} << 40;
  EXPECT_EQ(CheckFit(1, 0, st, p), FitReason::kFits);
  EXPECT_TRUE(FitQuery(p).MayFit(s));
}

}  // namespace
}  // namespace tessera
