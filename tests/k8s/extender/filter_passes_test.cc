// Bind's record of filter passes alone (src/k8s/extender/filter_passes.h): which nodes count
// as passed for a pod, for how long, across a model rebuild, and which pods the ring forgets.

#include "k8s/extender/filter_passes.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "k8s/api/json_util.h"

namespace tessera::k8s {
namespace {

/// The quoted names of a model (NodeNameIndex::QuotedNames' form).
std::shared_ptr<const PaddedStrings> Quoted(const std::vector<std::string>& names) {
  auto quoted = std::make_shared<PaddedStrings>();
  for (const std::string& name : names) {
    std::string q;
    AppendJsonString(&q, name);
    quoted->Add(q);
  }
  return quoted;
}

void Pass(std::vector<uint64_t>* bits, int node) {
  (*bits)[node >> 6] |= uint64_t{1} << (node & 63);
}

TEST(FilterPasses, OnlyTheNodesTheFilterPassed) {
  FilterPasses passes(600);
  std::vector<std::string> names;
  for (int i = 0; i < 130; ++i) names.push_back("n" + std::to_string(i));
  std::vector<uint64_t>* bits = passes.Begin("uid-1", 1000, 1, Quoted(names));
  ASSERT_NE(bits, nullptr);
  ASSERT_EQ(bits->size(), 3u);  // 130 nodes
  for (uint64_t w : *bits) EXPECT_EQ(w, 0u);
  Pass(bits, 0);
  Pass(bits, 64);
  Pass(bits, 129);
  EXPECT_TRUE(passes.Passed("uid-1", "n0", 0, 1, 1000));
  EXPECT_TRUE(passes.Passed("uid-1", "n64", 64, 1, 1000));
  EXPECT_TRUE(passes.Passed("uid-1", "n129", 129, 1, 1000));
  EXPECT_FALSE(passes.Passed("uid-1", "n1", 1, 1, 1000));
  EXPECT_FALSE(passes.Passed("uid-1", "n63", 63, 1, 1000));
  EXPECT_FALSE(passes.Passed("uid-1", "x", -1, 1, 1000));
  EXPECT_FALSE(passes.Passed("uid-1", "x", 500, 1, 1000));  // past the bitmap
  EXPECT_FALSE(passes.Passed("uid-2", "n0", 0, 1, 1000));   // no filter seen
}

TEST(FilterPasses, APassCountsForTheWindowAfterItsFilter) {
  FilterPasses passes(600);
  Pass(passes.Begin("uid", 1000, 1, Quoted({"a"})), 0);
  EXPECT_TRUE(passes.Passed("uid", "a", 0, 1, 1000));
  EXPECT_TRUE(passes.Passed("uid", "a", 0, 1, 1600));
  EXPECT_FALSE(passes.Passed("uid", "a", 0, 1, 1600.5));
  // A later filter starts a new window, with only what it passed.
  std::vector<uint64_t>* again = passes.Begin("uid", 1601, 1, Quoted({"a"}));
  EXPECT_EQ((*again)[0], 0u);
  EXPECT_FALSE(passes.Passed("uid", "a", 0, 1, 1601));
  Pass(again, 0);
  EXPECT_TRUE(passes.Passed("uid", "a", 0, 1, 2000));
}

TEST(FilterPasses, APassOnAnEarlierModelIsCheckedByName) {
  FilterPasses passes(600);
  Pass(passes.Begin("uid", 0, 1, Quoted({"a", "b", "c"})), 1);  // b passed
  // Model 2: c, b, d. b is node 1 there by chance; a and c moved or left.
  EXPECT_TRUE(passes.Passed("uid", "b", 1, 2, 10));
  EXPECT_FALSE(passes.Passed("uid", "c", 0, 2, 10));
  EXPECT_FALSE(passes.Passed("uid", "d", 2, 2, 10));
  // Model 3: b, a. b is node 0 now; a is node 1 (b's old index), which it did not pass.
  EXPECT_TRUE(passes.Passed("uid", "b", 0, 3, 10));
  EXPECT_FALSE(passes.Passed("uid", "a", 1, 3, 10));
}

TEST(FilterPasses, TheRingForgetsTheOldestPod) {
  FilterPasses passes(600, 2);
  Pass(passes.Begin("p1", 0, 1, Quoted({"a"})), 0);
  Pass(passes.Begin("p2", 0, 1, Quoted({"a"})), 0);
  Pass(passes.Begin("p1", 1, 1, Quoted({"a"})), 0);  // a retry keeps its slot
  EXPECT_TRUE(passes.Passed("p1", "a", 0, 1, 1));
  EXPECT_TRUE(passes.Passed("p2", "a", 0, 1, 1));
  Pass(passes.Begin("p3", 2, 1, Quoted({"a"})), 0);  // takes p1's slot, the oldest
  EXPECT_FALSE(passes.Passed("p1", "a", 0, 1, 2));
  EXPECT_TRUE(passes.Passed("p2", "a", 0, 1, 2));
  EXPECT_TRUE(passes.Passed("p3", "a", 0, 1, 2));
  Pass(passes.Begin("p4", 3, 1, Quoted({"a"})), 0);  // then p2's
  EXPECT_FALSE(passes.Passed("p2", "a", 0, 1, 3));
  EXPECT_TRUE(passes.Passed("p3", "a", 0, 1, 3));
  EXPECT_TRUE(passes.Passed("p4", "a", 0, 1, 3));
}

TEST(FilterPasses, AWindowOfZeroTurnsTheCheckOff) {
  FilterPasses passes(0);
  EXPECT_EQ(passes.Begin("uid", 0, 1, Quoted({"a"})), nullptr);
  EXPECT_TRUE(passes.Passed("uid", "a", 0, 1, 1e9));
  EXPECT_TRUE(passes.Passed("other", "z", -1, 7, 0));
}

}  // namespace
}  // namespace tessera::k8s
