#pragma once

#include <string_view>

#include "sched/classes.h"
#include "util/result.h"

namespace tessera {

/// Parses the classes of a replay (`tessera replay --classes FILE`):
///   classes:
///     - {name: LS, priority: 1000, slo_wait_s: 1, preemptible: false, grace_s: 30}
///     - {name: BE, priority: 0}
///   fallback: BE          # the class of pods whose qos names none (default: the last one)
/// name and priority are required; slo_wait_s (seconds, absent = no SLO), preemptible
/// (default true) and grace_s (default 30) are optional. Errors read
/// "file:line: field 'classes[1].priority': what is wrong": unknown keys, wrong types,
/// duplicate names, absurd values (priority beyond ±1e9, negative or > 1e9 seconds).
Result<QosClasses> ParseQosClasses(std::string_view yaml, std::string_view file);

}  // namespace tessera
