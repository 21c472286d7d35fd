#pragma once

// The Extender's own counters and histograms (prometheus-cpp), updated without the model's
// lock; the gauges that describe the model are computed when metrics are collected
// (status.h, AppendModelGauges). Internal to src/k8s/extender/.

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <array>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "k8s/extender/extender_options.h"
#include "k8s/extender/node_filter.h"
#include "model/fit.h"
#include "sched/classes.h"

namespace tessera::k8s {

struct ExtenderMetrics {
  explicit ExtenderMetrics(const QosClasses& classes);

  /// One request of `verb` took `seconds`. Known verbs cost no lock; others count as "other".
  void Request(std::string_view verb, double seconds);
  /// One bind answered with `result` (ok, rejected, refused, not-synced, error, unknown).
  void Bind(std::string_view result);
  /// A pod of class `cls` waited `wait_s` from creation to bound.
  void Waited(int cls, double wait_s);

  prometheus::Registry registry;
  struct Verb {
    prometheus::Counter* count;
    prometheus::Histogram* duration;
  };
  std::map<std::string, Verb, std::less<>> verbs;                  ///< fixed after construction
  std::map<std::string, prometheus::Counter*, std::less<>> binds;  ///< by result, fixed
  prometheus::Counter* pods_bound;
  /// Filter's rejected candidates by Extender reason code.
  std::array<prometheus::Counter*, kReasonFit + kNumFitReasons> rejections;
  prometheus::Counter* bad_pods;
  /// Node topology annotations refused (each node's distinct error counted once).
  prometheus::Counter* topology_annotation_errors;
  prometheus::Counter* preempt_nodes;
  prometheus::Counter* preempt_victims;
  /// By class index: the scheduling wait, and the pods bound within / beyond the class's SLO
  /// (null for a class without an SLO).
  std::vector<prometheus::Histogram*> wait;
  std::vector<prometheus::Counter*> slo_within;
  std::vector<prometheus::Counter*> slo_beyond;
  std::vector<double> slo_s;
};

}  // namespace tessera::k8s
