// tessera analyze: the snapshot reader, the model (serve's GPU accounting), the figures against
// `tessera frag`'s measure and the offline bound, and the move plan applied in the engine.

#include "analyze/analyze.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "analyze/analyze_report.h"
#include "analyze/model.h"
#include "analyze/snapshot.h"
#include "analyze/snapshot_writer.h"
#include "k8s/api/kube_api.h"
#include "k8s/fake_apiserver.h"
#include "k8s/testdata.h"
#include "offline/offline_bound.h"
#include "sched/engine.h"
#include "trace/csv_reader.h"
#include "util/file.h"

namespace tessera::analyze {
namespace {

NodeSpec Node8(const std::string& name) {
  NodeSpec n;
  n.name = name;
  n.cpu_milli = 96000;
  n.memory_mib = 393216;
  n.gpu_count = 8;
  n.gpu_model = "V100M32";
  n.gpu_memory_mib = 32768;
  return n;
}

PodToWrite GpuPod(const std::string& name, int gpus, int node, GpuSet set,
                  const std::string& owner_kind = "ReplicaSet", const std::string& owner = "") {
  PodToWrite p;
  p.spec.name = name;
  p.spec.cpu_milli = 4000;
  p.spec.memory_mib = 16384;
  p.spec.gpu_count = gpus;
  p.spec.gpu_milli = 1000;
  p.node = node;
  p.gpus = set;
  p.owner_kind = owner_kind;
  p.owner_name = owner;
  return p;
}

GpuSet Bits(int from, int count) { return ((GpuSet{1} << count) - 1) << from; }

std::unique_ptr<Model> ModelOf(const std::string& json) {
  Result<Snapshot> s = ReadSnapshot({{"snap.json", json}});
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  if (!s.ok()) return nullptr;
  Result<std::unique_ptr<Model>> m = BuildModel(*s);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  return m.ok() ? std::move(*m) : nullptr;
}

/// The hand-made case: three 8-GPU nodes at 7 / 6 / 7 GPUs used by 1-GPU pods and a pending
/// 4-GPU pod that fits none. On n1 (6 used): a bare pod, a DaemonSet pod, two pods a budget
/// protects (minAvailable 2 of 2) and two pods of a free ReplicaSet.
std::string SevenSixSeven() {
  std::vector<NodeSpec> nodes = {Node8("n0"), Node8("n1"), Node8("n2")};
  std::vector<PodToWrite> pods;
  for (int g = 0; g < 7; ++g) pods.push_back(GpuPod("a-" + std::to_string(g), 1, 0, Bits(g, 1)));
  pods.push_back(GpuPod("bare-0", 1, 1, Bits(0, 1), ""));
  pods.push_back(GpuPod("ds-0", 1, 1, Bits(1, 1), "DaemonSet", "ds"));
  for (int g = 2; g < 4; ++g) {
    PodToWrite p = GpuPod("guarded-" + std::to_string(g), 1, 1, Bits(g, 1));
    p.labels["app"] = "guarded";
    pods.push_back(p);
  }
  for (int g = 4; g < 6; ++g) pods.push_back(GpuPod("free-" + std::to_string(g), 1, 1, Bits(g, 1)));
  for (int g = 0; g < 7; ++g) pods.push_back(GpuPod("c-" + std::to_string(g), 1, 2, Bits(g, 1)));
  pods.push_back(GpuPod("big-0", 4, -1, 0));
  PdbToWrite pdb;
  pdb.name = "guarded";
  pdb.match_labels["app"] = "guarded";
  pdb.min_available = 2;
  return SnapshotJson(nodes, pods, {pdb});
}

int IdleTotal(const Cluster& c) {
  int idle = 0;
  for (int n = 0; n < c.size(); ++n) idle += IdleGpus(c.state(n), c.spec(n).gpu_count);
  return idle;
}

/// Applies `plan` to the model's cluster by hand (Release, Check, Allocate) and checks what the
/// plan promises and what it must never do; `after` (if given) gets the state after it.
void ApplyAndCheck(const Model& m, const Plan& plan, const PlanOptions& caps,
                   Cluster* after = nullptr) {
  Cluster c = m.cluster;
  std::map<std::string, const ModelPod*> pods;
  for (const ModelPod& p : m.pods) pods[p.key] = &p;
  std::map<std::string, int> where;  // pod → node now
  std::map<std::string, GpuSet> gpus_of;
  for (const ModelPod& p : m.pods) {
    if (p.placed) {
      where[p.key] = p.node;
      gpus_of[p.key] = p.gpus;
    }
  }
  std::map<std::string, int> per_node, per_ns, per_wl;
  std::map<int, int> per_pdb;
  std::set<std::string> moved;
  size_t next_placement = 0;
  int promised = 0;
  for (const Move& mv : plan.moves) {
    const ModelPod& p = *pods.at(mv.pod);
    EXPECT_TRUE(p.movable) << mv.pod << ": " << p.unmovable;
    EXPECT_FALSE(p.workload.empty()) << mv.pod << " is a bare pod";
    EXPECT_EQ(p.workload.find("DaemonSet/"), std::string::npos) << mv.pod;
    EXPECT_TRUE(moved.insert(mv.pod).second) << mv.pod << " moved twice";
    const int from = m.NodeOf(mv.from);
    const int to = m.NodeOf(mv.to);
    ASSERT_EQ(where.at(mv.pod), from) << "step " << mv.step;
    GpuSet to_gpus = 0;
    for (int g : mv.gpus_to) to_gpus |= GpuSet{1} << g;
    const int idle_before = IdleTotal(c);
    c.Release(from, p.request, gpus_of.at(mv.pod));
    // The step is valid on the state the earlier ones leave: the pod fits its target there,
    // on exactly the GPUs named.
    ASSERT_EQ(c.Check(to, p.target_request), FitReason::kFits) << "step " << mv.step;
    for (int g : mv.gpus_to) ASSERT_TRUE(GpuHasRoom(c.state(to), g, p.request));
    ASSERT_EQ(static_cast<int>(mv.gpus_to.size()), p.request.gpu_count);
    c.Allocate(to, p.request, to_gpus);
    EXPECT_GE(IdleTotal(c) - idle_before, mv.gpus_freed) << "step " << mv.step;
    promised += mv.gpus_freed;
    where[mv.pod] = to;
    gpus_of[mv.pod] = to_gpus;
    ++per_node[mv.from];
    ++per_ns[p.namespace_name];
    ++per_wl[p.workload];
    for (int b : p.pdbs) ++per_pdb[b];
    while (next_placement < plan.placements.size() &&
           plan.placements[next_placement].after_step == mv.step) {
      const Placement& pl = plan.placements[next_placement++];
      const ModelPod& q = *pods.at(pl.pod);
      const int node = m.NodeOf(pl.node);
      ASSERT_EQ(c.Check(node, q.target_request), FitReason::kFits) << pl.pod;
      GpuSet set = 0;
      for (int g : pl.gpus) set |= GpuSet{1} << g;
      c.Allocate(node, q.target_request, set);
    }
  }
  EXPECT_EQ(next_placement, plan.placements.size());
  EXPECT_EQ(promised, plan.gpus_freed);
  EXPECT_LE(static_cast<int>(plan.moves.size()), caps.max_moves);
  for (const auto& [k, n] : per_node) EXPECT_LE(n, caps.max_moves_per_node) << k;
  for (const auto& [k, n] : per_ns) EXPECT_LE(n, caps.max_moves_per_namespace) << k;
  for (const auto& [k, n] : per_wl) EXPECT_LE(n, caps.max_moves_per_workload) << k;
  for (const auto& [b, n] : per_pdb) EXPECT_LE(n, m.pdbs[b].allowed) << m.pdbs[b].key;
  if (after != nullptr) *after = c;
}

TEST(AnalyzePlan, SevenSixSevenPlacesTheFourGpuPod) {
  std::unique_ptr<Model> m = ModelOf(SevenSixSeven());
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->pdbs.size(), 1u);
  EXPECT_EQ(m->pdbs[0].matching, 2);
  EXPECT_EQ(m->pdbs[0].allowed, 0);
  // Before: the 4-GPU pod fits no node.
  const ModelPod* big = nullptr;
  for (const ModelPod& p : m->pods) {
    if (p.key == "default/big-0") big = &p;
  }
  ASSERT_NE(big, nullptr);
  ASSERT_TRUE(big->pending);
  for (int n = 0; n < m->cluster.size(); ++n) {
    EXPECT_NE(m->cluster.Check(n, big->target_request), FitReason::kFits);
  }
  PlanOptions caps;
  const Plan plan = MakePlan(*m, caps);
  ASSERT_EQ(plan.placements.size(), 1u);
  EXPECT_EQ(plan.placements[0].pod, "default/big-0");
  EXPECT_EQ(plan.placements[0].node, "n1");
  // Only the free ReplicaSet's pods may leave n1: two moves, one to each other node.
  ASSERT_EQ(plan.moves.size(), 2u);
  std::set<std::string> targets;
  for (const Move& mv : plan.moves) {
    EXPECT_EQ(mv.pod.substr(0, 13), "default/free-") << mv.pod;
    EXPECT_EQ(mv.from, "n1");
    targets.insert(mv.to);
  }
  EXPECT_EQ(targets, (std::set<std::string>{"n0", "n2"}));
  Cluster after = m->cluster;
  ASSERT_NO_FATAL_FAILURE(ApplyAndCheck(*m, plan, caps, &after));
  EXPECT_EQ(after.allocated_gpu_milli(), m->cluster.allocated_gpu_milli() + 4000);

