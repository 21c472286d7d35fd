// One trace, with preemption, through `tessera replay` in-process and through `tessera serve`'s
// HTTP verbs: the same pods start at the same times on the same nodes and GPUs, and the same
// pods are preempted by the same preemptors.
//
// Both runs are RunReplay's event loop, which plays kube-scheduler (the queue in priority
// order, a failed pod's preemption, victims' grace periods, victims re-created by their
// controller) and the pods' lifecycle. In-process, the engine decides. Against the server, a
// ReplayPlacer asks `tessera serve` and carries out its answers on a fake API server:
// - a pod that arrives (or a victim re-created) becomes a Pod object with its class priority;
// - choosing a node is POST /filter with every node, then /prioritize with those that passed;
//   the best score wins, ties to the node that comes first in the engine's tie order
//   (kube-scheduler draws among equal scores; the seeded order is one such draw);
// - binding is POST /bind; the GPUs are read back from the Pod object's tessera.io/gpu-indices
//   annotation — the API server's record, not the extender's answer;
// - a preemption is POST /preempt with every node that holds a possible victim (no victims
//   proposed: the extender chooses them), and the node is chosen among the answers with
//   kube-scheduler's rule (ChoosePreemptionNode);
// - a pod that finishes, or a victim at the end of its grace period, is deleted from the API
//   server, and the next question waits until the extender's watch has seen it;
// - a preemptor gets status.nominatedNodeName while its victims terminate, and its victims the
//   condition DisruptionTarget=True, as kube-scheduler writes them;
// - the extender's clock is the replay's virtual clock (plus a fixed epoch).
// With a headroom, both keep it with the one component (sched/headroom): the in-process
// replay on its own decisions; the server in its filter and bind, fed by its own binds and by
// the deletions it watches.
// The extender's model comes from the API server alone (its watch and its own binds).
//
// What the two share by construction is the kube-scheduler model; what is compared is every
// decision: the server's node and GPU choice (policy, model built from Pod and Node objects),
// its victim search, and the GPUs it records in the API. Classes: LS (not preemptible, the
// highest priority, may use the headroom), Burstable and BE (preemptible); the server has the
// same classes in its options and reads a pod's class from spec.priority.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "k8s/extender/extender_internal.h"
#include "k8s/extender/extender_protocol.h"
#include "k8s/fake_apiserver.h"
#include "k8s/kube_scheduler.h"
#include "k8s/live.h"
#include "replay/node_subset.h"
#include "replay/replay.h"
#include "replay/replay_policy.h"
#include "replay/scenario_timeline.h"
#include "report/replay_report.h"
#include "sched/engine.h"
#include "trace/csv_reader.h"
#include "trace/scenario.h"
#include "util/file.h"
#include "util/rng.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;
using testing::FakeApiServer;
using testing::NodeObjectOf;
using testing::PodObjectOf;
using testing::Serve;
using testing::WaitFor;

constexpr uint64_t kSeed = 20261202;
// The extender's clock at the trace's time 0: a whole number of hours, so that its headroom
// buckets begin where the replay's do.
constexpr double kEpoch = 1699999200;

std::vector<NodeSpec> MakeNodes() {
  struct Kind {
    std::string model;
    int gpus;
    int64_t gpu_memory_mib;
    int count;
  };
  const std::vector<Kind> kinds = {
      {"V100M32", 8, 32768, 3}, {"A10", 4, 24576, 3}, {"T4", 2, 15360, 4}, {"A10", 1, 24576, 2}};
  std::vector<NodeSpec> nodes;
  for (const Kind& k : kinds) {
    for (int i = 0; i < k.count; ++i) {
      NodeSpec s;
      s.cpu_milli = int64_t{k.gpus} * 12000;
      s.memory_mib = int64_t{k.gpus} * 48 * 1024;
      s.gpu_count = k.gpus;
      s.gpu_model = k.model;
      s.gpu_memory_mib = k.gpu_memory_mib;
      nodes.push_back(s);
    }
  }
  Rng rng(kSeed);
  rng.Shuffle(nodes);
  for (size_t i = 0; i < nodes.size(); ++i) {
    nodes[i].name = (i < 10 ? "node-0" : "node-") + std::to_string(i);  // name order = index
  }
  return nodes;
}

