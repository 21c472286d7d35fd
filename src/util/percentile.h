#pragma once

// The nearest-rank percentile, one definition for the replay's wait quantiles, the headroom's
// demand quantile and the forecast's demand quantiles.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace tessera {

/// The p-th percentile (p in [0, 100]) of `sorted` (ascending) by nearest rank: the value of
/// rank ceil(p/100 · n), at least the first; 0 for no values. Pure; thread-safe.
inline double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t k = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  k = std::clamp<size_t>(k, 1, sorted.size());
  return sorted[k - 1];
}

}  // namespace tessera