  // The report says so too.
  Result<Analysis> a = Analyze(*m, {});
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->pending.size(), 1u);
  EXPECT_EQ(a->pending[0].repack, "plan");
  EXPECT_EQ(a->pending[0].placed_on, "n1");
  ASSERT_FALSE(a->pending[0].closest.empty());
  EXPECT_EQ(a->pending[0].closest[0].node, "n1");
  EXPECT_EQ(a->pending[0].closest[0].gpus_missing, 2);
  EXPECT_EQ(a->pending[0].reasons.size(), 1u);  // all three: not enough GPU left
  EXPECT_EQ(a->pending[0].reasons.begin()->second, 3);
  EXPECT_EQ(a->unmovable.at("bare pod (no controller owner)"), 1);
  EXPECT_EQ(a->unmovable.at("DaemonSet pod"), 1);
  // Pool bound: 20 GPUs in use on 24, so at most 4 idle GPUs and no whole node.
  ASSERT_EQ(a->pools.size(), 1u);
  EXPECT_EQ(a->pools[0].idle_gpus, 4);
  EXPECT_EQ(a->pools[0].idle_gpus_max, 4);
  EXPECT_EQ(a->pools[0].idle_nodes_max, 0);
  const std::string json = AnalysisJson(*a, {"snap.json", "test"});
  EXPECT_NE(json.find("\"placements\""), std::string::npos);
  std::string html = AnalysisHtml(*a, {"snap.json", "test"});
  EXPECT_NE(html.find("<svg"), std::string::npos);
  // The pending pod in report.html (issue 40: it had no pending-pods section), with what the
  // plan does for it and the node closest to taking it; no warnings, no warnings section.
  const size_t pending = html.find("<section class=\"card\" id=\"pending\">");
  ASSERT_NE(pending, std::string::npos) << html;
  const std::string row = html.substr(html.find("default/big-0", pending) - 60, 400);
  EXPECT_NE(row.find("<tr data-repack=\"plan\">"), std::string::npos) << row;
  EXPECT_NE(row.find("plan \u2192 n1"), std::string::npos) << row;
  EXPECT_NE(row.find("n1: 2 GPU"), std::string::npos) << row;
  EXPECT_EQ(html.find("id=\"warnings\""), std::string::npos);
  // The analysis's warnings in report.html (it had none).
  a->warnings = {"pod default/x on node n2: estimated as whole GPUs: <no annotation>"};
  html = AnalysisHtml(*a, {"snap.json", "test"});
  const size_t warnings = html.find("<section class=\"card warnings\" id=\"warnings\">");
  ASSERT_NE(warnings, std::string::npos) << html;
  EXPECT_NE(html.find("<li>pod default/x on node n2: estimated as whole GPUs: &lt;no "
                      "annotation&gt;</li>",
                      warnings),
            std::string::npos);
}