// LS may use the headroom (serve reads use_headroom; the replay protects priority >= 1000).
QosClasses Classes() {
  QosClasses q;
  q.classes = {{"LS", 1000, 1.0, false, 20, true},
               {"Burstable", 500, 60.0, true, 30},
               {"BE", 0, -1, true, 10}};
  q.fallback = 2;
  return q;
}

// A busy hour: long BE trainers fill the cluster, Burstable and LS pods arrive among them
// and preempt. Names are fixed-width, so that the replay's victim names and the server's UIDs
// ("uid-" + name + incarnation) sort alike.
Timeline MakeTimeline(int pods) {
  Rng rng(kSeed + 1);
  Timeline t;
  double at = 0;
  for (int i = 0; i < pods; ++i) {
    TimedPod tp;
    PodSpec& p = tp.spec;
    char name[16];
    std::snprintf(name, sizeof name, "p-%04d", i);
    p.name = name;
    const uint64_t r = rng.Below(100);
    if (r < 40) {  // BE: whole GPUs, long
      static const int kGpus[] = {1, 1, 2, 2, 4, 8};
      p.qos = "BE";
      p.gpu_count = kGpus[rng.Below(6)];
      p.gpu_milli = 1000;
      tp.duration_s = 600 + static_cast<double>(rng.Below(3000));
    } else if (r < 70) {  // Burstable: one or two GPUs, or a share
      p.qos = "Burstable";
      p.gpu_count = rng.Below(3) == 0 ? 2 : 1;
      p.gpu_milli = p.gpu_count == 1 && rng.Below(2) == 0 ? 500 : 1000;
      tp.duration_s = 120 + static_cast<double>(rng.Below(900));
    } else {  // LS: a share or one GPU, short
      static const int32_t kMilli[] = {250, 300, 500, 1000};
      p.qos = "LS";
      p.gpu_count = 1;
      p.gpu_milli = kMilli[rng.Below(4)];
      tp.duration_s = 30 + static_cast<double>(rng.Below(300));
    }
    p.cpu_milli = int64_t{p.gpu_count} * 2000;
    p.memory_mib = int64_t{p.gpu_count} * 8192;
    if (rng.Below(100) < 15) p.gpu_spec = rng.Below(2) == 0 ? "A10" : "V100M32|T4";
    tp.arrival_s = at;
    at += 1 + static_cast<double>(rng.Below(40));
    t.pods.push_back(tp);
  }
  return t;
}

// `tessera serve` behind the replay's questions (see the top of the file).
class ServePlacer final : public ReplayPlacer {
 public:
  ServePlacer(FakeApiServer* fake, Serve* serve, const std::vector<NodeSpec>& nodes,
              const Timeline& timeline, const QosClasses& classes)
      : fake_(fake), serve_(serve), nodes_(nodes), timeline_(timeline), classes_(classes) {
    for (const NodeSpec& n : nodes) names_.push_back(n.name);
    incarnation_.assign(timeline.pods.size(), -1);
  }

  void SetTime(double now_s) override { serve_->clock.Set(kEpoch + now_s); }

  /// Off: kube-scheduler's marks (nominatedNodeName, DisruptionTarget) are not written.
  bool write_marks = true;

  void Nominated(int pod, int node) override {
    if (!write_marks) return;
    Json stored = fake_->GetPod("ml", Name(pod));
    if (node < 0 && !stored["status"].contains("nominatedNodeName")) return;
    if (node < 0) {
      stored["status"].erase("nominatedNodeName");
    } else {
      stored["status"]["nominatedNodeName"] = names_[node];
      ++nominations_;
      for (int v : last_victims_[node]) {
        Json victim = fake_->GetPod("ml", Name(v));
        victim["status"]["conditions"] = Json::array({{{"type", "DisruptionTarget"},
                                                       {"status", "True"},
                                                       {"reason", "PreemptionByScheduler"}}});
        fake_->ModifyPod(std::move(victim));
      }
    }
    fake_->ModifyPod(std::move(stored));
  }

