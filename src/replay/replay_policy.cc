#include "replay/replay_policy.h"

#include <algorithm>

#include "frag/target_workload.h"
#include "model/cluster.h"
#include "policy/policy.h"
#include "sched/engine.h"
#include "util/check.h"

namespace tessera {

ReplayPolicy TesseraReplayPolicy() {
  ReplayPolicy p;
  p.name = "tessera";
  p.placement = "tessera";
  p.preemption = true;
  p.preempt_delay_s = 0;
  p.headroom.mode = HeadroomOptions::Mode::kBacklog;
  p.headroom.min_priority = 1000;
  p.headroom.gpus = 0;
  p.headroom.window_s = 5400;  // docs/REPLAY.md, "How the setting was chosen"
  p.headroom.bucket_s = 60;    // only how often aged-out backlog peaks leave the window
  p.headroom.quantile = 0.99;  // unused by kBacklog
  p.headroom.factor = 2.5;
  p.slo_aware = true;
  return p;
}

Result<ReplayPolicy> ReplayPolicyByName(const std::string& name) {
  if (name == "tessera") return TesseraReplayPolicy();
  std::string base = name;
  bool preemption = true;
  const std::string suffix = "/nopreempt";
  if (base.size() > suffix.size() && base.ends_with(suffix)) {
    base.resize(base.size() - suffix.size());
    preemption = false;
  }
  const auto& known = PolicyNames();
  if (std::find(known.begin(), known.end(), base) == known.end() || base == "tessera") {
    std::string list = "tessera";
    for (const std::string& k : known) {
      if (k != "tessera") list += ", " + k;
    }
    return Error{"unknown replay policy '" + name + "' (known: " + list +
                 "; add /nopreempt to a placement policy to turn preemption off)"};
  }
  ReplayPolicy p;
  p.name = name;
  p.placement = base;
  p.preemption = preemption;
  return p;
}

void ProtectHeadroomClasses(const QosClasses& classes, std::vector<ReplayPolicy>* policies) {
  for (ReplayPolicy& p : *policies) {
    if (p.headroom.mode != HeadroomOptions::Mode::kNone) {
      p.headroom.min_priority = HeadroomProtectedPriority(classes);
    }
  }
}

Result<std::vector<std::pair<std::string, int64_t>>> ParseHeadroomModels(
    const std::vector<std::string>& values) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const std::string& v : values) {
    const size_t eq = v.find('=');
    const std::string model = eq == std::string::npos ? "" : v.substr(0, eq);
    const std::string gpus = eq == std::string::npos ? "" : v.substr(eq + 1);
    if (model.empty() || gpus.empty()) {
      return Error{"--headroom-model: expected MODEL=GPUS (e.g. A10=4), got '" + v + "'"};
    }
    int64_t n = 0;
    bool ok = gpus.size() <= 8;
    for (char c : gpus) {
      ok = ok && c >= '0' && c <= '9';
      if (ok) n = n * 10 + (c - '0');
    }
    if (!ok || n > kMaxHeadroomGpus) {
      return Error{"--headroom-model " + v + ": GPUS must be an integer 0.." +
                   std::to_string(kMaxHeadroomGpus) + ", got '" + gpus + "'"};
    }
    for (const auto& [m, g] : out) {
      if (m == model) return Error{"--headroom-model: GPU model '" + model + "' given twice"};
    }
    out.emplace_back(model, n);
  }
  return out;
}

}  // namespace tessera

namespace tessera {

ReplayResult RunReplayPolicy(const std::vector<NodeSpec>& nodes, const Timeline& timeline,
                             const ReplayPolicy& policy, ReplayOptions base) {
  std::vector<PodSpec> specs;
  specs.reserve(timeline.pods.size());
  for (const TimedPod& p : timeline.pods) specs.push_back(p.spec);
  // The placement policy with the timeline's pods as its target workload: the engine's
  // recipe, as serve's and frag's.
  Result<std::unique_ptr<Engine>> engine =
      Engine::Create(nodes, specs, policy.placement, base.seed);
  TESSERA_CHECK(engine.ok());
  base.preemption = policy.preemption;
  base.preempt_delay_s = policy.preempt_delay_s;
  base.headroom = policy.headroom;
  ReplayResult r = RunReplay(nodes, timeline, (*engine)->policy(), (*engine)->workload(), base);
  r.policy = policy.name;
  return r;
}

}  // namespace tessera