TEST(AnalyzePlan, CapsStopThePlanAndAreNeverExceeded) {
  std::unique_ptr<Model> m = ModelOf(SevenSixSeven());
  ASSERT_NE(m, nullptr);
  PlanOptions caps;
  caps.max_moves_per_node = 1;  // n1 needs two moves off it
  const Plan plan = MakePlan(*m, caps);
  EXPECT_TRUE(plan.placements.empty());
  ASSERT_NO_FATAL_FAILURE(ApplyAndCheck(*m, plan, caps));
  Result<Analysis> a = Analyze(*m, {caps, 3, false});
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->pending.size(), 1u);
  EXPECT_EQ(a->pending[0].repack, "possible");

  caps = {};
  caps.max_moves_per_workload = 1;  // the two movable pods of n1 are one ReplicaSet
  const Plan plan2 = MakePlan(*m, caps);
  EXPECT_TRUE(plan2.placements.empty());
  ASSERT_NO_FATAL_FAILURE(ApplyAndCheck(*m, plan2, caps));
}

TEST(AnalyzePlan, ABudgetWithRoomLetsItsPodsMove) {
  // The same cluster with maxUnavailable 1: a guarded pod may now move too, but one only.
  std::string json = SevenSixSeven();
  const std::string from = "\"minAvailable\":2";
  json.replace(json.find(from), from.size(), "\"maxUnavailable\":1");
  std::unique_ptr<Model> m = ModelOf(json);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->pdbs[0].allowed, 1);
  PlanOptions caps;
  caps.max_moves_per_workload = 1;  // one of free-*, one of guarded-*
  const Plan plan = MakePlan(*m, caps);
  ASSERT_EQ(plan.placements.size(), 1u);
  ASSERT_NO_FATAL_FAILURE(ApplyAndCheck(*m, plan, caps));
}

