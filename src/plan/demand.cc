#include "plan/demand.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "util/rng.h"

namespace tessera {
namespace {

double Uniform(Rng& rng) { return static_cast<double>(rng.Next() >> 11) * 0x1p-53; }

double Gpus(const TimedPod& p) { return static_cast<double>(p.spec.TotalGpuMilli()) / 1000.0; }

// (time, delta GPUs) of every start and end, in time order (ends before starts at a tie).
std::vector<std::pair<double, double>> Steps(const Timeline& t) {
  std::vector<std::pair<double, double>> steps;
  for (const TimedPod& p : t.pods) {
    const double g = Gpus(p);
    if (g <= 0) continue;
    steps.push_back({p.arrival_s, g});
    steps.push_back({p.arrival_s + p.duration_s, -g});
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

}  // namespace

Timeline GrowDemand(const Timeline& timeline, double growth, uint64_t seed, double jitter_s) {
  if (growth == 1) return timeline;
  Rng rng(seed ^ 0x9e3779b97f4a7c15ULL);
  Timeline out;
  out.skipped = timeline.skipped;
  const int whole = static_cast<int>(std::floor(growth));
  const double frac = growth - whole;
  for (const TimedPod& p : timeline.pods) {
    int copies = whole + (Uniform(rng) < frac ? 1 : 0);
    for (int k = 0; k < copies; ++k) {
      TimedPod c = p;
      if (k > 0) {
        c.spec.name += "~" + std::to_string(k);
        c.arrival_s += Uniform(rng) * jitter_s;
      }
      out.pods.push_back(std::move(c));
    }
  }
  std::stable_sort(out.pods.begin(), out.pods.end(),
                   [](const TimedPod& a, const TimedPod& b) { return a.arrival_s < b.arrival_s; });
  return out;
}

Timeline BusiestWindow(const Timeline& timeline, double hours) {
  const std::vector<TimedPod>& pods = timeline.pods;
  const double w = hours * 3600;
  if (pods.empty() || pods.back().arrival_s - pods.front().arrival_s <= w) return timeline;
  size_t best_from = 0, best_to = 0, j = 0;
  double best = -1, sum = 0;
  for (size_t i = 0; i < pods.size(); ++i) {
    while (j < pods.size() && pods[j].arrival_s < pods[i].arrival_s + w) {
      sum += Gpus(pods[j]) * pods[j].duration_s;
      ++j;
    }
    if (sum > best) {
      best = sum;
      best_from = i;
      best_to = j;
    }
    sum -= Gpus(pods[i]) * pods[i].duration_s;
  }
  Timeline out;
  out.skipped = timeline.skipped;
  const double t0 = pods[best_from].arrival_s;
  for (size_t i = best_from; i < best_to; ++i) {
    TimedPod p = pods[i];
    p.arrival_s -= t0;
    out.pods.push_back(std::move(p));
  }
  return out;
}

std::vector<int> PodsAtPeak(const Timeline& timeline) {
  double level = 0, best = -1, at = 0;
  for (const auto& [t, d] : Steps(timeline)) {
    level += d;
    if (level > best + 1e-9) {
      best = level;
      at = t;
    }
  }
  std::vector<int> out;
  for (size_t i = 0; i < timeline.pods.size(); ++i) {
    const TimedPod& p = timeline.pods[i];
    if (p.arrival_s <= at && at < p.arrival_s + p.duration_s) out.push_back(static_cast<int>(i));
  }
  return out;
}

std::vector<ClassLoad> OfferedLoad(const Timeline& timeline, double end_s) {
  std::vector<ClassLoad> out;
  if (timeline.pods.empty()) return out;
  const double end = end_s < 0 ? timeline.pods.back().arrival_s : end_s;
  const double span = std::max(1.0, end - timeline.pods.front().arrival_s);
  std::map<std::string, ClassLoad> by;
  for (const TimedPod& p : timeline.pods) {
    ClassLoad& c = by[p.spec.qos];
    c.qos = p.spec.qos;
    ++c.pods;
    const double d = std::clamp(end - p.arrival_s, 0.0, p.duration_s);
    c.gpus += Gpus(p) * d;
    c.mean_duration_s += d;
    c.mean_gpus_per_pod += Gpus(p);
  }
  for (auto& [name, c] : by) {
    c.gpus /= span;
    c.arrival_per_s = c.pods / span;
    c.mean_duration_s /= c.pods;
    c.mean_gpus_per_pod /= c.pods;
    out.push_back(c);
  }
  return out;
}

}  // namespace tessera
