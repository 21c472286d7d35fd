// Replay: the extender in API mode, driven over real HTTP the way
// kube-scheduler drives it (filter → prioritize → bind; deletes reach it through the watch),
// places a seeded pod sequence exactly as the in-process engine (Cluster + MakePolicy +
// Scheduler) does for the same policy, nodes and order: same node and same GPU indices for
// every pod, and the same final allocation.
//
// Why the two must agree:
// - Nodes: the extender keeps API-mode nodes in name order, which is its node order 0..n-1;
//   its tie order is TieOrder(seed) over them. The engine here gets the same nodes in the
//   same (name) order and the same tie order.
// - Target workload M (fgd, tessera): the extender builds M when the model is (re)built, i.e.
//   at the end of the initial sync and on node changes only. The fake starts with nodes and no
//   bound pods and no node changes during the replay, so M is the single whole-GPU class for
//   the whole run; the engine gets that same M.
// - Scores: Scheduler::Decide takes the best integer score (0..100) over every feasible node,
//   ties to the first node in the tie order. The extender's prioritize gets the nodes that
//   passed its filter (here every feasible node), computes the same integer scores with
//   Scheduler::ScoreNodes and gives 10 to exactly one candidate, the best score first in its
//   tie order, and at most 5 to every other. So the candidate scored 10 is Decide's node.
//   kMinMax policies (bestfit) normalise over the candidates rather than over the cluster;
//   that is the same set here. It stays the same in a cluster only while kube-scheduler
//   passes every feasible node (percentageOfNodesToScore: 100, as deploy/ sets; below 100 it
//   stops filtering after enough feasible nodes) and its own filters (taints, affinity) reject
//   nothing the engine accepts: the claim is "same candidates, same placements", not more.
// - GPUs: bind chooses the GPUs with the policy's Score on the chosen node (else the generic
//   choice), which is what Decide caches for that node's state.
// kube-scheduler adds its own score plugins to the extender's (score x weight x 10) and breaks
// ties among equal totals at random; the gap of 5 between the extender's 10 and every other
// candidate outweighs its resource plugins (docs/EXTENDER.md), which tests/cluster/ shows with
// a real kube-scheduler. Here kube-scheduler is played with the extender's score alone.
//
// The same reasoning holds for packing, clustering, dotprod and k8s-default (they pass when
// added to the list below; left out to keep the test near 1 s per policy), not for `random`:
// the engine draws a node, while the extender's prioritize scores every feasible node 10.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "frag/target_workload.h"
#include "k8s/extender/extender.h"
#include "k8s/extender/extender_protocol.h"
#include "k8s/fake_apiserver.h"
#include "k8s/kube_scheduler.h"
#include "k8s/live.h"
#include "model/cluster.h"
#include "policy/policy.h"
#include "sched/engine.h"
#include "sched/scheduler.h"
#include "util/rng.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;
using testing::FakeApiServer;
using testing::KubeScheduler;
using testing::NodeObjectOf;
using testing::PodObjectOf;
using testing::Serve;
using testing::WaitFor;

constexpr uint64_t kSeed = 20261129;
constexpr int kPods = 360;
constexpr int kDeleteEvery = 3;  // before every 3rd pod, one bound pod is deleted

// ---- The cluster: 48 nodes of mixed GPU models, counts and CPU, in a seeded name order. ----

struct NodeKind {
  std::string model;  // "" = no GPUs
  int gpus;
  int64_t gpu_memory_mib;
  int cpu;  // cores
  int memory_gib;
  int count;
};