TEST(AnalyzePlan, SharesAloneOnAGpuJoinPartlyUsedOnes) {
  // Two nodes, each with one GPU holding a 300-milli share: one share moves, one GPU frees.
  std::vector<NodeSpec> nodes = {Node8("n0"), Node8("n1")};
  std::vector<PodToWrite> pods;
  for (int n = 0; n < 2; ++n) {
    PodToWrite p = GpuPod("share-" + std::to_string(n), 1, n, Bits(0, 1), "ReplicaSet",
                          "share" + std::to_string(n));
    p.spec.gpu_milli = 300;
    pods.push_back(p);
  }
  std::unique_ptr<Model> m = ModelOf(SnapshotJson(nodes, pods));
  ASSERT_NE(m, nullptr);
  const Plan plan = MakePlan(*m, {});
  ASSERT_EQ(plan.moves.size(), 1u);
  EXPECT_EQ(plan.moves[0].gpus_freed, 1);
  EXPECT_GE(plan.moves[0].frag_removed_milli, 0);  // M's one class fits either way
  Cluster after = m->cluster;
  ASSERT_NO_FATAL_FAILURE(ApplyAndCheck(*m, plan, {}, &after));
  EXPECT_EQ(IdleTotal(after), IdleTotal(m->cluster) + 1);
}

TEST(AnalyzeModel, HamiAllocationIsReadAsServeReadsIt) {
  // A HAMi node (two healthy V100s in its register) with a pod HAMi's scheduler bound to the
  // second GPU (hami.io/vgpu-devices-allocated), half of its cores: the model has that share
  // on GPU 1 and GPU 0 idle, as serve's extender counts it.
  nlohmann::json node = nlohmann::json::parse(k8s::ReadTestdata("node_hami.json"));
  const std::string name = node["metadata"]["name"];
  nlohmann::json pod = {
      {"kind", "Pod"},
      {"metadata",
       {{"name", "infer-0"},
        {"namespace", "ml"},
        {"uid", "u1"},
        {"annotations",
         {{"hami.io/vgpu-devices-allocated",
           "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448,NVIDIA,16384,50:;"}}},
        {"ownerReferences", {{{"kind", "ReplicaSet"}, {"name", "infer"}, {"controller", true}}}}}},
      {"spec",
       {{"nodeName", name},
        {"containers",
         {{{"name", "m"},
           {"resources",
            {{"limits",
              {{"nvidia.com/gpu", "1"},
               {"nvidia.com/gpumem", "16384"},
               {"nvidia.com/gpucores", "50"}}}}}}}}}},
      {"status", {{"phase", "Running"}}}};
  nlohmann::json list = {{"kind", "List"}, {"items", {node, pod}}};
  std::unique_ptr<Model> m = ModelOf(list.dump());
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->cluster.size(), 1);
  EXPECT_EQ(m->cluster.spec(0).gpu_count, 2);
  EXPECT_EQ(m->cluster.state(0).gpu_free[0], 1000);
  EXPECT_EQ(m->cluster.state(0).gpu_free[1], 500);
  ASSERT_EQ(m->pods.size(), 1u);
  EXPECT_TRUE(m->pods[0].placed);
  EXPECT_EQ(m->pods[0].gpus, GpuSet{2});
  EXPECT_TRUE(m->pods[0].movable) << m->pods[0].unmovable;
}

