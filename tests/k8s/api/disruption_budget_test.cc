#include "k8s/api/disruption_budget.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tessera::k8s {
namespace {

// As `kubectl get pdb -A -o json` prints it (policy/v1).
constexpr const char* kPdbList = R"({
  "apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
  "items": [
    {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
     "metadata": {"name": "train", "namespace": "ml", "uid": "3c1d"},
     "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "train"}}},
     "status": {"currentHealthy": 3, "desiredHealthy": 2, "disruptionsAllowed": 1,
                "expectedPods": 3, "observedGeneration": 1,
                "disruptedPods": {"train-0": "2026-11-29T17:00:00Z"}}},
    {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
     "metadata": {"name": "web", "namespace": "ml"},
     "spec": {"maxUnavailable": 0, "selector": {"matchExpressions": [
       {"key": "tier", "operator": "In", "values": ["web", "api"]},
       {"key": "canary", "operator": "DoesNotExist"}]}},
     "status": {"disruptionsAllowed": 0}},
    {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
     "metadata": {"name": "empty", "namespace": "ml"},
     "spec": {"selector": {}}, "status": {"disruptionsAllowed": 0}}
  ]})";

TEST(PodDisruptionBudget, DecodesKubectlList) {
  Result<std::vector<PodDisruptionBudget>> pdbs = ParsePodDisruptionBudgets(kPdbList);
  ASSERT_TRUE(pdbs.ok()) << pdbs.error().message;
  ASSERT_EQ(pdbs->size(), 3u);
  const PodDisruptionBudget& train = (*pdbs)[0];
  EXPECT_EQ(train.name, "train");
  EXPECT_EQ(train.namespace_name, "ml");
  EXPECT_EQ(train.disruptions_allowed, 1);
  EXPECT_EQ(train.selector.match_labels.at("app"), "train");
  EXPECT_EQ(train.disrupted_pods.count("train-0"), 1u);
  EXPECT_TRUE(train.Covers("ml", "train-1", {{"app", "train"}, {"x", "y"}}));
  EXPECT_FALSE(train.Covers("ml", "train-0", {{"app", "train"}}));   // already disrupted
  EXPECT_FALSE(train.Covers("web", "train-1", {{"app", "train"}}));  // other namespace
  EXPECT_FALSE(train.Covers("ml", "train-1", {{"app", "infer"}}));
  EXPECT_FALSE(train.Covers("ml", "train-1", {}));

  const PodDisruptionBudget& web = (*pdbs)[1];
  ASSERT_EQ(web.selector.match_expressions.size(), 2u);
  EXPECT_TRUE(web.Covers("ml", "w", {{"tier", "api"}}));
  EXPECT_FALSE(web.Covers("ml", "w", {{"tier", "api"}, {"canary", "1"}}));
  EXPECT_FALSE(web.Covers("ml", "w", {{"tier", "db"}}));

  // An empty selector covers nothing (kube-scheduler's reading), though it matches all.
  const PodDisruptionBudget& empty = (*pdbs)[2];
  EXPECT_TRUE(empty.selector.Empty());
  EXPECT_TRUE(empty.selector.Matches({{"a", "b"}}));
  EXPECT_FALSE(empty.Covers("ml", "p", {{"a", "b"}}));
}

TEST(PodDisruptionBudget, SelectorOperators) {
  LabelSelector s;
  s.match_expressions = {{"a", LabelSelector::Operator::kNotIn, {"1", "2"}},
                         {"b", LabelSelector::Operator::kExists, {}}};
  EXPECT_TRUE(s.Matches({{"b", ""}}));
  EXPECT_TRUE(s.Matches({{"a", "3"}, {"b", "x"}}));
  EXPECT_FALSE(s.Matches({{"a", "1"}, {"b", "x"}}));
  EXPECT_FALSE(s.Matches({{"a", "3"}}));
}

TEST(PodDisruptionBudget, BadInputNamesThePath) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"items": [{"spec": {"selector": {"matchExpressions": [{"key": "a", "operator": "Has"}]}}}]})",
       "pdbs: items[0].spec.selector.matchExpressions[0].operator: unknown operator \"Has\""},
      {R"({"items": [{}, {"spec": {"selector": {"matchExpressions": [{"key": "a", "operator": "In"}]}}}]})",
       "pdbs: items[1].spec.selector.matchExpressions[0].values: must be non-empty for In"},
      {R"({"items": [{"spec": {"selector": {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}}}]})",
       "values: must be empty for Exists"},
      {R"({"items": [{"status": {"disruptionsAllowed": -1}}]})",
       "pdbs: items[0].status.disruptionsAllowed"},
      {R"({"items": [{"status": {"disruptionsAllowed": "1"}}]})",
       "pdbs: items[0].status.disruptionsAllowed: expected"},
      {R"({"items": [{"spec": {"selector": {"matchLabels": {"a": 1}}}}]})",
       "pdbs: items[0].spec.selector.matchLabels"},
      {R"({"items": 7})", "pdbs: items: expected array"},
      {R"({"items": [)", "pdbs: malformed JSON"},
      {R"(7)", "pdbs: expected object or array"},
  };
  for (const auto& [text, want] : cases) {
    Result<std::vector<PodDisruptionBudget>> r = ParsePodDisruptionBudgets(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.error().message.find(want), std::string::npos)
        << text << "\n  got: " << r.error().message << "\n want: " << want;
  }
}

TEST(PodDisruptionBudget, SingleObjectAndNullItems) {
  Result<std::vector<PodDisruptionBudget>> one = ParsePodDisruptionBudgets(
      R"({"kind": "PodDisruptionBudget", "metadata": {"name": "a", "namespace": "n"}})");
  ASSERT_TRUE(one.ok()) << one.error().message;
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].disruptions_allowed, 0);
  Result<std::vector<PodDisruptionBudget>> none = ParsePodDisruptionBudgets(R"({"items": null})");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace tessera::k8s