  void Created(int pod) override {
    ++incarnation_[pod];
    const PodSpec& spec = timeline_.pods[pod].spec;
    const int32_t priority = classes_.classes[classes_.Find(spec.qos)].priority;
    fake_->AddPod(PodObjectOf(spec, Name(pod), priority));
    by_uid_["uid-" + Name(pod)] = pod;
  }

  int ChooseNode(int pod, const std::vector<int>& rank) override {
    const ExtenderFilterResult filtered = Filter(pod, names_);
    if (filtered.node_names.empty()) return -1;
    Json args = Args(pod, filtered.node_names);
    bool ok = false;
    const std::string body = serve_->kube->Post("/prioritize", args.dump(), &ok);
    EXPECT_TRUE(ok) << body;
    Result<HostPriorityList> scores = DecodeHostPriorityList(body);
    EXPECT_TRUE(scores.ok()) << body;
    if (!scores.ok()) return -1;
    int best = -1;
    int64_t top = -1;
    for (const HostPriority& h : *scores) {
      const int n = Index(h.host);
      if (h.score > top || (h.score == top && rank[n] < rank[best])) best = n, top = h.score;
    }
    return best;
  }

  bool FitsOn(int pod, int node) override {
    return !Filter(pod, {names_[node]}).node_names.empty();
  }

  GpuSet Bind(int pod, int node) override {
    bool ok = false;
    const std::string name = Name(pod);
    const std::string body = serve_->kube->Post(
        "/bind", EncodeExtenderBindingArgs({name, "ml", "uid-" + name, names_[node]}), &ok);
    Result<ExtenderBindingResult> bound = DecodeExtenderBindingResult(body);
    EXPECT_TRUE(ok && bound.ok() && bound->error.empty()) << name << ": " << body;
    // What the API server recorded.
    const Json stored = fake_->GetPod("ml", name);
    EXPECT_EQ(stored["spec"]["nodeName"], names_[node]) << name;
    const Json& annotations = stored["metadata"]["annotations"];
    const std::string key(kGpuIndicesAnnotation);
    if (!annotations.contains(key)) return 0;  // a CPU-only pod
    Result<GpuSet> gpus =
        ParseGpuIndices(annotations[key].get<std::string>(), nodes_[node].gpu_count);
    EXPECT_TRUE(gpus.ok()) << stored.dump();
    ++binds_;
    return gpus.ok() ? *gpus : 0;
  }

  void Deleted(int pod) override {
    const std::string name = Name(pod);
    fake_->DeletePod("ml", name);
    EXPECT_TRUE(WaitFor([&] { return serve_->Forgot("uid-" + name); }))
        << "the extender never saw the deletion of " << name;
  }

  std::vector<PlacerVictims> Victims(int pod, const std::vector<int>& nodes) override {
    std::vector<std::string> candidates;
    for (int n : nodes) candidates.push_back(names_[n]);
    Result<ExtenderPreemptionResult> answer =
        PreemptWithoutProposals(*serve_->kube, fake_->GetPod("ml", Name(pod)), candidates);
    EXPECT_TRUE(answer.ok()) << answer.error().message;
    std::vector<PlacerVictims> out;
    last_victims_.clear();
    if (!answer.ok()) return out;
    ++preempt_calls_;
    for (const auto& [node, victims] : answer->node_name_to_meta_victims) {
      PlacerVictims v;
      v.node = Index(node);
      v.pdb_violations = victims.num_pdb_violations;
      for (const std::string& uid : victims.pod_uids) v.pods.push_back(by_uid_.at(uid));
      last_victims_[v.node] = v.pods;
      out.push_back(std::move(v));
    }
    return out;
  }

  int binds() const { return binds_; }
  int preempt_calls() const { return preempt_calls_; }
  int nominations() const { return nominations_; }

 private:
  std::string Name(int pod) const {
    return timeline_.pods[pod].spec.name + "-" + std::to_string(incarnation_[pod]);
  }
  int Index(const std::string& node) const {
    return static_cast<int>(std::find(names_.begin(), names_.end(), node) - names_.begin());
  }
  Json Args(int pod, const std::vector<std::string>& names) const {
    return {{"Pod", fake_->GetPod("ml", Name(pod))}, {"Nodes", nullptr}, {"NodeNames", names}};
  }
  ExtenderFilterResult Filter(int pod, const std::vector<std::string>& names) {
    bool ok = false;
    const std::string body = serve_->kube->Post("/filter", Args(pod, names).dump(), &ok);
    Result<ExtenderFilterResult> filtered = DecodeExtenderFilterResult(body);
    EXPECT_TRUE(ok && filtered.ok() && filtered->error.empty()) << body;
    return filtered.ok() ? *filtered : ExtenderFilterResult{};
  }

