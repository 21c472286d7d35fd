#pragma once

// The service-level objectives `tessera plan` sizes for, one per class, as the user writes
// them on the command line: "LS: p99 wait <= 1s" (a wait quantile: p50, p95 or p99; the bound
// in ms, s, m or h) or "BE: gpu-hours >= 5000" (the GPU-hours the class must be served over
// the run). Pure; thread-safe.

#include <string>
#include <string_view>

#include "util/result.h"

namespace tessera {

struct ClassSlo {
  std::string text;       ///< as given
  std::string qos_class;  ///< a class name of the replay (LS, Guaranteed, Burstable, BE, ...)
  enum class Kind { kWait, kGpuHours };
  Kind kind = Kind::kWait;
  int quantile = 99;         ///< kWait: 50, 95 or 99
  double wait_s = 1;         ///< kWait: the bound, seconds
  double min_gpu_hours = 0;  ///< kGpuHours: the least GPU-hours served
};

/// Parses one SLO. Errors quote the text and say what was expected:
/// "--slo 'LS p99 <= 1s': expected 'CLASS: pNN wait <= TIME' or 'CLASS: gpu-hours >= N'
/// (e.g. 'LS: p99 wait <= 1s')".
Result<ClassSlo> ParseSlo(std::string_view text);

/// "1 s", "200 ms", "1.5 h".
std::string FormatSeconds(double s);

}  // namespace tessera