TEST(AnalyzeFrag, PartsSumToFgdMeasure) {
  std::unique_ptr<Model> m = ModelOf(SevenSixSeven());
  ASSERT_NE(m, nullptr);
  for (int n = 0; n < m->cluster.size(); ++n) {
    const FragParts f = NodeFragParts(*m, n);
    EXPECT_NEAR(f.gpu + f.cpu + f.model + f.cpu_only, f.total, 1e-9);
    EXPECT_DOUBLE_EQ(f.total, m->workload.NodeFragmentation(m->cluster, n));
  }
}

/// The default trace placed by k8s-default on the openb nodes, written as kubectl JSON.
TEST(AnalyzeTrace, MatchesFragMeasureAndOfflineBound) {
  const std::string dir = TESSERA_DATA_DIR;
  if (!std::filesystem::exists(dir + "/openb_pod_list_default.csv")) {
    GTEST_SKIP() << "trace not found at " << dir;
  }
  Result<std::vector<NodeSpec>> nodes = ReadNodeCsv(
      ReadFile(dir + "/openb_node_list_gpu_node.csv").value(), "openb_node_list_gpu_node.csv");
  Result<std::vector<PodSpec>> pods =
      ReadPodCsv(ReadFile(dir + "/openb_pod_list_default.csv").value(), "default.csv");
  ASSERT_TRUE(nodes.ok() && pods.ok());
  Result<std::unique_ptr<Engine>> engine = Engine::Create(*nodes, *pods, "k8s-default", 42);
  ASSERT_TRUE(engine.ok());
  Engine& e = **engine;
  std::vector<PodToWrite> written;
  int pending = 0;
  for (const PodSpec& spec : *pods) {
    const PodRequest req = e.cluster().MakeRequest(spec);
    const Decision d = e.scheduler().Decide(req);
    if (d.ok()) e.scheduler().Bind(d.node, req, d.gpus);
    PodToWrite p;
    p.spec = spec;
    p.node = d.node;
    p.gpus = d.ok() ? d.gpus : 0;
    pending += d.ok() ? 0 : 1;
    written.push_back(std::move(p));
  }
  const std::string json = SnapshotJson(*nodes, written);
  std::unique_ptr<Model> m = ModelOf(json);
  ASSERT_NE(m, nullptr);
  // The same state, GPU by GPU.
  ASSERT_EQ(m->cluster.size(), e.cluster().size());
  for (int n = 0; n < m->cluster.size(); ++n) {
    ASSERT_EQ(m->cluster.state(n).gpu_free, e.cluster().state(n).gpu_free) << n;
    ASSERT_EQ(m->cluster.state(n).cpu_left, e.cluster().state(n).cpu_left) << n;
  }
  AnalyzeOptions options;
  options.plan.max_moves = 5;
  Result<Analysis> a = Analyze(*m, options);
  ASSERT_TRUE(a.ok()) << a.error().message;
  // Fragmentation: `tessera frag`'s measure (M of the trace's pods) of the same state.
  const double frag = e.workload()->ClusterFragmentation(e.cluster());
  EXPECT_NEAR(a->frag.total, frag, 1e-6 * std::max(1.0, frag));
  EXPECT_GT(frag, 0);
  // The bound: the offline bound of the same pods on the same nodes.
  std::vector<int> all(pods->size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  Result<OfflineBound> b = ComputeOfflineBound(*nodes, *pods, all);
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE(a->has_bound);
  EXPECT_NEAR(a->bound.max_placed_milli, b->max_placed_milli, 1e-6);
  EXPECT_NEAR(a->bound.unallocated_pct, b->unallocated_pct, 1e-9);
  EXPECT_EQ(a->pods_pending_gpu, pending);
  ASSERT_NO_FATAL_FAILURE(ApplyAndCheck(*m, a->plan, options.plan));
  // The figures docs/ANALYZE.md quotes.
  std::printf(
      "default trace by k8s-default: %d pods bound, %d GPU pods pending; fragmentation %.3f "
      "GPUs (frag's measure %.3f); offline bound: at most %.3f of %.3f GPUs placeable, "
      "unallocated >= %.3f %% (direct %.3f %%); plan: %zu moves, %d GPUs freed, %zu placed\n",
      a->pods_bound, a->pods_pending_gpu, a->frag.total / 1000, frag / 1000,
      a->bound.max_placed_milli / 1000, static_cast<double>(a->bound.arrived_milli) / 1000,
      a->bound.unallocated_pct, b->unallocated_pct, a->plan.moves.size(), a->plan.gpus_freed,
      a->plan.placements.size());
}

TEST(AnalyzeSnapshot, ErrorsNameThePath) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"kind\":\"List\",\"items\":[", "snap.json: malformed JSON"},
      {"{\"kind\":\"List\",\"items\":[{\"kind\":\"Service\",\"metadata\":{\"name\":\"s\"}}]}",
       "snap.json: items[0].kind: unknown kind \"Service\""},
      {"{\"kind\":\"List\",\"items\":[{\"kind\":\"Node\",\"metadata\":{},\"status\":{}}]}",
       "snap.json: items[0].metadata.name: missing"},
      {"{\"kind\":\"List\",\"items\":[{\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"},"
       "\"status\":{}}]}",
       "snap.json: items[0].status.allocatable: missing"},
      {"{\"kind\":\"List\",\"items\":[{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
       "\"namespace\":\"d\"},\"spec\":{}}]}",
       "snap.json: items[0].spec.containers: missing"},
      {"{\"kind\":\"List\",\"items\":[{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
       "\"namespace\":\"d\",\"ownerReferences\":[{\"kind\":\"ReplicaSet\"}]},\"spec\":"
       "{\"containers\":[]}}]}",
       "snap.json: items[0].metadata.ownerReferences[0].name: missing"},
      {"{\"kind\":\"List\",\"items\":[{\"kind\":\"PodDisruptionBudget\",\"metadata\":{\"name\":"
       "\"b\",\"namespace\":\"d\"},\"spec\":{\"minAvailable\":\"x%\"}}]}",
       "snap.json: items[0].spec.minAvailable: bad value"},
      {"{\"kind\":\"ServiceList\",\"items\":[]}", "snap.json: kind: unknown list kind"},
      {"{\"kind\":\"List\",\"items\":[]}", "no Node objects"},
  };
  for (const auto& [text, want] : cases) {
    Result<Snapshot> s = ReadSnapshot({{"snap.json", text}});
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_NE(s.error().message.find(want), std::string::npos)
        << s.error().message << "\nwant: " << want;
  }
}