  FakeApiServer* fake_;
  Serve* serve_;
  const std::vector<NodeSpec>& nodes_;
  const Timeline& timeline_;
  const QosClasses& classes_;
  std::vector<std::string> names_;
  std::vector<int> incarnation_;
  std::map<std::string, int> by_uid_;
  std::map<int, std::vector<int>> last_victims_;  // the last /preempt answer, by node
  int binds_ = 0;
  int preempt_calls_ = 0;
  int nominations_ = 0;
};

std::string Describe(const ReplayEvent& e) {
  static const char* kKinds[] = {"start", "finish", "preempt", "nominate", "reject"};
  return std::to_string(e.t_s) + " " + kKinds[static_cast<int>(e.kind)] + " pod " +
         std::to_string(e.pod) + " node " + std::to_string(e.node) + " by " + std::to_string(e.by) +
         " gpus " + std::to_string(e.gpus);
}

// What a served run shows besides its events.
struct Served {
  ReplayResult result;
  int preempt_calls = 0;
  int binds = 0;
  int nominations = 0;
  int64_t headroom_rejections = 0;  ///< tessera_filter_rejections_total{reason="headroom"}
};

// The metric's value in the exposition `text` (0 when absent).
double MetricValue(const std::string& text, const std::string& series) {
  const size_t at = text.find("\n" + series + " ");
  return at == std::string::npos ? 0 : std::stod(text.substr(at + series.size() + 2));
}

