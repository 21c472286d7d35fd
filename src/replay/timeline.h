#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/pod.h"

namespace tessera {

/// One pod of a replay: what it asks for, when it arrives and how long it runs once placed.
struct TimedPod {
  PodSpec spec;
  double arrival_s = 0;   ///< virtual seconds from the start of the replay
  double duration_s = 0;  ///< run time once placed (virtual seconds, >= 0)
};

/// A pod left out of a replay, and why.
struct SkippedPod {
  std::string name;
  std::string where;   ///< "file:line"
  std::string reason;  ///< e.g. "deletion_time 10 < scheduled_time 20"
};

/// The pods of a replay, ordered by arrival (ties keep input order), and those left out.
struct Timeline {
  std::vector<TimedPod> pods;
  std::vector<SkippedPod> skipped;
};

/// A timeline from trace pods (openb pod list): a pod arrives at creation_time / time_scale
/// and runs for deletion_time − scheduled_time seconds (durations are not scaled: compressing
/// arrivals alone raises the offered load by `time_scale`). Arrivals are shifted so that the
/// first one is at 0. Pods with a missing time, creation_time < 0, scheduled_time <
/// creation_time or deletion_time < scheduled_time are skipped with `file`:`lines[i]`
/// (lines[i] = physical line of pod i; when `lines` is shorter, line = i + 2).
/// Precondition: time_scale > 0. Pure function; thread-safe.
Timeline TimelineFromTrace(const std::vector<PodSpec>& pods, std::string_view file,
                           const std::vector<int>& lines, double time_scale);

/// The physical line (1-based) of each data row of a CSV text whose first non-blank line is
/// the header: blank lines are skipped as the CSV readers skip them.
std::vector<int> CsvDataLines(std::string_view text);

}  // namespace tessera
