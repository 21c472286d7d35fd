// A randomized property test of `tessera serve` against the fake API server: random sequences
// of creates, binds (by Tessera through filter + bind, and by other schedulers with and without
// GPU annotations), deletes, phase changes, dropped watches, 410s, held events and restarts.
// After every step no GPU is over-allocated in the API's objects; after every relist (and at
// the end) the model equals the model an extender builds fresh from the same objects.

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "k8s/fake_apiserver.h"
#include "k8s/live.h"
#include "util/rng.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;
using testing::ApiOverAllocation;
using testing::FakeApiServer;
using testing::Live;
using testing::NodeObject;
using testing::OverAllocation;
using testing::PodObject;
using testing::Shape;
using testing::WaitFor;

/// The model as /state shows it, without what may differ between two extenders that agree:
/// nodes (free GPU, CPU, memory, blocked) and assignments (pod, node, GPUs).
Json ModelOf(const Live& live) {
  const Json state = live.State();
  Json out = {{"nodes", state["nodes"]}, {"assignments", Json::array()}};
  for (const Json& a : state["assignments"]) {
    out["assignments"].push_back({a["uid"], a["node"], a["gpus"]});
  }
  return out;
}

class Property : public ::testing::TestWithParam<uint64_t> {};

// The cache's log lines of `live`, for a failure message.
std::string LogsOf(Live& live) {
  std::lock_guard<std::mutex> lock(live.log_mutex);
  std::string out;
  for (const std::string& l : live.logs) out += l + "\n";
  return out;
}

