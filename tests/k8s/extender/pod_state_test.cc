// The pod-state machine alone (src/k8s/extender/pod_state.h): the transitions of its diagram,
// and what a relist removes.

#include "k8s/extender/pod_state.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace tessera::k8s {
namespace {

PodRecord Pending(const std::string& name, uint64_t resource_version) {
  PodRecord r;
  r.key = "ml/" + name;
  r.spec.name = name;
  r.spec.gpu_count = 1;
  r.spec.gpu_milli = 1000;
  r.resource_version = resource_version;
  return r;
}

PodRecord BoundTo(const std::string& name, const std::string& node, uint64_t resource_version) {
  PodRecord r = Pending(name, resource_version);
  r.phase = PodPhase::kBound;
  r.node = node;
  return r;
}

TEST(PodStates, SeenAssumedBoundReleased) {
  PodStates pods;
  EXPECT_TRUE(pods.See("u1", Pending("a", 5)));
  EXPECT_FALSE(pods.Assume("nope", "n1", 1));
  ASSERT_TRUE(pods.Assume("u1", "n1", 0b10));
  EXPECT_EQ(pods.Find("u1")->phase, PodPhase::kAssumed);
  EXPECT_EQ(pods.OnNode("n1"), std::vector<std::string>{"u1"});
  // A pending object of the pod (older than the Binding) does not undo the assumption.
  EXPECT_FALSE(pods.See("u1", Pending("a", 5)));
  EXPECT_EQ(pods.Find("u1")->phase, PodPhase::kAssumed);
  pods.Observe("u1", BoundTo("a", "n1", 7));
  EXPECT_EQ(pods.Find("u1")->phase, PodPhase::kBound);
  EXPECT_EQ(pods.Find("u1")->assumed_gpus, GpuSet{0b10});  // its GPUs kept once confirmed
  EXPECT_EQ(pods.Remove("u1"), std::vector<std::string>{"n1"});
  EXPECT_EQ(pods.Find("u1"), nullptr);
  EXPECT_TRUE(pods.Removed("u1"));
  EXPECT_TRUE(pods.OnNode("n1").empty());
}

TEST(PodStates, AFailedBindingForgetsTheAssumption) {
  PodStates pods;
  pods.See("u1", Pending("a", 5));
  ASSERT_TRUE(pods.Assume("u1", "n1", 1));
  EXPECT_EQ(pods.Forget("u1"), "n1");
  EXPECT_EQ(pods.Find("u1")->phase, PodPhase::kSeen);
  EXPECT_TRUE(pods.OnNode("n1").empty());
}

TEST(PodStates, ARelistRemovesWhatItLacksOnlyWhenItCannotBeNewer) {
  PodStates pods;
  pods.See("old", Pending("old", 3));
  ASSERT_TRUE(pods.Assume("old", "n1", 1));
  pods.BeginList();
  // Assumed while the list was in flight: objects at version 5 (older than the list's 10) and
  // 12 (newer: created after the list was taken, the watch from 10 will bring it).
  pods.See("gone", Pending("gone", 5));
  ASSERT_TRUE(pods.Assume("gone", "n1", 2));
  pods.See("new", Pending("new", 12));
  ASSERT_TRUE(pods.Assume("new", "n2", 1));
  pods.See("listed", Pending("listed", 4));
  const std::vector<std::string> nodes = pods.EndList({"listed"}, 10);
  EXPECT_EQ(pods.Find("old"), nullptr);   // changed before the list began
  EXPECT_EQ(pods.Find("gone"), nullptr);  // existed at version 10 and is not listed: deleted
  ASSERT_NE(pods.Find("new"), nullptr);
  EXPECT_EQ(pods.Find("new")->phase, PodPhase::kAssumed);
  ASSERT_NE(pods.Find("listed"), nullptr);
  EXPECT_EQ(std::set<std::string>(nodes.begin(), nodes.end()), std::set<std::string>{"n1"});
  // Without a usable list version only the sequence decides.
  pods.BeginList();
  pods.See("later", Pending("later", 1));
  ASSERT_TRUE(pods.Assume("later", "n2", 2));
  pods.EndList({}, 0);
  EXPECT_NE(pods.Find("later"), nullptr);
  EXPECT_EQ(pods.Find("new"), nullptr);
}

}  // namespace
}  // namespace tessera::k8s