// Runs `timeline` in-process and against `tessera serve` with the same policy and headroom,
// and checks that every event agrees; returns the served run.
// With `marks` off, the served run gets no nominatedNodeName or DisruptionTarget, and only the
// first event that differs is looked for (in `first_difference`; the event count if none).
Served ExpectSameEvents(const std::string& policy, const HeadroomOptions& headroom,
                        const std::vector<NodeSpec>& nodes, const Timeline& timeline,
                        bool marks = true, size_t* first_difference = nullptr) {
  ReplayOptions options;
  options.qos = Classes();
  options.preemption = true;
  options.seed = kSeed;
  options.record_events = true;
  options.samples = 0;
  options.horizon_s = timeline.pods.back().arrival_s + 1800;
  options.headroom = headroom;
  options.headroom.min_priority = 1000;

  // In-process: the engine as the extender assembles it (M of no bound pods: one whole GPU).
  std::unique_ptr<Engine> engine = std::move(Engine::Create(nodes, {}, policy, kSeed).value());
  const ReplayResult local =
      RunReplay(nodes, timeline, engine->policy(), engine->workload(), options);

  // Against the server.
  Served out;
  FakeApiServer fake;
  EXPECT_TRUE(fake.Start());
  for (const NodeSpec& s : nodes) fake.AddNode(NodeObjectOf(s));
  ExtenderOptions eo;
  eo.classes = options.qos;
  eo.headroom = headroom;
  Serve serve(fake, policy, kSeed, eo);
  EXPECT_TRUE(serve.ready);
  if (!serve.ready) return out;
  ServePlacer placer(&fake, &serve, nodes, timeline, options.qos);
  placer.write_marks = marks;
  options.placer = &placer;
  out.result = RunReplay(nodes, timeline, engine->policy(), engine->workload(), options);
  const ReplayResult& remote = out.result;
  out.preempt_calls = placer.preempt_calls();
  out.binds = placer.binds();
  out.nominations = placer.nominations();
  out.headroom_rejections = static_cast<int64_t>(MetricValue(
      serve.extender->MetricsText(), "tessera_filter_rejections_total{reason=\"headroom\"}"));

  // Every start (time, pod, node, GPUs), finish, nomination and victim, in order.
  if (::testing::Test::HasFailure()) return out;
  const size_t n = std::min(local.events.size(), remote.events.size());
  if (first_difference != nullptr) {
    size_t i = 0;
    while (i < n && local.events[i].t_s == remote.events[i].t_s &&
           local.events[i].kind == remote.events[i].kind &&
           local.events[i].pod == remote.events[i].pod &&
           local.events[i].node == remote.events[i].node &&
           local.events[i].gpus == remote.events[i].gpus) {
      ++i;
    }
    *first_difference = i;
    return out;
  }
  for (size_t i = 0; i < n; ++i) {
    const ReplayEvent& a = local.events[i];
    const ReplayEvent& b = remote.events[i];
    EXPECT_TRUE(a.t_s == b.t_s && a.kind == b.kind && a.pod == b.pod && a.node == b.node &&
                a.by == b.by && a.gpus == b.gpus)
        << "event " << i << ": in-process " << Describe(a) << ", served " << Describe(b);
    if (::testing::Test::HasFailure()) return out;
  }
  EXPECT_EQ(local.events.size(), remote.events.size());
  EXPECT_EQ(local.pods.size(), remote.pods.size());
  if (::testing::Test::HasFailure()) return out;
  for (size_t i = 0; i < local.pods.size(); ++i) {
    EXPECT_EQ(local.pods[i].status, remote.pods[i].status) << "pod " << i;
    EXPECT_EQ(local.pods[i].wait_s, remote.pods[i].wait_s) << "pod " << i;
    EXPECT_EQ(local.pods[i].times_preempted, remote.pods[i].times_preempted) << "pod " << i;
  }
  for (size_t c = 0; c < local.classes.size(); ++c) {
    EXPECT_EQ(local.classes[c].wait_p99_s, remote.classes[c].wait_p99_s) << c;
    EXPECT_EQ(local.classes[c].preempted, remote.classes[c].preempted) << c;
    EXPECT_EQ(local.classes[c].gpu_hours, remote.classes[c].gpu_hours) << c;
  }

  // The API server holds what the replay says runs at the horizon, where it says.
  std::map<int, GpuSet> running;  // pod -> GPUs of its last start
  std::map<int, int> node_of;
  for (const ReplayEvent& e : remote.events) {
    if (e.kind == ReplayEvent::Kind::kStart) running[e.pod] = e.gpus, node_of[e.pod] = e.node;
  }
  int still_running = 0;
  for (size_t i = 0; i < remote.pods.size(); ++i) {
    if (remote.pods[i].status != PodOutcome::Status::kRunning) continue;
    ++still_running;
    const std::string name =
        timeline.pods[i].spec.name + "-" + std::to_string(remote.pods[i].times_preempted);
    const Json stored = fake.GetPod("ml", name);
    EXPECT_EQ(stored["spec"]["nodeName"], nodes[node_of[static_cast<int>(i)]].name) << name;
    if (running[static_cast<int>(i)] != 0) {
      EXPECT_EQ(stored["metadata"]["annotations"][std::string(kGpuIndicesAnnotation)],
                FormatGpuIndices(running[static_cast<int>(i)]))
          << name;
    }
  }
  EXPECT_GT(still_running, 0);
  return out;
}

// The trace does what it claims: many placements, preemptions, restarts of victims.
void ExpectBusy(const Served& s, const std::string& label) {
  const ReplayResult& r = s.result;
  int starts = 0, restarts = 0;
  for (const ReplayEvent& e : r.events) {
    starts += e.kind == ReplayEvent::Kind::kStart;
    restarts += e.kind == ReplayEvent::Kind::kStart && r.pods[e.pod].times_preempted > 0;
  }
  EXPECT_GT(starts, 100);
  EXPECT_GE(r.preemptions, 5);
  EXPECT_GT(restarts, 0);
  EXPECT_GT(s.preempt_calls, 0);
  std::cout << "[serve replay " << label << "] events " << r.events.size() << ", starts " << starts
            << ", preemptions " << r.preemptions << ", restarts " << restarts << ", preempt calls "
            << s.preempt_calls << ", GPU binds " << s.binds << ", nominations " << s.nominations
            << ", headroom refusals " << s.headroom_rejections << "\n";
}

class ServeReplay : public ::testing::TestWithParam<std::string> {};