TEST(AnalyzeSnapshot, SeparateListsAndFilesMakeOneSnapshot) {
  const std::string all = SevenSixSeven();
  Result<Snapshot> one = ReadSnapshot({{"snap.json", all}});
  ASSERT_TRUE(one.ok());
  // The same objects as three typed lists in three files, items without kind.
  nlohmann::json doc = nlohmann::json::parse(all);
  nlohmann::json nodes = {{"kind", "NodeList"}, {"items", nlohmann::json::array()}};
  nlohmann::json pods = {{"kind", "PodList"}, {"items", nlohmann::json::array()}};
  nlohmann::json pdbs = {{"kind", "PodDisruptionBudgetList"}, {"items", nlohmann::json::array()}};
  for (nlohmann::json item : doc["items"]) {
    const std::string kind = item["kind"];
    item.erase("kind");
    (kind == "Node" ? nodes : kind == "Pod" ? pods : pdbs)["items"].push_back(item);
  }
  Result<Snapshot> three =
      ReadSnapshot({{"n.json", nodes.dump()}, {"p.json", pods.dump()}, {"b.json", pdbs.dump()}});
  ASSERT_TRUE(three.ok()) << three.error().message;
  EXPECT_EQ(three->nodes.size(), one->nodes.size());
  EXPECT_EQ(three->pods.size(), one->pods.size());
  EXPECT_EQ(three->pdbs.size(), one->pdbs.size());
  // The same pod twice is an error naming the second.
  Result<Snapshot> twice = ReadSnapshot({{"a.json", all}, {"b.json", pods.dump()}});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().message.find("b.json: items[0]: duplicate pod"), std::string::npos)
      << twice.error().message;
}