std::vector<NodeSpec> MakeNodes() {
  const std::vector<NodeKind> kinds = {{"V100M32", 8, 32768, 96, 384, 10},
                                       {"V100M16", 8, 16384, 96, 384, 8},
                                       {"T4", 2, 15360, 64, 256, 8},
                                       {"P100", 2, 16384, 64, 256, 6},
                                       {"A10", 1, 24576, 32, 128, 8},
                                       {"A10", 4, 24576, 48, 192, 4},
                                       {"", 0, 0, 96, 512, 4}};
  std::vector<NodeSpec> nodes;
  for (const NodeKind& k : kinds) {
    for (int i = 0; i < k.count; ++i) {
      NodeSpec s;
      s.cpu_milli = int64_t{k.cpu} * 1000;
      s.memory_mib = int64_t{k.memory_gib} * 1024;
      s.gpu_count = k.gpus;
      s.gpu_model = k.model;
      s.gpu_memory_mib = k.gpu_memory_mib;
      nodes.push_back(s);
    }
  }
  Rng rng(kSeed);
  rng.Shuffle(nodes);  // models interleaved in name order
  for (size_t i = 0; i < nodes.size(); ++i) {
    nodes[i].name = (i < 10 ? "node-0" : "node-") + std::to_string(i);
  }
  return nodes;
}

// ---- The pods: realistic shapes, seeded. ----

PodSpec MakePod(Rng& rng, int i) {
  PodSpec p;
  p.name = "ml/p-" + std::to_string(i);
  const uint64_t r = rng.Below(100);
  if (r < 8) {  // CPU only
    p.cpu_milli = 500 * static_cast<int64_t>(1 + rng.Below(24));
    p.memory_mib = 1024 * static_cast<int64_t>(1 + rng.Below(32));
    return p;
  }
  if (r < 45) {  // sharing one GPU
    static const int32_t kMilli[] = {250, 500, 810, 100, 300, 600};
    p.gpu_count = 1;
    p.gpu_milli = kMilli[rng.Below(6)];
    p.cpu_milli = 1000 * static_cast<int64_t>(1 + rng.Below(8));
    p.memory_mib = 512 * static_cast<int64_t>(1 + rng.Below(32));
  } else {  // whole GPUs
    static const int kGpus[] = {1, 1, 1, 1, 1, 2, 2, 2, 4, 4, 8};
    p.gpu_count = kGpus[rng.Below(11)];
    p.gpu_milli = 1000;
    p.cpu_milli = int64_t{p.gpu_count} * 1000 * static_cast<int64_t>(2 + rng.Below(11));
    p.memory_mib = int64_t{p.gpu_count} * 4096 * static_cast<int64_t>(1 + rng.Below(8));
  }
  if (rng.Below(100) < 20) {
    static const char* kModels[] = {"V100M32", "V100M16|V100M32", "T4", "A10", "P100|T4"};
    p.gpu_spec = kModels[rng.Below(5)];
  }
  if (rng.Below(100) < 15) {
    static const int64_t kMemory[] = {8192, 12000, 20000};
    p.gpu_memory_mib = kMemory[rng.Below(3)];
  }
  return p;
}

Json GpuList(GpuSet gpus) {
  Json list = Json::array();
  for (int g = 0; g < kMaxGpusPerNode; ++g) {
    if (gpus & (GpuSet{1} << g)) list.push_back(g);
  }
  return list;
}

struct Placed {
  std::string uid;
  std::string name;  // in the fake: "p-<i>"
  int node;
  PodRequest request;
  GpuSet gpus;
};

class ExtenderReplay : public ::testing::TestWithParam<std::string> {};

