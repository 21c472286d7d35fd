#include "k8s/extender/metrics.h"

#include <array>
#include <string>

namespace tessera::k8s {

ExtenderMetrics::ExtenderMetrics(const QosClasses& classes) {
  auto& requests = prometheus::BuildCounter()
                       .Name("tessera_requests_total")
                       .Help("Extender HTTP requests, by verb.")
                       .Register(registry);
  auto& durations = prometheus::BuildHistogram()
                        .Name("tessera_request_duration_seconds")
                        .Help(
                            "Time to answer an extender request, by verb (bind includes its "
                            "API calls).")
                        .Register(registry);
  const prometheus::Histogram::BucketBoundaries buckets(kRequestDurationBuckets.begin(),
                                                        kRequestDurationBuckets.end());
  for (const char* verb : {"filter", "prioritize", "preempt", "bind", "other"}) {
    verbs[verb] = Verb{&requests.Add({{"verb", verb}}), &durations.Add({{"verb", verb}}, buckets)};
  }
  auto& bind_family = prometheus::BuildCounter()
                          .Name("tessera_binds_total")
                          .Help(
                              "Bind requests by outcome: ok, rejected (does not fit, unknown "
                              "pod or node, blocked node), refused (filter did not pass the "
                              "node, or the headroom keeps the GPUs), not-synced, error (the API "
                              "server refused), unknown (no "
                              "answer from the API server; the GPUs stay reserved).")
                          .Register(registry);
  for (const char* result : {"ok", "rejected", "refused", "not-synced", "error", "unknown"}) {
    binds[result] = &bind_family.Add({{"result", result}});
  }
  pods_bound = &prometheus::BuildCounter()
                    .Name("tessera_pods_bound_total")
                    .Help("Pods bound by this extender.")
                    .Register(registry)
                    .Add({});
  auto& rejected = prometheus::BuildCounter()
                       .Name("tessera_filter_rejections_total")
                       .Help("Candidate nodes rejected by filter, by reason.")
                       .Register(registry);
  static constexpr std::array<const char*, kReasonFit> kNames = {
      "unknown-node",        "unschedulable", "not-synced",    "blocked",  "no-gpus",
      "gpu-memory-capacity", "device-plugin", "device-plugin", "headroom", "nominated"};
  for (int r = 0; r < kReasonFit + kNumFitReasons; ++r) {
    const std::string name =
        r < kReasonFit ? kNames[r]
                       : std::string(FitReasonName(static_cast<FitReason>(r - kReasonFit)));
    rejections[r] = &rejected.Add({{"reason", name}});
  }
  bad_pods = &rejected.Add({{"reason", "bad-pod"}});
  topology_annotation_errors =
      &prometheus::BuildCounter()
           .Name("tessera_topology_annotation_errors_total")
           .Help(
               "Malformed GPU topology annotations on nodes (tessera.io/gpu-topology, "
               "hami.io/node-nvidia-score): each node's distinct error counted once; the node is "
               "treated as having no topology.")
           .Register(registry)
           .Add({});
  preempt_nodes = &prometheus::BuildCounter()
                       .Name("tessera_preemption_nodes_total")
                       .Help("Candidate nodes offered to preemption (each with victims).")
                       .Register(registry)
                       .Add({});
  preempt_victims = &prometheus::BuildCounter()
                         .Name("tessera_preemption_victims_total")
                         .Help("Victims proposed, summed over offered nodes.")
                         .Register(registry)
                         .Add({});
  auto& waits = prometheus::BuildHistogram()
                    .Name("tessera_scheduling_wait_seconds")
                    .Help(
                        "Time from a GPU pod's creation (metadata.creationTimestamp) to its "
                        "bind by this extender (or to the watch showing it bound), by class.")
                    .Register(registry);
  auto& slo = prometheus::BuildCounter()
                  .Name("tessera_slo_pods_total")
                  .Help(
                      "GPU pods bound, by class and by whether their scheduling wait was within "
                      "the class's SLO (result=within) or beyond it (result=beyond); classes "
                      "without an SLO have no samples.")
                  .Register(registry);
  const prometheus::Histogram::BucketBoundaries wait_buckets(kWaitBuckets.begin(),
                                                             kWaitBuckets.end());
  for (const QosClass& c : classes.classes) {
    wait.push_back(&waits.Add({{"class", c.name}}, wait_buckets));
    const bool has_slo = c.slo_wait_s >= 0;
    slo_within.push_back(has_slo ? &slo.Add({{"class", c.name}, {"result", "within"}}) : nullptr);
    slo_beyond.push_back(has_slo ? &slo.Add({{"class", c.name}, {"result", "beyond"}}) : nullptr);
    slo_s.push_back(c.slo_wait_s);
  }
}

void ExtenderMetrics::Waited(int cls, double wait_s) {
  if (cls < 0 || static_cast<size_t>(cls) >= wait.size()) return;
  wait[cls]->Observe(wait_s);
  if (slo_within[cls] == nullptr) return;
  (wait_s <= slo_s[cls] ? slo_within[cls] : slo_beyond[cls])->Increment();
}

void ExtenderMetrics::Request(std::string_view verb, double seconds) {
  auto it = verbs.find(verb);
  if (it == verbs.end()) it = verbs.find("other");
  it->second.count->Increment();
  it->second.duration->Observe(seconds);
}

void ExtenderMetrics::Bind(std::string_view result) {
  auto it = binds.find(result);
  if (it != binds.end()) it->second->Increment();
  if (result == "ok") pods_bound->Increment();
}

}  // namespace tessera::k8s