// serve's file mode reads its files with this reader, each for what its flag promises: the
// combined List of `kubectl get nodes,pods,pdb -A -o json` given as --nodes is read whole (its
// bound pods occupy their GPUs), and a file of the wrong kind is refused by name.
TEST(AnalyzeSnapshot, ServeFileRolesReadCombinedListsAndRefuseTheWrongKind) {
  const std::string all = SevenSixSeven();
  using R = DocumentRole;
  Result<Snapshot> combined = ReadSnapshot({{"snap.json", all, R::kNodes, "--nodes"}});
  ASSERT_TRUE(combined.ok()) << combined.error().message;
  EXPECT_EQ(combined->nodes.size(), 3u);
  EXPECT_EQ(combined->pods.size(), 21u);
  EXPECT_EQ(combined->pdbs.size(), 1u);
  Result<std::unique_ptr<k8s::Extender>> ext = MakeFileExtender(*combined, {});
  ASSERT_TRUE(ext.ok()) << ext.error().message;
  const nlohmann::json state = nlohmann::json::parse((*ext)->StateJson());
  EXPECT_EQ(state["assignments"].size(), 20u);  // every bound pod, none ignored
  EXPECT_EQ(state["gpu_allocated_milli"], 20000);

  nlohmann::json doc = nlohmann::json::parse(all);
  nlohmann::json node_list = {{"kind", "NodeList"}, {"items", nlohmann::json::array()}};
  nlohmann::json pod_list = {{"kind", "PodList"}, {"items", nlohmann::json::array()}};
  nlohmann::json kubectl_pods = {{"kind", "List"}, {"items", nlohmann::json::array()}};
  nlohmann::json kindless_nodes = {{"items", nlohmann::json::array()}};
  for (const nlohmann::json& item : doc["items"]) {
    if (item["kind"] == "Node") {
      node_list["items"].push_back(item);
      nlohmann::json bare = item;
      bare.erase("kind");
      kindless_nodes["items"].push_back(bare);
    }
    if (item["kind"] == "Pod") {
      pod_list["items"].push_back(item);
      kubectl_pods["items"].push_back(item);
    }
  }
  // Separate files as before, items without a kind taken for what their flag reads.
  Result<Snapshot> files =
      ReadSnapshot({{"nodes.json", kindless_nodes.dump(), R::kNodes, "--nodes"},
                    {"pods.json", pod_list.dump(), R::kPods, "--pods"}});
  ASSERT_TRUE(files.ok()) << files.error().message;
  EXPECT_EQ(files->nodes.size(), 3u);
  EXPECT_EQ(files->pods.size(), 21u);

  nlohmann::json with_service = doc;
  with_service["items"].push_back({{"kind", "Service"}, {"metadata", {{"name", "s"}}}});
  nlohmann::json pod_in_node_list = node_list;
  pod_in_node_list["items"].push_back(pod_list["items"][0]);
  const std::vector<std::tuple<SnapshotText, std::string>> cases = {
      {{"pods.json", pod_list.dump(), R::kNodes, "--nodes"},
       "pods.json: a PodList, but --nodes expects nodes: a NodeList as `kubectl get nodes -o "
       "json` prints it, or a List that holds Node objects (`kubectl get nodes,pods -A -o "
       "json`)"},
      {{"pods.json", kubectl_pods.dump(), R::kNodes, "--nodes"},
       "pods.json: no Node objects (21 Pod, 0 PodDisruptionBudget), but --nodes expects nodes"},
      {{"nodes.json", node_list.dump(), R::kPods, "--pods"},
       "nodes.json: a NodeList, but --pods expects pods: a List of Pod objects as `kubectl get "
       "pods -A -o json` prints it"},
      {{"snap.json", all, R::kPods, "--pods"},
       "snap.json: items[0]: a Node, but --pods expects pods"},
      {{"snap.json", with_service.dump(), R::kNodes, "--nodes"},
       "snap.json: items[25].kind: unknown kind \"Service\""},
      {{"nodes.json", pod_in_node_list.dump(), R::kNodes, "--nodes"},
       "nodes.json: items[3].kind: a Pod in a list of Node objects"},
  };
  for (const auto& [text, want] : cases) {
    Result<Snapshot> s = ReadSnapshot({text});
    ASSERT_FALSE(s.ok()) << text.name << " as " << text.flag;
    EXPECT_NE(s.error().message.find(want), std::string::npos)
        << s.error().message << "\nwant: " << want;
  }
}