TEST_P(ExtenderReplay, SamePlacementsAsTheInProcessEngine) {
  const std::string policy_name = GetParam();
  const std::vector<NodeSpec> nodes = MakeNodes();
  std::vector<std::string> node_names;
  for (const NodeSpec& s : nodes) node_names.push_back(s.name);
  ASSERT_TRUE(std::is_sorted(node_names.begin(), node_names.end()));

  // The API server, and the extender in API mode with its cache and its HTTP server.
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  for (const NodeSpec& s : nodes) fake.AddNode(NodeObjectOf(s));
  Serve serve(fake, policy_name, kSeed);
  ASSERT_TRUE(serve.ready);
  KubeScheduler* kube = serve.kube.get();
  Extender* extender = serve.extender.get();

  // The in-process engine on the same nodes, in the same order, with the same M and seed.
  Cluster cluster(nodes);
  TargetClass whole_gpu;
  whole_gpu.gpu_milli = kMilliPerGpu;
  whole_gpu.gpu_count = 1;
  whole_gpu.probability = 1;
  whole_gpu.count = 1;
  TargetWorkload workload = TargetWorkload::FromClasses({whole_gpu});
  workload.Resolve(cluster);
  PolicyContext context;
  context.workload = &workload;
  std::unique_ptr<Policy> policy = MakePolicy(policy_name, context);
  ASSERT_NE(policy, nullptr);
  const std::vector<int> order = TieOrder(static_cast<size_t>(cluster.size()), kSeed);
  Scheduler engine(&cluster, policy.get(), order, kSeed);

  Rng pods_rng(kSeed + 1);
  Rng delete_rng(kSeed + 2);
  std::vector<Placed> live;  // bound and not deleted, in bind order
  int placed = 0;
  int unplaced = 0;
  int deleted = 0;
  for (int i = 0; i < kPods; ++i) {
    // Before every 3rd pod, an earlier bound pod is deleted through the API; the extender
    // learns it from the watch only.
    if (i > 0 && i % kDeleteEvery == 0 && !live.empty()) {
      const size_t k = delete_rng.Below(live.size());
      const Placed victim = live[k];
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
      fake.DeletePod("ml", victim.name);
      engine.Unbind(victim.node, victim.request, victim.gpus);
      ++deleted;
      ASSERT_TRUE(WaitFor([&] { return serve.Forgot(victim.uid); }))
          << "the extender never saw the deletion of " << victim.name;
    }
    const PodSpec spec = MakePod(pods_rng, i);
    const PodRequest request = cluster.MakeRequest(spec);
    const std::string name = "p-" + std::to_string(i);
    fake.AddPod(PodObjectOf(spec, name));
    const Json pod = fake.GetPod("ml", name);
    const std::string uid = pod["metadata"]["uid"];
    const std::string where = "pod " + std::to_string(i) + " (" + pod.dump() + ")";

    // Filter, with every node (nodeCacheCapable: true).
    bool ok = false;
    Json args = {{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", node_names}};
    const std::string filter_body = kube->Post("/filter", args.dump(), &ok);
    ASSERT_TRUE(ok) << where << ": " << filter_body;
    Result<ExtenderFilterResult> filtered = DecodeExtenderFilterResult(filter_body);
    ASSERT_TRUE(filtered.ok()) << filtered.error().message;
    ASSERT_EQ(filtered->error, "") << where;
    std::vector<std::string> feasible;  // the engine's filter, for the same pod
    for (int n = 0; n < cluster.size(); ++n) {
      if (cluster.Check(n, request) == FitReason::kFits) feasible.push_back(nodes[n].name);
    }
    ASSERT_EQ(filtered->node_names, feasible) << where;
    ASSERT_EQ(filtered->node_names.size() + filtered->failed_nodes.size() +
                  filtered->failed_and_unresolvable_nodes.size(),
              nodes.size())
        << where << ": every rejected node listed";

    const Decision decision = engine.Decide(request);
    if (filtered->node_names.empty()) {  // fits nowhere: stays pending, in both
      ASSERT_FALSE(decision.ok()) << where;
      ++unplaced;
      continue;
    }
    ASSERT_TRUE(decision.ok()) << where;

    // Prioritize the feasible nodes; the highest score wins (exactly one candidate has it).
    args["NodeNames"] = filtered->node_names;
    const std::string scores_body = kube->Post("/prioritize", args.dump(), &ok);
    ASSERT_TRUE(ok) << where << ": " << scores_body;
    Result<HostPriorityList> scores = DecodeHostPriorityList(scores_body);
    ASSERT_TRUE(scores.ok()) << scores.error().message;
    ASSERT_EQ(scores->size(), filtered->node_names.size()) << where;
    std::string best;
    int64_t top = -1;
    int at_top = 0;
    for (size_t k = 0; k < scores->size(); ++k) {
      const HostPriority& h = (*scores)[k];
      ASSERT_EQ(h.host, filtered->node_names[k]) << where;
      ASSERT_GE(h.score, 0) << where;
      ASSERT_LE(h.score, 10) << where;
      if (h.score > top) best = h.host, top = h.score, at_top = 0;
      at_top += h.score == top;
    }
    ASSERT_EQ(top, 10) << where;  // the engine's choice gets 10
    ASSERT_EQ(at_top, 1) << where;

    // Bind.
    const std::string bind_body =
        kube->Post("/bind", EncodeExtenderBindingArgs({name, "ml", uid, best}), &ok);
    ASSERT_TRUE(ok) << where << ": " << bind_body;
    Result<ExtenderBindingResult> bound = DecodeExtenderBindingResult(bind_body);
    ASSERT_TRUE(bound.ok()) << bound.error().message;
    ASSERT_EQ(bound->error, "") << where;

    // Same node and same GPUs as the engine.
    ASSERT_EQ(best, nodes[decision.node].name) << where << " (policy " << policy_name << ")";
    const Json stored = fake.GetPod("ml", name);
    EXPECT_EQ(stored["spec"]["nodeName"], best) << where;
    const Json& annotations = stored["metadata"]["annotations"];
    if (request.IsCpuOnly()) {
      ASSERT_EQ(decision.gpus, 0u) << where;
      EXPECT_FALSE(annotations.contains(std::string(kGpuIndicesAnnotation))) << where;
    } else {
      ASSERT_TRUE(annotations.contains(std::string(kGpuIndicesAnnotation))) << where;
      ASSERT_EQ(annotations[std::string(kGpuIndicesAnnotation)], FormatGpuIndices(decision.gpus))
          << where << " on " << best;
    }
    engine.Bind(decision.node, request, decision.gpus);
    live.push_back({uid, name, decision.node, request, decision.gpus});
    ++placed;
  }

  // The watch has confirmed every bind; the final allocation is the engine's.
  ASSERT_TRUE(WaitFor([&] { return extender->assumed_pods() == 0; }));
  const Json state = kube->State();
  ASSERT_EQ(state["nodes"].size(), nodes.size());
  for (int n = 0; n < cluster.size(); ++n) {
    const Json& node = state["nodes"][n];
    const NodeState& st = cluster.state(n);
    ASSERT_EQ(node["name"], nodes[n].name);
    EXPECT_EQ(node["cpu_left_milli"], st.cpu_left) << nodes[n].name;
    EXPECT_EQ(node["memory_left_mib"], st.memory_left) << nodes[n].name;
    EXPECT_EQ(
        node["gpu_free_milli"],
        Json(std::vector<int32_t>(st.gpu_free.begin(), st.gpu_free.begin() + nodes[n].gpu_count)))
        << nodes[n].name;
  }
  EXPECT_EQ(state["gpu_allocated_milli"], cluster.allocated_gpu_milli());
  std::map<std::string, const Placed*> by_uid;
  for (const Placed& p : live) by_uid[p.uid] = &p;
  ASSERT_EQ(state["assignments"].size(), live.size());
  for (const Json& a : state["assignments"]) {
    auto it = by_uid.find(a["uid"].get<std::string>());
    ASSERT_NE(it, by_uid.end()) << a.dump();
    EXPECT_EQ(a["node"], nodes[it->second->node].name) << a.dump();
    EXPECT_EQ(a["gpus"], GpuList(it->second->gpus)) << a.dump();
  }

  // The sequence does what it claims: many placements, real deletes, a cluster that fills up
  // (so that pods fail and the policies' choices matter).
  EXPECT_EQ(placed + unplaced, kPods);
  EXPECT_EQ(deleted, (kPods - 1) / kDeleteEvery);
  EXPECT_GT(placed, kPods / 2);
  EXPECT_GT(unplaced, 0);
  std::cout << "[replay " << policy_name << "] placed " << placed << ", unplaced " << unplaced
            << ", deleted " << deleted << ", live at the end " << live.size() << ", GPU allocated "
            << cluster.allocated_gpu_milli() << "/" << cluster.total_gpu_milli() << " milli\n";
}

INSTANTIATE_TEST_SUITE_P(Policies, ExtenderReplay, ::testing::Values("fgd", "tessera", "bestfit"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace tessera::k8s
