#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tessera {

/// A class of service in the replay: pods whose `qos` field names it (LS, BE, ...).
struct QosClass {
  std::string name;         ///< matches PodSpec::qos exactly
  int priority = 0;         ///< higher is more important; preemption takes only lower ones
  double slo_wait_s = -1;   ///< the wait a pod of this class may see (seconds); < 0 = none
  bool preemptible = true;  ///< may be a preemption victim
  double grace_s = 30;      ///< termination grace period as a victim (seconds)
};

/// The classes of a replay, in report order, and the class of pods whose `qos` names none.
struct QosClasses {
  std::vector<QosClass> classes;
  int fallback = 0;  ///< index into classes for an unknown or empty qos

  /// The index of the class named `qos`, or `fallback`.
  int Find(std::string_view qos) const;
};

/// The defaults (docs/REPLAY.md): LS 1000 / SLO 1 s / not preemptible; Guaranteed 900 /
/// 10 s / not preemptible; Burstable 500 / 60 s / preemptible; BE 0 / no SLO / preemptible
/// (also the fallback). Grace period 30 s for all (Kubernetes' default).
QosClasses DefaultQosClasses();

}  // namespace tessera
