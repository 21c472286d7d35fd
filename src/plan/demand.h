#pragma once

// The demand `tessera plan` sizes for, derived from a history: grown by a factor, cut to its
// busiest window, and summarised (the concurrent GPU demand it would have on a cluster that
// never makes a pod wait, and the offered load per class). Pure functions; thread-safe.

#include <cstdint>
#include <string>
#include <vector>

#include "replay/timeline.h"

namespace tessera {

/// `timeline` with its demand multiplied by `growth` (>= 1 adds pods; < 1 thins them): every
/// pod is kept floor(growth) times and once more with probability frac(growth), each copy
/// after the first arriving a uniform draw in [0, jitter_s) after the original (so copies do
/// not all land in the same instant). Copies are named "<name>~<k>". Deterministic for
/// `seed`; growth 1 returns the timeline as is.
Timeline GrowDemand(const Timeline& timeline, double growth, uint64_t seed, double jitter_s);

/// The pods arriving in the `hours`-long window (start at an arrival) with the most GPU-seconds
/// requested, shifted to start at 0; the whole timeline when it is shorter than the window.
Timeline BusiestWindow(const Timeline& timeline, double hours);

/// The instant of the highest concurrent GPU demand (every pod running from its arrival for
/// its duration) and the pods running then.
std::vector<int> PodsAtPeak(const Timeline& timeline);

/// Per qos class (PodSpec::qos, "" as is), the offered load in GPUs over the run [first
/// arrival, `end_s`] (Σ GPUs · the part of each pod's duration before end_s, divided by the
/// run's length), the arrival rate (per second) and the mean duration so clipped (seconds).
/// `end_s` < 0: the last arrival.
struct ClassLoad {
  std::string qos;
  int pods = 0;
  double gpus = 0;  ///< mean GPUs the class would keep busy (Erlangs of GPU)
  double arrival_per_s = 0;
  double mean_duration_s = 0;
  double mean_gpus_per_pod = 0;
};
std::vector<ClassLoad> OfferedLoad(const Timeline& timeline, double end_s);

}  // namespace tessera
