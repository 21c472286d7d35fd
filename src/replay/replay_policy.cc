#include "replay/replay_policy.h"

#include <algorithm>

#include "frag/target_workload.h"
#include "model/cluster.h"
#include "policy/policy.h"
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

}  // namespace tessera

namespace tessera {

ReplayResult RunReplayPolicy(const std::vector<NodeSpec>& nodes, const Timeline& timeline,
                             const ReplayPolicy& policy, ReplayOptions base) {
  std::vector<PodSpec> specs;
  specs.reserve(timeline.pods.size());
  for (const TimedPod& p : timeline.pods) specs.push_back(p.spec);
  TargetWorkload workload = TargetWorkload::FromPods(specs);
  workload.Resolve(Cluster(nodes));
  PolicyContext context;
  context.workload = &workload;
  const std::unique_ptr<Policy> placement = MakePolicy(policy.placement, context);
  TESSERA_CHECK(placement != nullptr);
  base.preemption = policy.preemption;
  base.preempt_delay_s = policy.preempt_delay_s;
  base.headroom = policy.headroom;
  ReplayResult r = RunReplay(nodes, timeline, *placement, &workload, base);
  r.policy = policy.name;
  return r;
}

}  // namespace tessera
