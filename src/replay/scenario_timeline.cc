#include "replay/scenario_timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>

#include "util/rng.h"

namespace tessera {
namespace {

// Uniform in (0, 1).
double Uniform(Rng& rng) {
  return (static_cast<double>(rng.Next() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

double Rate(const ArrivalProcess& a, double t_h) {
  double rate = a.rate_per_h;
  if (!a.profile.empty()) {
    const int hour = static_cast<int>(std::fmod(t_h, 24.0));
    rate *= a.profile[std::clamp(hour, 0, 23)];
  }
  for (const RateBurst& b : a.bursts) {
    if (t_h >= b.start_h && t_h < b.start_h + b.duration_h) rate += b.rate_per_h;
  }
  return rate;
}

double Duration(const DurationDist& d, Rng& rng) {
  switch (d.kind) {
    case DurationDist::Kind::kFixed:
      return d.mean_s;
    case DurationDist::Kind::kExponential:
      return -d.mean_s * std::log(Uniform(rng));
    case DurationDist::Kind::kLognormal: {
      const double z =
          std::sqrt(-2 * std::log(Uniform(rng))) * std::cos(2 * std::numbers::pi * Uniform(rng));
      const double mu = std::log(d.mean_s) - d.sigma * d.sigma / 2;
      return std::exp(mu + d.sigma * z);
    }
  }
  return d.mean_s;
}

}  // namespace

Timeline ScenarioTimeline(const Scenario& scenario, double time_scale) {
  Timeline t;
  Rng rng(scenario.seed);
  for (const PodClass& c : scenario.classes) {
    if (!c.has_arrival) continue;
    double peak = c.arrival.rate_per_h;
    if (!c.arrival.profile.empty()) {
      peak *= *std::max_element(c.arrival.profile.begin(), c.arrival.profile.end());
    }
    for (const RateBurst& b : c.arrival.bursts) peak += b.rate_per_h;
    if (!(peak > 0)) continue;
    int k = 0;
    double t_h = 0;
    while (true) {
      t_h += -std::log(Uniform(rng)) / peak;
      if (t_h >= scenario.horizon_h) break;
      if (Uniform(rng) * peak >= Rate(c.arrival, t_h)) continue;  // thinning
      TimedPod p;
      char digits[16];
      std::snprintf(digits, sizeof(digits), "%06d", k++);
      p.spec.name = c.name + "-" + digits;
      p.spec.cpu_milli = c.cpu_milli;
      p.spec.memory_mib = c.memory_mib;
      p.spec.gpu_count = c.gpu_count;
      p.spec.gpu_milli = c.gpu_count > 0 ? c.gpu_milli : 0;
      p.spec.gpu_memory_mib = c.gpu_memory_mib;
      p.spec.gpu_spec = c.gpu_spec;
      p.spec.qos = c.qos;
      p.spec.topology = c.topology;
      p.arrival_s = t_h * 3600.0 / time_scale;
      p.duration_s = Duration(c.duration, rng);
      t.pods.push_back(std::move(p));
    }
  }
  std::stable_sort(t.pods.begin(), t.pods.end(),
                   [](const TimedPod& a, const TimedPod& b) { return a.arrival_s < b.arrival_s; });
  return t;
}

}  // namespace tessera