TEST_P(ServeReplay, SameStartsNodesGpusAndVictimsAsTheInProcessReplay) {
  const Served s = ExpectSameEvents(GetParam(), HeadroomOptions{}, MakeNodes(), MakeTimeline(160));
  ExpectBusy(s, GetParam());
}

// The same with LS headroom kept, static and sized from the LS backlog (the `tessera` replay
// policy's mode, on a shorter window): Burstable and BE pods are refused where they would eat
// it, held shares go on used GPUs, Burstable preempts instead of waiting and takes its victims'
// GPUs on its nominated node, the backlog grows and shrinks on the same virtual clock.
TEST_P(ServeReplay, SameEventsWithHeadroomKept) {
  const std::vector<NodeSpec> nodes = MakeNodes();
  const Timeline timeline = MakeTimeline(160);
  HeadroomOptions fixed;
  fixed.mode = HeadroomOptions::Mode::kStatic;
  fixed.gpus = 6;
  HeadroomOptions backlog;
  backlog.mode = HeadroomOptions::Mode::kBacklog;
  backlog.window_s = 900;
  backlog.bucket_s = 60;
  backlog.factor = 2.0;
  for (const auto& [label, h] : {std::pair{"static", fixed}, std::pair{"backlog", backlog}}) {
    SCOPED_TRACE(label);
    const Served s = ExpectSameEvents(GetParam(), h, nodes, timeline);
    ExpectBusy(s, GetParam() + " headroom " + label);
    EXPECT_GT(s.headroom_rejections, 0);  // the headroom held pods back
    EXPECT_GT(s.nominations, 0);
  }
}

// With floors per GPU model besides H (A10 and T4 GPUs kept, V100M32 none): a held pod the
// policy would put on a model's node that would take that model's floor goes to the best node
// that keeps every floor, in-process as in serve's filter, prioritize and bind.
TEST(ServeReplayHeadroom, SameEventsWithModelFloors) {
  HeadroomOptions h;
  h.mode = HeadroomOptions::Mode::kStatic;
  h.gpus = 2;
  h.model_gpus = {{"A10", 6}, {"T4", 3}};
  const Served s = ExpectSameEvents("tessera", h, MakeNodes(), MakeTimeline(160));
  ExpectBusy(s, "tessera model floors");
  EXPECT_GT(s.headroom_rejections, 0);  // the floors held pods back
}

// LS limited to A10 nodes: the headroom counts only idle A10 GPUs once a bucket boundary has
// seen such LS pods alone, and a held pod on another model's node is not held there; the set
// of models changes at bucket boundaries in both front doors alike.
TEST(ServeReplayHeadroom, SameEventsWhenLsMayUseOneModel) {
  Timeline timeline = MakeTimeline(160);
  int limited = 0;
  for (TimedPod& tp : timeline.pods) {
    if (tp.spec.qos == "LS") {
      tp.spec.gpu_spec = "A10";
      ++limited;
    }
  }
  ASSERT_GT(limited, 20);
  HeadroomOptions h = TesseraReplayPolicy().headroom;
  h.window_s = 600;
  h.bucket_s = 60;
  const Served s = ExpectSameEvents("tessera", h, MakeNodes(), timeline);
  ExpectBusy(s, "tessera, LS on A10 only");
  EXPECT_GT(s.headroom_rejections, 0);
}

// The comparison can fail: without kube-scheduler's marks the server checks a preemptor
// against the headroom on the node its victims freed, and counts their departures as refills,
// and the runs part.
TEST(ServeReplayHeadroom, WithoutNominationsTheServerDiffers) {
  const std::vector<NodeSpec> nodes = MakeNodes();
  const Timeline timeline = MakeTimeline(160);
  HeadroomOptions fixed;
  fixed.mode = HeadroomOptions::Mode::kStatic;
  fixed.gpus = 6;
  size_t first = 0;
  const Served s = ExpectSameEvents("tessera", fixed, nodes, timeline, false, &first);
  EXPECT_LT(first, s.result.events.size());
  std::cout << "[serve replay without marks] first differing event " << first << " of "
            << s.result.events.size() << "\n";
}

