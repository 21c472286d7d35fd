#pragma once

// Classes of service: what a pod's class promises (a priority, a wait SLO, whether it may be
// preempted or use reserved headroom). One type for every front door: `tessera replay` reads
// classes from a trace's qos column (replay/qos_yaml.h parses its --classes file), `tessera
// serve` from the pod's label or spec.priority (k8s/serve/serve_config.h parses `classes:`).
// Plain values; no I/O.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

/// A class of service: pods whose qos / tessera.io/class label names it, or whose priority
/// falls in its band (QosClasses::Classify).
struct QosClass {
  std::string name;         ///< matches PodSpec::qos / the tessera.io/class label exactly
  int priority = 0;         ///< higher is more important; preemption takes only lower ones.
                            ///< In serve also the lowest spec.priority of the class.
  double slo_wait_s = -1;   ///< the wait a pod of this class may see (seconds); < 0 = none
  bool preemptible = true;  ///< may be a preemption victim
  double grace_s = 30;      ///< termination grace period as a victim (seconds)
  /// May place into reserved headroom: the headroom protects from the lowest priority of the
  /// classes that may (HeadroomProtectedPriority) and holds the preemptible classes below it,
  /// in serve, replay and plan alike (sched/cycle.h).
  bool use_headroom = false;
};

/// The classes of a front door, in report order, and the class of pods whose `qos` names none.
struct QosClasses {
  std::vector<QosClass> classes;
  int fallback = 0;  ///< index into classes for an unknown or empty qos

  /// The index of the class named `qos`, or `fallback`.
  int Find(std::string_view qos) const;
  /// The class of a pod with label value `label` ("" when the pod has none) and priority
  /// `priority` (spec.priority): the class `label` names, if any; else the class with the
  /// highest priority ≤ `priority` (the first such in list order on a tie); else the class of
  /// the lowest priority. -1 only when there are no classes.
  int Classify(std::string_view label, int64_t priority) const;
};

/// The priority from which the headroom protects (HeadroomOptions::min_priority): the lowest
/// priority among the classes with use_headroom; INT_MAX when no class may use it. One rule
/// for serve, replay and plan.
int HeadroomProtectedPriority(const QosClasses& classes);

/// The defaults (docs/REPLAY.md): LS 1000 / SLO 1 s / not preemptible / uses headroom;
/// Guaranteed 900 / 10 s / not preemptible; Burstable 500 / 60 s / preemptible; BE 0 / no SLO /
/// preemptible (also the fallback). Grace period 30 s for all (Kubernetes' default).
QosClasses DefaultQosClasses();

}  // namespace tessera