TEST_P(Property, NoGpuIsEverGivenTwiceAndRelistsRebuildTheFreshModel) {
  const uint64_t seed = GetParam();
  Rng rng(seed);
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  const std::vector<std::string> nodes = {"n1", "n2", "n3", "n4"};
  const std::map<std::string, int> gpus_of = {{"n1", 2}, {"n2", 4}, {"n3", 1}, {"n4", 2}};
  for (const auto& [name, gpus] : gpus_of)
    fake.AddNode(NodeObject(name, gpus, name == "n3" ? "4" : "32"));
  auto live = std::make_unique<Live>(fake);
  ASSERT_TRUE(live->Sync());
  bool held = false;
  int next_pod = 0;
  int tessera_binds = 0, other_binds = 0, relists = 0, restarts = 0;

  const auto pending = [&] {
    std::vector<Json> out;
    for (const Json& p : fake.Objects("pods")) {
      if (!p["spec"].contains("nodeName")) out.push_back(p);
    }
    return out;
  };
  const auto bound = [&] {
    std::vector<Json> out;
    for (const Json& p : fake.Objects("pods")) {
      if (p["spec"].contains("nodeName") && p["status"]["phase"] == "Running") out.push_back(p);
    }
    return out;
  };
  const auto pick = [&](const std::vector<Json>& v) -> const Json& {
    return v[rng.Below(v.size())];
  };
  // Another scheduler binds `pod` to `node`, with GPU indices or without, only where the API's
  // objects say it fits (it is not the one under test).
  const auto other_bind = [&](Json pod, const std::string& node, bool annotate) {
    const int count = std::stoi(
        pod["spec"]["containers"][0]["resources"]["limits"]["tessera.io/gpu"].get<std::string>());
    pod["spec"]["nodeName"] = node;
    pod["status"]["phase"] = "Running";
    const int gpus = gpus_of.at(node);
    std::vector<std::string> choices;
    if (!annotate && rng.Below(3) == 0) {
      // A request Tessera does not decode: counted as whole GPUs all the same.
      pod["spec"]["containers"][0]["resources"]["limits"]["tessera.io/gpu-memory"] = "7208.5";
    }
    if (annotate) {
      for (int first = 0; first + count <= gpus; ++first) {
        choices.push_back(count == 1
                              ? std::to_string(first)
                              : std::to_string(first) + "-" + std::to_string(first + count - 1));
      }
    } else {
      choices.push_back("");
    }
    for (const std::string& indices : choices) {
      Json candidate = pod;
      if (!indices.empty())
        candidate["metadata"]["annotations"]["tessera.io/gpu-indices"] = indices;
      std::vector<Json> pods;
      for (const Json& p : fake.Objects("pods")) {
        if (p["metadata"]["uid"] != pod["metadata"]["uid"]) pods.push_back(p);
      }
      pods.push_back(candidate);
      if (OverAllocation(fake.Objects("nodes"), pods).empty()) {
        fake.ModifyPod(candidate);
        return true;
      }
    }
    return false;
  };
  const auto quiesce_and_compare = [&](const std::string& when) {
    if (held) {
      fake.HoldWatches(false);
      held = false;
    }
    Live fresh(fake);
    ASSERT_TRUE(fresh.Sync()) << when << ": " << fresh.extender->not_ready_reason();
    Json want;
    ASSERT_TRUE(WaitFor([&] {
      want = ModelOf(fresh);
      return live->extender->ready() && live->extender->assumed_pods() == 0 &&
             ModelOf(*live) == want;
    })) << when
        << "\nlive ready: " << live->extender->ready() << " (" << live->extender->not_ready_reason()
        << "), assumed pods: " << live->extender->assumed_pods()
        << "\nlive:  " << ModelOf(*live).dump() << "\nfresh: " << want.dump() << "\n"
        << LogsOf(*live);
  };

  for (int step = 0; step < 400; ++step) {
    const uint64_t op = rng.Below(100);
    std::string what;
    if (op < 20) {  // a new pending pod: a share or 1-2 whole GPUs
      const int kind = static_cast<int>(rng.Below(3));
      const std::string name = "p" + std::to_string(next_pod++);
      fake.AddPod(PodObject(name, kind == 0 ? Shape(1, 500) : Shape(kind)));
      what = "create " + name;
    } else if (op < 46) {  // Tessera binds a pending pod to a node its filter passed
      const std::vector<Json> p = pending();
      if (p.empty()) continue;
      const Json& pod = pick(p);
      Json body = {{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", nodes}};
      const ExtenderFilterResult f = live->extender->Filter(*DecodeExtenderArgs(body.dump()));
      // Mostly a passed node; sometimes any node (a scheduler acting on a stale answer).
      std::string node = nodes[rng.Below(nodes.size())];
      if (!f.node_names.empty() && rng.Below(4) != 0) {
        node = f.node_names[rng.Below(f.node_names.size())];
      }
      const Json& m = pod["metadata"];
      tessera_binds +=
          live->extender
              ->Bind({m["name"].get<std::string>(), "ml", m["uid"].get<std::string>(), node})
              .error.empty();
      what = "tessera binds " + m["name"].get<std::string>() + " to " + node;
    } else if (op < 62) {  // another scheduler binds, with or without GPU indices
      const std::vector<Json> p = pending();
      if (p.empty()) continue;
      Json pod = pick(p);
      if (pod["spec"]["containers"][0]["resources"]["limits"]["tessera.io/gpu-milli"] != "1000") {
        continue;  // others share GPUs only through annotations they'd write: not modelled
      }
      const std::string node = nodes[rng.Below(nodes.size())];
      const bool annotate = rng.Below(2) == 0;
      other_binds += other_bind(pod, node, annotate);
      what = std::string("other binds ") + (annotate ? "with" : "without") + " indices";
    } else if (op < 78) {  // a bound pod is deleted
      const std::vector<Json> b = bound();
      if (b.empty()) continue;
      const Json& pod = pick(b);
      fake.DeletePod("ml", pod["metadata"]["name"]);
      what = "delete";
    } else if (op < 82) {  // a bound pod ends
      const std::vector<Json> b = bound();
      if (b.empty()) continue;
      Json pod = pick(b);
      pod["status"]["phase"] = rng.Below(2) == 0 ? "Succeeded" : "Failed";
      fake.ModifyPod(pod);
      what = "end";
    } else if (op < 87) {  // events held for a while, or let go
      held = !held;
      fake.HoldWatches(held);
      what = held ? "hold" : "release";
    } else if (op < 91) {
      fake.DropWatches();
      what = "drop watches";
    } else if (op < 96) {  // 410: the history is gone, the cache must relist
      // Events the cache has not seen, then compacted away: its next watch gets 410.
      const int lists = live->cache->stats("pods").lists;
      fake.HoldWatches(true);
      fake.AddPod(PodObject("p" + std::to_string(next_pod++), Shape(1)));
      fake.Compact();
      fake.DropWatches();
      fake.HoldWatches(false);
      held = false;
      ASSERT_TRUE(WaitFor([&] { return live->cache->stats("pods").lists > lists; })) << step;
      ++relists;
      quiesce_and_compare("after relist at step " + std::to_string(step));
      what = "410";
    } else {  // restart
      live.reset();
      live = std::make_unique<Live>(fake);
      ASSERT_TRUE(live->Sync()) << live->extender->not_ready_reason() << "\n" << LogsOf(*live);
      ++restarts;
      what = "restart";
    }
    const std::string over = ApiOverAllocation(fake);
    ASSERT_EQ(over, "") << "seed " << seed << ", step " << step << " (" << what << ")";
  }
  quiesce_and_compare("at the end");
  // The sequence did what it is for.
  EXPECT_GE(tessera_binds, 5);
  EXPECT_GT(other_binds + relists + restarts, 0);
  RecordProperty("tessera_binds", tessera_binds);
  RecordProperty("other_binds", other_binds);
}

INSTANTIATE_TEST_SUITE_P(Seeds, Property, ::testing::Range<uint64_t>(1, 13));

}  // namespace
}  // namespace tessera::k8s