// The `tessera` replay policy, with bench/serve_replay.sh's PLACEMENT, FACTOR and WINDOW_S
// (TESSERA_SERVE_REPLAY_PLACEMENT, _FACTOR, _WINDOW_S) in place of its placement policy,
// headroom factor and window where they are set.
ReplayPolicy AtScalePolicy() {
  ReplayPolicy p = TesseraReplayPolicy();
  if (const char* v = std::getenv("TESSERA_SERVE_REPLAY_PLACEMENT"); v != nullptr && *v != 0) {
    p.placement = v;
  }
  if (const char* v = std::getenv("TESSERA_SERVE_REPLAY_FACTOR"); v != nullptr && *v != 0) {
    p.headroom.factor = std::strtod(v, nullptr);
  }
  if (const char* v = std::getenv("TESSERA_SERVE_REPLAY_WINDOW_S"); v != nullptr && *v != 0) {
    p.headroom.window_s = std::strtod(v, nullptr);
  }
  std::cout << "tessera: placement " << p.placement << ", headroom factor " << p.headroom.factor
            << ", window " << p.headroom.window_s << " s\n";
  return p;
}

// At scale (bench/serve_replay.sh runs these; skipped unless TESSERA_SERVE_REPLAY_SCALE is
// set, since each takes minutes): the `tessera` replay policy (tessera placement, backlog
// headroom factor 2.5, window 1.5 h; AtScalePolicy) in-process and against the server on the
// default trace at the contention level of docs/REPLAY.md and on the notebooks scenario, beside
// k8s-default (priority + preemption) in-process. Checked: the two tessera runs agree event for
// event; each gives BE at least 90 % of k8s-default's GPU-hours, serves every class with an SLO at
// least as well, and keeps the LS p99 wait within its 1 s SLO. The table is printed.
// `seed` is the replay's and the server's (tie order, the random policy): with the draw's seed
// the in-process run is `tessera replay --seed SEED`'s.
void CompareAtScale(std::vector<NodeSpec> nodes, Timeline timeline, const QosClasses& classes,
                    double horizon_s, uint64_t seed = kSeed) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "node-%04zu", i);  // name order = index
    nodes[i].name = name;
  }
  for (size_t i = 0; i < timeline.pods.size(); ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "p-%05zu", i);
    timeline.pods[i].spec.name = name;
  }
  const ReplayPolicy tessera = AtScalePolicy();
  ReplayOptions options;
  options.qos = classes;
  options.seed = seed;
  options.samples = 0;
  options.horizon_s = horizon_s;
  options.record_events = true;
  options.preemption = true;
  options.headroom = tessera.headroom;
  // The target workload M of the trace's pods, in-process as `tessera replay` builds it and
  // for the server as `tessera serve --workload` gives it.
  std::vector<PodSpec> mix;
  for (const TimedPod& p : timeline.pods) mix.push_back(p.spec);
  std::unique_ptr<Engine> engine =
      std::move(Engine::Create(nodes, mix, tessera.placement, seed).value());
  ReplayResult local = RunReplay(nodes, timeline, engine->policy(), engine->workload(), options);
  local.policy = "tessera (replay)";

  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  for (const NodeSpec& s : nodes) fake.AddNode(NodeObjectOf(s));
  ExtenderOptions eo;
  eo.classes = classes;
  eo.headroom = tessera.headroom;
  eo.workload = mix;
  Serve serve(fake, tessera.placement, seed, eo);
  ASSERT_TRUE(serve.ready);
  ServePlacer placer(&fake, &serve, nodes, timeline, classes);
  ReplayOptions served_options = options;
  served_options.placer = &placer;
  ReplayResult remote =
      RunReplay(nodes, timeline, engine->policy(), engine->workload(), served_options);
  remote.policy = "tessera (serve)";

  std::unique_ptr<Engine> k8s_engine =
      std::move(Engine::Create(nodes, {}, "k8s-default", seed).value());
  ReplayOptions k8s_options = options;
  k8s_options.headroom = HeadroomOptions{};
  ReplayResult k8s =
      RunReplay(nodes, timeline, k8s_engine->policy(), k8s_engine->workload(), k8s_options);
  k8s.policy = "k8s-default (replay)";
  std::cout << ReplayTable({local, remote, k8s});

  size_t same = 0;
  const size_t n = std::min(local.events.size(), remote.events.size());
  while (same < n && local.events[same].t_s == remote.events[same].t_s &&
         local.events[same].kind == remote.events[same].kind &&
         local.events[same].pod == remote.events[same].pod &&
         local.events[same].node == remote.events[same].node &&
         local.events[same].gpus == remote.events[same].gpus) {
    ++same;
  }
  std::cout << "events: replay " << local.events.size() << ", serve " << remote.events.size()
            << ", the same up to " << same << "; preempt calls " << placer.preempt_calls()
            << ", nominations " << placer.nominations() << "\n";
  EXPECT_EQ(same, local.events.size());
  EXPECT_EQ(local.events.size(), remote.events.size());
  for (const ReplayResult* r : {&local, &remote}) {
    SCOPED_TRACE(r->policy);
    double be = 0, be_k8s = 0;
    for (size_t c = 0; c < r->classes.size(); ++c) {
      const ClassStats& t = r->classes[c];
      const ClassStats& k = k8s.classes[c];
      EXPECT_EQ(t.wait_p99_s, local.classes[c].wait_p99_s) << t.name;
      EXPECT_EQ(t.preempted, local.classes[c].preempted) << t.name;
      if (t.slo_wait_s >= 0) {
        EXPECT_GE(t.slo_pct, k.slo_pct) << t.name;
      }
      if (t.name == "LS") {
        EXPECT_LE(t.wait_p99_s, t.slo_wait_s);
      }
      if (t.name == "BE") be = t.gpu_hours, be_k8s = k.gpu_hours;
    }
    EXPECT_GE(be, 0.9 * be_k8s);
    std::cout << r->policy << ": BE GPU-h " << be << " = " << 100 * be / be_k8s
              << " % of k8s-default's\n";
  }
}

