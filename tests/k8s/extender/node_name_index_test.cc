// The candidate-name index alone (src/k8s/extender/node_name_index.h): indices by name, the
// guessed-successor fast path against plain lookups, the memo of lists by id, and the JSON
// pieces of the answers.

#include "k8s/extender/node_name_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::k8s {
namespace {

std::vector<std::string> Names(int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back("node-" + std::to_string(i));
  return names;
}

std::vector<int> Resolved(NodeNameIndex& index, const std::vector<std::string_view>& names,
                          uint64_t names_id) {
  const std::span<const int> nodes = index.Resolve(names, names_id);
  return {nodes.begin(), nodes.end()};
}

TEST(NodeNameIndex, FindsEachNameAtItsModelPosition) {
  NodeNameIndex index;
  EXPECT_EQ(index.size(), 0);
  EXPECT_EQ(index.Find("a"), -1);
  index.Rebuild({"c", "a", "b"});
  EXPECT_EQ(index.size(), 3);
  EXPECT_EQ(index.Find("c"), 0);
  EXPECT_EQ(index.Find("a"), 1);
  EXPECT_EQ(index.Find("b"), 2);
  EXPECT_EQ(index.Find("d"), -1);
  EXPECT_EQ(index.Find(""), -1);
  EXPECT_EQ(index.name(1), "a");
  std::vector<std::string> seen;
  index.ForEachName([&](const std::string& name) { seen.push_back(name); });
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(NodeNameIndex, ResolvesAsFindDoesWhateverTheOrderOfTheLists) {
  // kube-scheduler's lists (the same order from rotating starts, some nodes left out), then
  // shuffled lists with unknown and repeated names: the guesses must never change an answer.
  const std::vector<std::string> model = Names(50);
  NodeNameIndex index;
  index.Rebuild(model);
  std::mt19937 rng(7);
  std::vector<std::string> unknown = {"gone-1", "gone-2", ""};
  for (int round = 0; round < 200; ++round) {
    std::vector<std::string_view> names;
    const size_t start = rng() % model.size();
    for (size_t k = 0; k < model.size(); ++k) {
      const size_t i = (start + k) % model.size();
      if (round >= 100 || rng() % 4 != 0) names.push_back(model[i]);
      if (rng() % 10 == 0) names.push_back(unknown[rng() % unknown.size()]);
    }
    if (round >= 100) std::shuffle(names.begin(), names.end(), rng);
    if (round % 3 == 0 && !names.empty()) names.push_back(names.front());
    const std::vector<int> nodes = Resolved(index, names, 0);
    ASSERT_EQ(nodes.size(), names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      ASSERT_EQ(nodes[i], index.Find(names[i])) << "round " << round << " candidate " << i;
    }
  }
}

TEST(NodeNameIndex, RebuildForgetsTheOldModelsGuesses) {
  NodeNameIndex index;
  index.Rebuild({"a", "b", "c"});
  const std::vector<std::string_view> list = {"a", "b", "c"};
  EXPECT_EQ(Resolved(index, list, 0), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(Resolved(index, list, 0), (std::vector<int>{0, 1, 2}));
  index.Rebuild({"c", "b"});  // a left, the others moved
  EXPECT_EQ(Resolved(index, list, 0), (std::vector<int>{-1, 1, 0}));
  index.Rebuild({});
  EXPECT_EQ(Resolved(index, list, 0), (std::vector<int>{-1, -1, -1}));
}

TEST(NodeNameIndex, AListWithAnIdIsResolvedOncePerModel) {
  NodeNameIndex index;
  index.Rebuild({"a", "b", "c"});
  const std::vector<std::string_view> first = {"c", "a"};
  const std::vector<std::string_view> other = {"b"};
  EXPECT_EQ(Resolved(index, first, 9), (std::vector<int>{2, 0}));
  // The same id is the same list: its names are not looked at again.
  EXPECT_EQ(Resolved(index, other, 9), (std::vector<int>{2, 0}));
  // Another id, or none, is resolved.
  EXPECT_EQ(Resolved(index, other, 10), (std::vector<int>{1}));
  EXPECT_EQ(Resolved(index, other, 0), (std::vector<int>{1}));
  EXPECT_EQ(Resolved(index, first, 9), (std::vector<int>{2, 0}));
  // A new model forgets every list: the indices are that model's.
  index.Rebuild({"a", "c"});
  EXPECT_EQ(Resolved(index, first, 9), (std::vector<int>{1, 0}));
}

TEST(NodeNameIndex, TheOldestListIsForgottenFirst) {
  NodeNameIndex index;
  index.Rebuild({"a", "b"});
  const std::vector<std::string_view> a = {"a"};
  const std::vector<std::string_view> b = {"b"};
  for (uint64_t id = 1; id <= NodeNameIndex::kResolvedLists; ++id) {
    EXPECT_EQ(Resolved(index, a, id), (std::vector<int>{0}));
  }
  // All remembered: a different list under a known id gets the memo.
  EXPECT_EQ(Resolved(index, b, 1), (std::vector<int>{0}));
  // One more id takes id 1's slot; id 2 is still remembered.
  EXPECT_EQ(Resolved(index, b, NodeNameIndex::kResolvedLists + 1), (std::vector<int>{1}));
  EXPECT_EQ(Resolved(index, b, 1), (std::vector<int>{1}));
  EXPECT_EQ(Resolved(index, b, 3), (std::vector<int>{0}));
}

TEST(NodeNameIndex, QuotedNamesAndHostEntriesAreTheAnswersPieces) {
  NodeNameIndex index;
  index.Rebuild({"gpu-0", "odd\"name\\"});
  const std::shared_ptr<const PaddedStrings> quoted = index.QuotedNames();
  ASSERT_EQ(quoted->size(), 2u);
  EXPECT_EQ((*quoted)[0], "\"gpu-0\"");
  EXPECT_EQ((*quoted)[1], "\"odd\\\"name\\\\\"");
  const std::shared_ptr<const PaddedStrings> hosts = index.HostEntries();
  ASSERT_EQ(hosts->size(), 2u);
  EXPECT_EQ((*hosts)[0], "{\"Host\":\"gpu-0\",\"Score\":");
  EXPECT_EQ((*hosts)[1], "{\"Host\":\"odd\\\"name\\\\\",\"Score\":");
  // Built once per model and shared; a Rebuild makes new ones and leaves the old ones whole.
  EXPECT_EQ(index.QuotedNames(), quoted);
  EXPECT_EQ(index.HostEntries(), hosts);
  index.Rebuild({"gpu-1"});
  const std::shared_ptr<const PaddedStrings> fresh = index.QuotedNames();
  EXPECT_NE(fresh, quoted);
  ASSERT_EQ(fresh->size(), 1u);
  EXPECT_EQ((*fresh)[0], "\"gpu-1\"");
  EXPECT_EQ((*index.HostEntries())[0], "{\"Host\":\"gpu-1\",\"Score\":");
  EXPECT_EQ((*quoted)[0], "\"gpu-0\"");
  EXPECT_EQ((*hosts)[1], "{\"Host\":\"odd\\\"name\\\\\",\"Score\":");
}

}  // namespace
}  // namespace tessera::k8s
