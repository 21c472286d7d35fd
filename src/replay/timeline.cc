#include "replay/timeline.h"

#include <algorithm>
#include <numeric>

namespace tessera {
namespace {

// Why the pod's times cannot be replayed, or empty.
std::string TimeProblem(const PodSpec& p) {
  if (p.creation_time < 0) return "creation_time missing or negative";
  if (p.scheduled_time < 0) return "scheduled_time missing";
  if (p.deletion_time < 0) return "deletion_time missing";
  if (p.scheduled_time < p.creation_time) {
    return "scheduled_time " + std::to_string(p.scheduled_time) + " < creation_time " +
           std::to_string(p.creation_time);
  }
  if (p.deletion_time < p.scheduled_time) {
    return "deletion_time " + std::to_string(p.deletion_time) + " < scheduled_time " +
           std::to_string(p.scheduled_time);
  }
  return {};
}

}  // namespace

Timeline TimelineFromTrace(const std::vector<PodSpec>& pods, std::string_view file,
                           const std::vector<int>& lines, double time_scale) {
  Timeline t;
  int64_t first = -1;
  for (const PodSpec& p : pods) {
    if (TimeProblem(p).empty() && (first < 0 || p.creation_time < first)) first = p.creation_time;
  }
  for (size_t i = 0; i < pods.size(); ++i) {
    const PodSpec& p = pods[i];
    const std::string problem = TimeProblem(p);
    if (!problem.empty()) {
      const int line = i < lines.size() ? lines[i] : static_cast<int>(i) + 2;
      t.skipped.push_back({p.name, std::string(file) + ":" + std::to_string(line), problem});
      continue;
    }
    TimedPod tp;
    tp.spec = p;
    tp.arrival_s = static_cast<double>(p.creation_time - first) / time_scale;
    tp.duration_s = static_cast<double>(p.deletion_time - p.scheduled_time);
    t.pods.push_back(std::move(tp));
  }
  std::stable_sort(t.pods.begin(), t.pods.end(),
                   [](const TimedPod& a, const TimedPod& b) { return a.arrival_s < b.arrival_s; });
  return t;
}

std::vector<int> CsvDataLines(std::string_view text) {
  std::vector<int> lines;
  bool header_seen = false;
  int line = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    ++line;
    std::string_view row = text.substr(pos, end - pos);
    if (!row.empty() && row.back() == '\r') row.remove_suffix(1);
    const bool blank = row.empty();  // as the CSV readers: an empty record
    if (!blank) {
      if (header_seen) lines.push_back(line);
      header_seen = true;
    }
    pos = end + 1;
  }
  return lines;
}

}  // namespace tessera