bool AtScale() { return std::getenv("TESSERA_SERVE_REPLAY_SCALE") != nullptr; }

TEST(ServeReplayAtScale, DefaultTraceAtTheContentionLevel) {
  const std::string dir = TESSERA_DATA_DIR;
  if (!AtScale()) GTEST_SKIP() << "set TESSERA_SERVE_REPLAY_SCALE=1 (bench/serve_replay.sh)";
  if (!std::filesystem::exists(dir + "/openb_pod_list_default.csv")) {
    GTEST_SKIP() << "trace not found at " << dir;
  }
  Result<std::vector<NodeSpec>> nodes = ReadNodeCsv(
      ReadFile(dir + "/openb_node_list_gpu_node.csv").value(), "openb_node_list_gpu_node.csv");
  const std::string text = ReadFile(dir + "/openb_pod_list_default.csv").value();
  Result<std::vector<PodSpec>> pods = ReadPodCsv(text, "openb_pod_list_default.csv");
  ASSERT_TRUE(nodes.ok() && pods.ok());
  // docs/REPLAY.md's contention level: arrivals compressed 50x, 84 nodes drawn with a seed.
  const char* seed = std::getenv("TESSERA_SERVE_REPLAY_SEED");
  const uint64_t draw = seed != nullptr ? std::strtoull(seed, nullptr, 10) : 42;
  std::cout << "default trace x50, 84 nodes, draw " << draw << "\n";
  const Timeline timeline =
      TimelineFromTrace(*pods, "openb_pod_list_default.csv", CsvDataLines(text), 50);
  CompareAtScale(SubsetNodes(*nodes, 84, draw), timeline, DefaultQosClasses(),
                 timeline.pods.back().arrival_s, draw);
}

TEST(ServeReplayAtScale, NotebooksScenario) {
  if (!AtScale()) GTEST_SKIP() << "set TESSERA_SERVE_REPLAY_SCALE=1 (bench/serve_replay.sh)";
  const std::string file =
      std::string(TESSERA_SOURCE_DIR) + "/tests/replay/testdata/notebooks.yaml";
  Result<Scenario> s = ParseScenario(ReadFile(file).value(), file);
  ASSERT_TRUE(s.ok()) << s.error().message;
  CompareAtScale(ScenarioNodes(*s), ScenarioTimeline(*s, 1.0), DefaultQosClasses(),
                 s->horizon_h * 3600);
}

INSTANTIATE_TEST_SUITE_P(Policies, ServeReplay, ::testing::Values("tessera", "fgd", "k8s-default"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace tessera::k8s