TEST(AnalyzeSnapshot, LiveApiReadAndRefusal) {
  k8s::testing::FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  nlohmann::json doc = nlohmann::json::parse(SevenSixSeven());
  for (const nlohmann::json& item : doc["items"]) {
    if (item["kind"] == "Node") fake.AddNode(item);
    if (item["kind"] == "Pod") fake.AddPod(item);
    if (item["kind"] == "PodDisruptionBudget") fake.PutDisruptionBudget(item);
  }
  k8s::KubeApiConfig config;
  config.server = fake.url();
  Result<std::unique_ptr<k8s::HttpKubeApi>> api = k8s::HttpKubeApi::Create(config);
  ASSERT_TRUE(api.ok());
  ApiSnapshot read = ListSnapshot(**api, fake.url());
  ASSERT_TRUE(read.snapshot.has_value()) << (read.api_error     ? read.api_error->message
                                             : read.input_error ? read.input_error->message
                                                                : "");
  EXPECT_EQ(read.snapshot->nodes.size(), 3u);
  EXPECT_EQ(read.snapshot->pods.size(), 21u);
  EXPECT_EQ(read.snapshot->pdbs.size(), 1u);
  EXPECT_EQ(read.snapshot->budgets_not_read, "");
  // An API server without policy/v1 (before 1.21): the budgets of policy/v1beta1.
  fake.FailNext("GET", "/apis/policy/v1/", 1, 404);
  ApiSnapshot beta = ListSnapshot(**api, fake.url());
  ASSERT_TRUE(beta.snapshot.has_value());
  EXPECT_EQ(beta.snapshot->pdbs.size(), 1u);
  // An account that may not list the budgets: the snapshot without them, and why; the report
  // says so, and its plan goes on (as serve's preemption goes on without them).
  fake.Forbid("poddisruptionbudgets");
  ApiSnapshot no_budgets = ListSnapshot(**api, fake.url());
  fake.Allow("poddisruptionbudgets");
  ASSERT_TRUE(no_budgets.snapshot.has_value())
      << (no_budgets.api_error ? no_budgets.api_error->message : "");
  EXPECT_EQ(no_budgets.snapshot->pods.size(), 21u);
  EXPECT_TRUE(no_budgets.snapshot->pdbs.empty());
  const std::string& why = no_budgets.snapshot->budgets_not_read;
  EXPECT_EQ(why.rfind("PodDisruptionBudgets not read: the API server refused to list them (GET "
                      "http://",
                      0),
            0u)
      << why;
  EXPECT_NE(why.find("HTTP 403: \"poddisruptionbudgets.policy is forbidden"), std::string::npos)
      << why;
  Result<std::unique_ptr<Model>> model = BuildModel(*no_budgets.snapshot);
  ASSERT_TRUE(model.ok()) << model.error().message;
  Result<Analysis> a = Analyze(**model, {});
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->budgets_not_read, no_budgets.snapshot->budgets_not_read);
  const nlohmann::json report = nlohmann::json::parse(AnalysisJson(*a, {}));
  EXPECT_EQ(report["disruption_budgets"]["read"], false);
  EXPECT_EQ(report["warnings"].back(), no_budgets.snapshot->budgets_not_read);
  EXPECT_NE(AnalysisTable(*a).find("Disruption budgets: none respected."), std::string::npos);
  EXPECT_NE(AnalysisHtml(*a, {}).find("none respected"), std::string::npos);
  // A 403 on the pods: an API error, no snapshot.
  fake.FailNext("GET", "/api/v1/pods", 1, 403);
  ApiSnapshot refused = ListSnapshot(**api, fake.url());
  EXPECT_FALSE(refused.snapshot.has_value());
  ASSERT_TRUE(refused.api_error.has_value());
  EXPECT_EQ(refused.api_error->http_status, 403);
  fake.Stop();
  // Nobody listening: no answer at all.
  ApiSnapshot gone = ListSnapshot(**api, fake.url());
  ASSERT_TRUE(gone.api_error.has_value());
  EXPECT_EQ(gone.api_error->http_status, 0);
}

}  // namespace
}  // namespace tessera::analyze
