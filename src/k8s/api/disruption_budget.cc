#include "k8s/api/disruption_budget.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "k8s/api/json_util.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;

/// A PDB list file may be far larger than one request body.
constexpr size_t kMaxPdbListBytes = size_t{256} << 20;

Result<LabelSelector::Operator> ParseOperator(std::string_view op, std::string_view path) {
  if (op == "In") return LabelSelector::Operator::kIn;
  if (op == "NotIn") return LabelSelector::Operator::kNotIn;
  if (op == "Exists") return LabelSelector::Operator::kExists;
  if (op == "DoesNotExist") return LabelSelector::Operator::kDoesNotExist;
  return Error{std::string(path) + ": unknown operator " + QuoteForError(op) +
               " (In, NotIn, Exists or DoesNotExist)"};
}

Result<LabelSelector::Requirement> DecodeRequirement(const Json& j, const std::string& path) {
  if (!j.is_object()) return TypeError(path, "LabelSelectorRequirement object", j);
  LabelSelector::Requirement r;
  TESSERA_RETURN_IF_ERROR(ReadString(FindField(j, "key"), PathKey(path, "key"), &r.key));
  if (r.key.empty()) return Error{PathKey(path, "key") + ": missing"};
  std::string op;
  TESSERA_RETURN_IF_ERROR(ReadString(FindField(j, "operator"), PathKey(path, "operator"), &op));
  TESSERA_ASSIGN_OR_RETURN(r.op, ParseOperator(op, PathKey(path, "operator")));
  const Json* values = nullptr;
  TESSERA_ASSIGN_OR_RETURN(values, ArrayField(j, "values", path));
  const std::string vpath = PathKey(path, "values");
  if (values != nullptr) {
    for (size_t i = 0; i < values->size(); ++i) {
      std::string v;
      TESSERA_RETURN_IF_ERROR(ReadString(&(*values)[i], PathIndex(vpath, i), &v));
      r.values.push_back(std::move(v));
    }
  }
  const bool set_op =
      r.op == LabelSelector::Operator::kIn || r.op == LabelSelector::Operator::kNotIn;
  if (set_op && r.values.empty()) return Error{vpath + ": must be non-empty for " + op};
  if (!set_op && !r.values.empty()) return Error{vpath + ": must be empty for " + op};
  return r;
}

Result<LabelSelector> DecodeSelector(const Json& j, const std::string& path) {
  LabelSelector s;
  TESSERA_RETURN_IF_ERROR(
      ReadStringMap(FindField(j, "matchLabels"), PathKey(path, "matchLabels"), &s.match_labels));
  const Json* exprs = nullptr;
  TESSERA_ASSIGN_OR_RETURN(exprs, ArrayField(j, "matchExpressions", path));
  if (exprs != nullptr) {
    const std::string epath = PathKey(path, "matchExpressions");
    for (size_t i = 0; i < exprs->size(); ++i) {
      LabelSelector::Requirement r;
      TESSERA_ASSIGN_OR_RETURN(r, DecodeRequirement((*exprs)[i], PathIndex(epath, i)));
      s.match_expressions.push_back(std::move(r));
    }
  }
  return s;
}

}  // namespace

bool LabelSelector::Matches(const std::map<std::string, std::string>& labels) const {
  for (const auto& [key, value] : match_labels) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  for (const Requirement& r : match_expressions) {
    auto it = labels.find(r.key);
    const bool present = it != labels.end();
    const bool listed =
        present && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end();
    switch (r.op) {
      case Operator::kIn:
        if (!listed) return false;
        break;
      case Operator::kNotIn:
        if (listed) return false;
        break;
      case Operator::kExists:
        if (!present) return false;
        break;
      case Operator::kDoesNotExist:
        if (present) return false;
        break;
    }
  }
  return true;
}

bool PodDisruptionBudget::Covers(std::string_view pod_namespace, std::string_view pod_name,
                                 const std::map<std::string, std::string>& labels) const {
  if (pod_namespace != namespace_name || selector.Empty() || labels.empty()) return false;
  if (disrupted_pods.count(std::string(pod_name)) != 0) return false;
  return selector.Matches(labels);
}

