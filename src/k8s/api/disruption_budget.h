#pragma once

// PodDisruptionBudgets (policy/v1) as the preemption victim search reads them: which pods a
// budget covers and how many more of them may be disrupted. Decoding is boundary code for
// untrusted JSON: errors name the JSON path and nothing throws. Pure and thread-safe.

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace tessera::k8s {

/// A metav1.LabelSelector: matchLabels AND every matchExpressions requirement.
struct LabelSelector {
  enum class Operator : uint8_t { kIn, kNotIn, kExists, kDoesNotExist };
  struct Requirement {
    std::string key;
    Operator op = Operator::kIn;
    std::vector<std::string> values;  ///< In/NotIn: non-empty; Exists/DoesNotExist: empty

    bool operator==(const Requirement&) const = default;
  };
  std::map<std::string, std::string> match_labels;
  std::vector<Requirement> match_expressions;

  /// No matchLabels and no matchExpressions.
  bool Empty() const { return match_labels.empty() && match_expressions.empty(); }
  /// Whether `labels` satisfy every term (In: key present with one of the values; NotIn: key
  /// absent or its value not listed; Exists; DoesNotExist). An empty selector matches all.
  bool Matches(const std::map<std::string, std::string>& labels) const;

  bool operator==(const LabelSelector&) const = default;
};

/// A PodDisruptionBudget, the fields preemption uses.
struct PodDisruptionBudget {
  std::string namespace_name;
  std::string name;
  /// spec.selector; absent (null) and empty both cover no pod, as kube-scheduler reads them.
  LabelSelector selector;
  /// status.disruptionsAllowed: how many covered pods may still be evicted (0 when absent).
  int32_t disruptions_allowed = 0;
  /// Names of status.disruptedPods: evictions the API server already counted; evicting one of
  /// these again is not a new disruption.
  std::set<std::string> disrupted_pods;

  /// Whether evicting the pod (namespace, name, labels) takes from this budget: same
  /// namespace, non-empty selector matching the labels, and the pod not already disrupted.
  bool Covers(std::string_view pod_namespace, std::string_view pod_name,
              const std::map<std::string, std::string>& labels) const;
};

/// Decodes a policy/v1 PodDisruptionBudget object; errors name `path`
/// ("pdbs: items[1].spec.selector.matchExpressions[0].operator: unknown operator \"Has\"").
/// Unknown fields are ignored; a selector with an unknown operator, In/NotIn without values or
/// Exists/DoesNotExist with values is an error (the API server rejects those too).
Result<PodDisruptionBudget> DecodePodDisruptionBudget(const nlohmann::json& j,
                                                      std::string_view path);
/// Parses `kubectl get pdb -A -o json` (a v1 List; a bare array or one object work too).
/// Errors start with "pdbs".
Result<std::vector<PodDisruptionBudget>> ParsePodDisruptionBudgets(std::string_view text);

/// The API collections of PodDisruptionBudgets, newest version first: policy/v1, then
/// policy/v1beta1 (API servers before 1.21). A reader that gets 404 from one asks the next.
const std::vector<std::string>& DisruptionBudgetPaths();

/// Budgets only narrow a choice (serve's preemption victims, analyze's move plan), so a reader
/// goes on without them when it may not read them. Given a failed list of budgets (after the
/// 404 fallback of DisruptionBudgetPaths), the warning that says why it goes on without them:
/// HTTP 401/403 (the account may not list them; `error` is the failed call as KubeApi
/// reports it, with the URL, the status and the API's message) or 404 (no version served). "" for
/// any other failure, which fails the read as a whole.
std::string BudgetsUnavailable(int http_status, std::string_view error);

}  // namespace tessera::k8s
