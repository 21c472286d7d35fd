#include "policy/tessera_hole_fill.h"

#include <array>
#include <map>

namespace tessera {

HoleWaste HoleWaste::OfMilli(const TargetWorkload& workload, double min_share) {
  std::array<int64_t, kMilliPerGpu> by_milli{};
  int64_t sharing = 0;
  for (const TargetClass& c : workload.all_classes()) {
    if (c.gpu_count != 1 || c.gpu_milli <= 0 || c.gpu_milli >= kMilliPerGpu) continue;
    by_milli[c.gpu_milli] += c.count;
    sharing += c.count;
  }
  std::vector<int> sizes;
  for (int m = 1; m < kMilliPerGpu; ++m) {
    if (sharing > 0 && static_cast<double>(by_milli[m]) >= min_share * static_cast<double>(sharing))
      sizes.push_back(m);
  }
  std::vector<int> best(kMilliPerGpu + 1, 0);
  for (int r = 1; r <= kMilliPerGpu; ++r) {
    best[r] = best[r - 1];
    for (int m : sizes) {
      if (m <= r) best[r] = std::max(best[r], best[r - m] + m);
    }
  }
  HoleWaste h;
  h.waste_.assign(kMilliPerGpu + 1, 0);
  for (int r = 0; r <= kMilliPerGpu; ++r) h.waste_[r] = r - best[r];
  return h;
}

HoleWaste HoleWaste::OfMemory(const TargetWorkload& workload, double min_share) {
  std::map<int64_t, int64_t> by_mib;
  int64_t sharing = 0;
  for (const TargetClass& c : workload.all_classes()) {
    if (c.gpu_count != 1 || c.gpu_milli <= 0 || c.gpu_milli >= kMilliPerGpu ||
        c.gpu_memory_mib <= 0)
      continue;
    by_mib[c.gpu_memory_mib] += c.count;
    sharing += c.count;
  }
  std::vector<int64_t> sizes;
  for (const auto& [mib, n] : by_mib) {
    if (static_cast<double>(n) >= min_share * static_cast<double>(sharing)) sizes.push_back(mib);
  }
  // MiB: 256 GiB, more than any GPU has today; a larger free memory counts as this much.
  constexpr int64_t kMax = 262144;
  std::vector<int32_t> best(kMax + 1, 0);
  for (int64_t r = 1; r <= kMax; ++r) {
    best[r] = best[r - 1];
    for (int64_t m : sizes) {
      if (m <= r) best[r] = std::max<int32_t>(best[r], best[r - m] + static_cast<int32_t>(m));
    }
  }
  HoleWaste h;
  h.waste_.assign(kMax + 1, 0);
  for (int64_t r = 0; r <= kMax; ++r) h.waste_[r] = static_cast<int32_t>(r - best[r]);
  return h;
}

}  // namespace tessera