Result<PodDisruptionBudget> DecodePodDisruptionBudget(const Json& j, std::string_view path_view) {
  const std::string path(path_view);
  if (!j.is_object()) return TypeError(path, "PodDisruptionBudget object", j);
  PodDisruptionBudget pdb;
  const Json* meta = nullptr;
  TESSERA_ASSIGN_OR_RETURN(meta, ObjectField(j, "metadata", path));
  if (meta != nullptr) {
    const std::string mpath = PathKey(path, "metadata");
    TESSERA_RETURN_IF_ERROR(
        ReadString(FindField(*meta, "name"), PathKey(mpath, "name"), &pdb.name));
    TESSERA_RETURN_IF_ERROR(ReadString(FindField(*meta, "namespace"), PathKey(mpath, "namespace"),
                                       &pdb.namespace_name));
  }
  const Json* spec = nullptr;
  TESSERA_ASSIGN_OR_RETURN(spec, ObjectField(j, "spec", path));
  if (spec != nullptr) {
    const std::string spath = PathKey(path, "spec");
    const Json* selector = nullptr;
    TESSERA_ASSIGN_OR_RETURN(selector, ObjectField(*spec, "selector", spath));
    if (selector != nullptr) {
      TESSERA_ASSIGN_OR_RETURN(pdb.selector, DecodeSelector(*selector, PathKey(spath, "selector")));
    }
  }
  const Json* status = nullptr;
  TESSERA_ASSIGN_OR_RETURN(status, ObjectField(j, "status", path));
  if (status != nullptr) {
    const std::string stpath = PathKey(path, "status");
    int64_t allowed = 0;
    TESSERA_RETURN_IF_ERROR(ReadInt64(FindField(*status, "disruptionsAllowed"),
                                      PathKey(stpath, "disruptionsAllowed"), 0,
                                      std::numeric_limits<int32_t>::max(), &allowed));
    pdb.disruptions_allowed = static_cast<int32_t>(allowed);
    const Json* disrupted = nullptr;
    TESSERA_ASSIGN_OR_RETURN(disrupted, ObjectField(*status, "disruptedPods", stpath));
    if (disrupted != nullptr) {
      for (auto it = disrupted->begin(); it != disrupted->end(); ++it) {
        pdb.disrupted_pods.insert(it.key());
      }
    }
  }
  return pdb;
}

Result<std::vector<PodDisruptionBudget>> ParsePodDisruptionBudgets(std::string_view text) {
  Json doc;
  TESSERA_ASSIGN_OR_RETURN(doc, ParseJson(text, kMaxPdbListBytes, "pdbs"));
  std::vector<PodDisruptionBudget> out;
  const Json* items = &doc;
  std::string items_path;
  if (doc.is_object()) {
    const Json* list = FindField(doc, "items");
    if (list == nullptr) {  // a single object
      PodDisruptionBudget pdb;
      TESSERA_ASSIGN_OR_RETURN(pdb, DecodePodDisruptionBudget(doc, "pdbs"));
      out.push_back(std::move(pdb));
      return out;
    }
    if (list->is_null()) return out;
    if (!list->is_array()) return TypeError("pdbs: items", "array", *list);
    items = list;
    items_path = "items";
  } else if (!doc.is_array()) {
    return TypeError("pdbs", "object or array", doc);
  }
  for (size_t i = 0; i < items->size(); ++i) {
    PodDisruptionBudget pdb;
    TESSERA_ASSIGN_OR_RETURN(
        pdb, DecodePodDisruptionBudget((*items)[i], "pdbs: " + PathIndex(items_path, i)));
    out.push_back(std::move(pdb));
  }
  return out;
}

const std::vector<std::string>& DisruptionBudgetPaths() {
  static const std::vector<std::string> paths = {"/apis/policy/v1/poddisruptionbudgets",
                                                 "/apis/policy/v1beta1/poddisruptionbudgets"};
  return paths;
}

std::string BudgetsUnavailable(int http_status, std::string_view error) {
  if (http_status == 401 || http_status == 403) {
    return "PodDisruptionBudgets not read: the API server refused to list them (" +
           (error.empty() ? "HTTP " + std::to_string(http_status) : std::string(error)) +
           "); going on without budgets, so none is respected (grant get, list and watch on "
           "poddisruptionbudgets in API group policy to respect them)";
  }
  if (http_status == 404) {
    return "PodDisruptionBudgets not read: the API server serves neither policy/v1 nor "
           "policy/v1beta1; going on without budgets";
  }
  return "";
}

}  // namespace tessera::k8s
