// `tessera record` (src/k8s/record): the journal and the lists it folds into, a cluster history
// recorded through watch drops, 410 Gone, bookmarks and restarts of the recorder, and the
// failures it must not hide.
//
// The history is a replay's: RunReplay places a timeline on a small cluster in-process; its
// arrivals, starts and finishes drive the fake API server (a Pod object created at its arrival
// with that creationTimestamp, bound with a PodScheduled condition at its start, deleted at its
// finish), with the recorder's clock (a ManualClock) at the same instant. The recorded lists,
// read back by the trace readers and replayed, must give the very same run.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "k8s/api/cluster_cache.h"
#include "k8s/api/kube_api.h"
#include "k8s/api/log.h"
#include "k8s/fake_apiserver.h"
#include "k8s/kube_scheduler.h"
#include "k8s/live.h"
#include "k8s/record/record_log.h"
#include "k8s/record/record_run.h"
#include "k8s/record/recorder.h"
#include "k8s/serve/serve_config.h"
#include "model/gpu_catalog.h"
#include "model/topology_text.h"
#include "plan/demand.h"
#include "replay/replay.h"
#include "replay/timeline.h"
#include "sched/engine.h"
#include "trace/csv_reader.h"
#include "util/file.h"
#include "util/rng.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;
using testing::FakeApiServer;
using testing::NodeObjectOf;
using testing::PodObjectOf;
using testing::RecordingSleeper;
using testing::WaitFor;

constexpr uint64_t kSeed = 20261203;
constexpr int64_t kBase = 1800000000;  // Unix seconds of replay time 0

std::string TempDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "tessera_record_" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

std::string Time(int64_t replay_seconds) {
  return Rfc3339Millis(static_cast<double>(kBase + replay_seconds));
}

// --- The journal and the lists -------------------------------------------------------------

RecordedPod SomePod(const std::string& uid, const std::string& name, int64_t created) {
  RecordedPod p;
  p.uid = uid;
  p.name = name;
  p.cpu_milli = 2000;
  p.memory_mib = 4096;
  p.num_gpu = 1;
  p.gpu_milli = 500;
  p.qos = "LS";
  p.phase = "Running";
  p.creation_time = created;
  p.scheduled_time = created + 5;
  return p;
}

TEST(RecordJournal, LastLineWinsTornTailDroppedListsReadByTheTraceReaders) {
  RecordedPod a = SomePod("u1", "ml/a", 100);
  RecordedPod a2 = a;
  a2.deletion_time = 150;
  a2.gone = true;
  RecordedPod b = SomePod("u2", "ml/a", 120);  // re-created under the same name
  b.gpu_spec = "A10|T4";
  RecordedPod pending = SomePod("u3", "ml/b,c", 130);
  pending.scheduled_time = -1;
  pending.phase = "Pending";
  RecordedNode n;
  n.sn = "n1";
  n.cpu_milli = 64000;
  n.memory_mib = 262144;
  n.gpu = 8;
  n.model = "A10";
  n.gpu_topology = "nvlink=0-3/4-7;numa=0-3/4-7;kubelet=restricted";
  n.first_seen = 90;
  const std::string start =
      R"({"kind":"start","format":"tessera-record/1","at":90,"server":"s","resumed":false})";
  const std::string text = start + "\n" + NodeLine(n) + "\n" + PodLine(a) + "\n" + PodLine(b) +
                           "\n" + PodLine(a2) + "\n" + PodLine(pending) + "\n" +
                           R"({"kind":"pod","uid":"u4","na)";
  Result<JournalState> s = ParseJournal(text, "j");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_TRUE(s->torn_tail);
  EXPECT_EQ(s->valid_bytes, text.rfind('\n') + 1);
  ASSERT_EQ(s->pods.size(), 3u);
  EXPECT_EQ(s->pods.at("u1"), a2);
  EXPECT_EQ(s->pods.at("u2"), b);
  EXPECT_EQ(s->nodes.at("n1"), n);
  EXPECT_EQ(s->runs, 1);
  EXPECT_FALSE(s->ended);

  const std::string pods_csv = PodListCsv(*s, 200);
  Result<std::vector<PodSpec>> pods = ReadPodCsv(pods_csv, "pods.csv");
  ASSERT_TRUE(pods.ok()) << pods.error().message << "\n" << pods_csv;
  ASSERT_EQ(pods->size(), 3u);
  EXPECT_EQ((*pods)[0].name, "ml/a");
  EXPECT_EQ((*pods)[0].deletion_time, 150);
  EXPECT_EQ((*pods)[1].name, "ml/a~u2");  // unique names for the reader
  EXPECT_EQ((*pods)[1].gpu_spec, "A10|T4");
  EXPECT_EQ((*pods)[1].deletion_time, 200);  // still running: closed at the end
  EXPECT_EQ((*pods)[1].scheduled_time, 125);
  EXPECT_EQ((*pods)[2].name, "ml/b,c");
  EXPECT_EQ((*pods)[2].scheduled_time, -1);  // pending: no times to replay
  EXPECT_EQ((*pods)[2].deletion_time, -1);
  EXPECT_EQ((*pods)[1].gpu_milli, 500);
  EXPECT_EQ((*pods)[1].qos, "LS");
  Result<std::vector<NodeSpec>> nodes = ReadNodeCsv(NodeListCsv(*s), "nodes.csv");
  ASSERT_TRUE(nodes.ok()) << nodes.error().message;
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ((*nodes)[0].gpu_count, 8);
  EXPECT_EQ((*nodes)[0].gpu_model, "A10");
  // The topology survives the journal and the node list (gpu_topology column).
  ASSERT_NE((*nodes)[0].topology, nullptr) << NodeListCsv(*s);
  EXPECT_EQ(FormatCompactTopology(*(*nodes)[0].topology), n.gpu_topology);
  // A journal line without the field (an older recording) reads as no topology.
  RecordedNode plain = n;
  plain.gpu_topology.clear();
  EXPECT_EQ(NodeLine(plain).find("gpu_topology"), std::string::npos);
  Result<JournalState> old = ParseJournal(start + "\n" + NodeLine(plain) + "\n", "j");
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_EQ(old->nodes.at("n1").gpu_topology, "");
  EXPECT_EQ(NodeListCsv(*old).substr(0, NodeListCsv(*old).find('\n')),
            "sn,cpu_milli,memory_mib,gpu,model");

  // A damaged line in the middle is an error naming file:line, not a silent loss.
  Result<JournalState> bad = ParseJournal(start + "\n{\"kind\":\"pod\",\"uid\":3}\n", "DIR/j");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "DIR/j:2: uid: expected string, got number")
      << bad.error().message;
  Result<JournalState> foreign = ParseJournal("name,cpu\n", "x.csv");
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.error().message.find("x.csv:1: not a journal line"), std::string::npos)
      << foreign.error().message;
}

// --- What one pod object becomes ----------------------------------------------------------

Pod Decoded(const Json& j) {
  Result<Pod> p = DecodePod(j, "Pod");
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
  return p.ok() ? *p : Pod{};
}

// A journal record outside what the openb lists can hold is damage, named where it is: the
// folded lists would otherwise be refused by the trace readers (or, for numbers beyond the
// field, silently wrapped: num_gpu 4294967298 was read as 2).
TEST(RecordJournal, RecordsOutsideTheOpenbLimitsAreErrorsNamingTheLine) {
  const std::string start =
      R"({"kind":"start","format":"tessera-record/1","at":90,"server":"s","resumed":false})";
  const std::string pod =
      R"({"kind":"pod","uid":"u1","name":"ml/p","cpu_milli":1000,"memory_mib":64,"num_gpu":NUM,)"
      R"("gpu_milli":MILLI,"gpu_spec":"","qos":"BE","phase":"Running","node":"n1",)"
      R"("creation_time":95,"scheduled_time":96,"deletion_time":-1})";
  // The journal of `line` with each placeholder replaced.
  const auto journal = [&](std::string line,
                           const std::vector<std::pair<std::string, std::string>>& values) {
    for (const auto& [placeholder, value] : values) {
      line.replace(line.find(placeholder), placeholder.size(), value);
    }
    return start + "\n" + line + "\n";
  };
  const auto with = [&](const std::string& num, const std::string& milli) {
    return journal(pod, {{"NUM", num}, {"MILLI", milli}});
  };
  EXPECT_EQ(ParseJournal(with("4294967298", "1000"), "j").error().message,
            "j:2: num_gpu: 4294967298 out of range [0, 16]");
  EXPECT_EQ(ParseJournal(with("2", "0"), "j").error().message,
            "j:2: gpu_milli: is 0, but num_gpu is 2 (need 1..1000)");
  EXPECT_EQ(ParseJournal(with("2", "500"), "j").error().message,
            "j:2: gpu_milli: must be 1000 for a multi-GPU pod (num_gpu 2), got 500");
  EXPECT_EQ(ParseJournal(with("1", "1001"), "j").error().message,
            "j:2: gpu_milli: 1001 out of range [0, 1000]");
  ASSERT_TRUE(ParseJournal(with("1", "250"), "j").ok());
  const std::string node =
      R"({"kind":"node","sn":"n1","cpu_milli":1000,"memory_mib":64,"gpu":GPUS,"model":"A10",)"
      R"("gpu_memory_mib":0,"gpu_topology":"TOPO","first_seen":90,"deleted":-1})";
  const auto node_with = [&](const std::string& gpus, const std::string& topology) {
    return journal(node, {{"GPUS", gpus}, {"TOPO", topology}});
  };
  EXPECT_EQ(ParseJournal(node_with("17", ""), "j").error().message,
            "j:2: gpu: 17 out of range [0, 16]");
  EXPECT_EQ(ParseJournal(node_with("0", "nvlink=0-1"), "j").error().message,
            "j:2: gpu_topology: set, but the node has no GPUs");
  EXPECT_FALSE(ParseJournal(node_with("2", "nvlink=0-7"), "j").ok());
  ASSERT_TRUE(ParseJournal(node_with("2", "nvlink=0-1"), "j").ok());
}

// A GPU node whose model is not known (allocatable nvidia.com/gpu without a model label or a
// HAMi register) is recorded with an empty model; the node list names it "unknown", so that
// the trace readers read the list (they refuse a GPU node without a model).
TEST(RecordJournal, AGpuNodeOfUnknownModelIsListedAsUnknown) {
  const std::string journal =
      R"({"kind":"start","format":"tessera-record/1","at":90,"server":"s","resumed":false})"
      "\n"
      R"({"kind":"node","sn":"n1","cpu_milli":8000,"memory_mib":64,"gpu":4,"model":"",)"
      R"("gpu_memory_mib":0,"first_seen":90,"deleted":-1})"
      "\n";
  Result<JournalState> state = ParseJournal(journal, "j");
  ASSERT_TRUE(state.ok()) << state.error().message;
  const std::string csv = NodeListCsv(*state);
  EXPECT_EQ(csv, "sn,cpu_milli,memory_mib,gpu,model\nn1,8000,64,4,unknown\n");
  Result<std::vector<NodeSpec>> nodes = ReadNodeCsv(csv, "nodes.csv");
  ASSERT_TRUE(nodes.ok()) << nodes.error().message;
  EXPECT_EQ((*nodes)[0].gpu_count, 4);
}

TEST(Recorder, ScheduledTimestampIsTheTruePodScheduledConditionAndBadShapesAreIgnored) {
  Json pod = testing::PodObject("a", testing::Shape(1));
  pod["status"]["conditions"] = {
      "not an object",
      {{"type", "PodScheduled"}, {"status", "False"}, {"lastTransitionTime", Time(1)}},
      {{"type", "Ready"}, {"status", "True"}, {"lastTransitionTime", Time(2)}},
      {{"type", "PodScheduled"}, {"status", "True"}, {"lastTransitionTime", 7}},
      {{"type", "PodScheduled"}, {"status", "True"}, {"lastTransitionTime", Time(3)}}};
  EXPECT_EQ(Decoded(pod).scheduled_timestamp, Time(3));
  pod["status"]["conditions"] = "not a list";
  EXPECT_EQ(Decoded(pod).scheduled_timestamp, "");
  pod["status"]["conditions"] = {
      {{"type", "PodScheduled"}, {"status", "False"}, {"lastTransitionTime", Time(1)}}};
  EXPECT_EQ(Decoded(pod).scheduled_timestamp, "");
}

// What a replay or a plan needs from a recording of a cluster that GPU feature discovery
// labels: the models by the engine's names (so a catalog names them as the trace does and
// their GPU memory is known), the pods' GPU memory, and the recorded window rather than the
// age of the oldest pod (a pod created 950 days before a 5-minute recording arrives at its
// start).
TEST(Recorder, ListsHoldEngineModelsGpuMemoryAndTheRecordedWindow) {
  const std::string dir = TempDir("window");
  ManualClock clock(static_cast<double>(kBase + 100));
  RecorderOptions ro;
  ro.dir = dir;
  ro.clock = &clock;
  std::unique_ptr<Recorder> r = std::move(Recorder::Open(ro).value());
  const auto gfd_node = [](const std::string& name, const std::string& product,
                           const std::string& memory) {
    Json n = testing::NodeObject(name, 2, "16", "nvidia.com/gpu");
    n["metadata"]["labels"] = {{"nvidia.com/gpu.product", product},
                               {"nvidia.com/gpu.memory", memory}};
    Result<Node> node = DecodeNode(n, "Node");
    EXPECT_TRUE(node.ok()) << (node.ok() ? "" : node.error().message);
    return node.ok() ? *node : Node{};
  };
  ASSERT_TRUE(r->UpsertNode(gfd_node("t4", "Tesla-T4", "15360")).ok());
  ASSERT_TRUE(r->UpsertNode(gfd_node("a100", "NVIDIA-A100-SXM4-80GB", "81920")).ok());

  // Running since long before the recording: half a GPU with 8 GiB of its memory, on the
  // models the pod names as the device plugin does.
  constexpr int64_t kDays950 = 950 * 86400;
  Json old = testing::PodObject("old", testing::Shape(1, 500, "t4"));
  old["metadata"]["creationTimestamp"] = Time(-kDays950);
  old["metadata"]["annotations"]["tessera.io/gpu-model"] = "Tesla-T4|NVIDIA-A10";
  old["spec"]["containers"][0]["resources"]["limits"]["tessera.io/gpu-memory"] = "8Gi";
  old["status"]["conditions"] = {
      {{"type", "PodScheduled"}, {"status", "True"}, {"lastTransitionTime", Time(5 - kDays950)}}};
  ASSERT_TRUE(r->UpsertPod(Decoded(old)).ok());
  // Created during the recording: HAMi's share of half the GPU's memory.
  clock.Set(static_cast<double>(kBase + 150));
  Json hami = testing::PodObject("hami", testing::Shape(0, 1000, "a100"));
  hami["metadata"]["creationTimestamp"] = Time(150);
  hami["spec"]["containers"][0]["resources"]["limits"] = {{"cpu", "1"},
                                                          {"memory", "1Gi"},
                                                          {"nvidia.com/gpu", "1"},
                                                          {"nvidia.com/gpumem-percentage", "50"}};
  ASSERT_TRUE(r->UpsertPod(Decoded(hami)).ok());
  // The journal keeps what the objects say.
  EXPECT_EQ(r->pod("uid-old")->creation_time, kBase - kDays950);
  EXPECT_EQ(r->pod("uid-old")->gpu_spec, "T4|A10");
  EXPECT_EQ(r->pod("uid-old")->gpu_memory_mib, 8192);
  EXPECT_EQ(r->pod("uid-hami")->gpu_memory_percent, 50);
  ASSERT_TRUE(r->Finish(kBase + 400).ok());

  Result<std::vector<NodeSpec>> nodes =
      ReadNodeCsv(ReadFile(dir + "/openb_node_list.csv").value(), "nodes");
  ASSERT_TRUE(nodes.ok()) << nodes.error().message;
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[0].name, "a100");  // by name
  EXPECT_EQ((*nodes)[0].gpu_model, "A100-SXM4-80GB");
  EXPECT_EQ((*nodes)[0].gpu_memory_mib, 81920);  // no name gives it: the gpu_memory_mib column
  EXPECT_EQ((*nodes)[1].gpu_model, "T4");
  EXPECT_EQ((*nodes)[1].gpu_memory_mib, 15360);
  const std::string pods_csv = ReadFile(dir + "/openb_pod_list.csv").value();
  Result<std::vector<PodSpec>> pods = ReadPodCsv(pods_csv, "pods");
  ASSERT_TRUE(pods.ok()) << pods.error().message;
  ASSERT_EQ(pods->size(), 2u) << pods_csv;
  const PodSpec& o = (*pods)[0];
  EXPECT_EQ(o.name, "ml/old");
  EXPECT_EQ(o.creation_time, kBase + 100) << "created before the recording: at its start";
  EXPECT_EQ(o.scheduled_time, kBase + 100);
  EXPECT_EQ(o.deletion_time, kBase + 400);
  EXPECT_EQ(o.gpu_memory_mib, 8192);
  EXPECT_EQ(o.gpu_spec, "T4|A10");
  const PodSpec& h = (*pods)[1];
  EXPECT_EQ(h.name, "ml/hami");
  EXPECT_EQ(h.creation_time, kBase + 150);
  EXPECT_EQ(h.scheduled_time, kBase + 150);
  EXPECT_EQ(h.gpu_memory_mib, 0);
  EXPECT_EQ(h.gpu_memory_percent, 50);
}

TEST(Recorder, PodsThatDoNotDecodeAreCountedOnceEachInRecordJson) {
  const std::string dir = TempDir("undecodable");
  ManualClock clock(static_cast<double>(kBase));
  RecorderOptions ro;
  ro.dir = dir;
  ro.clock = &clock;
  std::unique_ptr<Recorder> r = std::move(Recorder::Open(ro).value());
  PodIdentity a, b;
  a.uid = "uid-a";
  b.uid = "uid-b";
  r->UndecodablePod(a, "bad");
  r->UndecodablePod(a, "bad again");  // the same pod, updated
  r->UndecodablePod(b, "bad");
  EXPECT_EQ(r->counts().undecodable, 2);
  ASSERT_TRUE(r->Flush().ok());
  Result<std::string> status = ReadFile(dir + "/record.json");
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(Json::parse(*status)["pods_undecodable"], 2) << *status;
}

TEST(Recorder, ReadsRequestsAsServeDoesAndTimesFromTheObjectOrTheClock) {
  const std::string dir = TempDir("sink");
  ManualClock clock(static_cast<double>(kBase + 50));
  RecorderOptions ro;
  ro.dir = dir;
  ro.clock = &clock;
  std::unique_ptr<Recorder> r = std::move(Recorder::Open(ro).value());

  // HAMi: 30 % of the cores and 8000 MiB of one GPU; no class label and priority 950: the
  // class serve sorts it into by priority (Guaranteed, from 900), not its Kubernetes QoS class.
  Json hami = testing::PodObject("hami", testing::Shape(0));
  hami["metadata"]["creationTimestamp"] = Time(10);
  hami["spec"]["containers"][0]["resources"]["limits"] = {{"cpu", "1"},
                                                          {"memory", "2Gi"},
                                                          {"nvidia.com/gpu", "1"},
                                                          {"nvidia.com/gpucores", "30"},
                                                          {"nvidia.com/gpumem", "8000"}};
  hami["spec"]["priority"] = 950;
  ASSERT_TRUE(r->UpsertPod(Decoded(hami)).ok());
  std::optional<RecordedPod> p = r->pod("uid-hami");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->name, "ml/hami");
  EXPECT_EQ(p->num_gpu, 1);
  EXPECT_EQ(p->gpu_milli, 300);
  EXPECT_EQ(p->cpu_milli, 1000);
  EXPECT_EQ(p->memory_mib, 2048);
  EXPECT_EQ(p->qos, "Guaranteed");
  EXPECT_EQ(p->creation_time, kBase + 10);
  EXPECT_EQ(p->scheduled_time, -1);

  // Bound without a PodScheduled condition: the clock; then Succeeded: the clock.
  hami["spec"]["nodeName"] = "n1";
  clock.Set(static_cast<double>(kBase + 60));
  ASSERT_TRUE(r->UpsertPod(Decoded(hami)).ok());
  EXPECT_EQ(r->pod("uid-hami")->scheduled_time, kBase + 60);
  hami["status"]["phase"] = "Succeeded";
  clock.Set(static_cast<double>(kBase + 90));
  ASSERT_TRUE(r->UpsertPod(Decoded(hami)).ok());
  EXPECT_EQ(r->pod("uid-hami")->deletion_time, kBase + 90);
  clock.Set(static_cast<double>(kBase + 95));
  r->DeletePod("uid-hami");
  EXPECT_EQ(r->pod("uid-hami")->deletion_time, kBase + 90) << "the first end counts";
  EXPECT_TRUE(r->pod("uid-hami")->gone);

  // No label and no priority: BE, whatever its Kubernetes QoS class; one already ended when
  // first seen keeps no end time.
  Json be = testing::PodObject("be", testing::Shape(0, 1000, "n1", "", "Failed"));
  be["spec"]["containers"][0]["resources"] = Json::object();
  ASSERT_TRUE(r->UpsertPod(Decoded(be)).ok());
  EXPECT_EQ(r->pod("uid-be")->qos, "BE");
  EXPECT_TRUE(r->pod("uid-be")->before_start);
  EXPECT_EQ(r->pod("uid-be")->deletion_time, -1);
  EXPECT_EQ(r->pod("uid-be")->scheduled_time, -1);

  // A request serve rejects (a fractional GPU on two GPUs) is recorded fail-closed, and said.
  Json bad = testing::PodObject("bad", testing::Shape(2, 500));
  Status s = r->UpsertPod(Decoded(bad));
  EXPECT_FALSE(s.ok());
  ASSERT_TRUE(r->pod("uid-bad"));
  EXPECT_EQ(r->pod("uid-bad")->num_gpu, 2);
  EXPECT_EQ(r->pod("uid-bad")->gpu_milli, 1000);

  // A running pod a list finds Succeeded ended while no watch ran: found by that list.
  Json run = testing::PodObject("run", testing::Shape(1, 1000, "n1"));
  ASSERT_TRUE(r->UpsertPod(Decoded(run)).ok());
  EXPECT_FALSE(r->pod("uid-run")->ended_unseen);
  clock.Set(static_cast<double>(kBase + 200));
  r->BeginPodList();
  run["status"]["phase"] = "Succeeded";
  ASSERT_TRUE(r->UpsertPod(Decoded(run)).ok());
  r->EndPodList({"uid-run", "uid-be", "uid-bad"}, "1");
  EXPECT_EQ(r->pod("uid-run")->deletion_time, kBase + 200);
  EXPECT_TRUE(r->pod("uid-run")->ended_unseen);
  EXPECT_FALSE(r->pod("uid-run")->gone);
  EXPECT_FALSE(r->pod("uid-bad")->gone);

  // The journal replays to the same state.
  Result<JournalState> j = ParseJournal(ReadFile(dir + "/record.journal").value(), "j");
  ASSERT_TRUE(j.ok()) << j.error().message;
  EXPECT_EQ(j->pods.at("uid-hami"), *r->pod("uid-hami"));
  EXPECT_EQ(j->pods.at("uid-be"), *r->pod("uid-be"));
  EXPECT_EQ(j->pods.at("uid-run"), *r->pod("uid-run"));
  EXPECT_EQ(j->pods.size(), 4u);
}

// The recorded class is the one serve sorts the pod into (its label, else its priority against
// serve's classes), so that a plan's SLOs and a replay of the history speak of the classes the
// extender enforces. The Kubernetes QoS class plays no part.
TEST(Recorder, ClassIsTheOneServeSortsThePodInto) {
  const auto record = [](const QosClasses& classes, const std::string& name,
                         std::optional<std::string> label, std::optional<int> priority) {
    const std::string dir = TempDir("class_" + name);
    ManualClock clock(static_cast<double>(kBase));
    RecorderOptions ro;
    ro.dir = dir;
    ro.clock = &clock;
    ro.classes = classes;
    std::unique_ptr<Recorder> r = std::move(Recorder::Open(ro).value());
    Json pod = testing::PodObject(name, testing::Shape(1, 1000));
    // Requests equal to limits: Guaranteed to Kubernetes.
    pod["spec"]["containers"][0]["resources"] = {
        {"limits", {{"cpu", "1"}, {"memory", "1Gi"}, {"tessera.io/gpu", "1"}}}};
    if (label) pod["metadata"]["labels"] = {{"tessera.io/class", *label}};
    if (priority) pod["spec"]["priority"] = *priority;
    EXPECT_TRUE(r->UpsertPod(Decoded(pod)).ok());
    std::optional<RecordedPod> p = r->pod("uid-" + name);
    return p ? p->qos : std::string("(not recorded)");
  };
  const QosClasses defaults = DefaultQosClasses();
  EXPECT_EQ(record(defaults, "plain", std::nullopt, std::nullopt), "BE");
  EXPECT_EQ(record(defaults, "critical", std::nullopt, 2000000000), "LS");
  EXPECT_EQ(record(defaults, "p950", std::nullopt, 950), "Guaranteed");
  EXPECT_EQ(record(defaults, "p500", std::nullopt, 500), "Burstable");
  EXPECT_EQ(record(defaults, "labelled", "LS", 0), "LS");
  EXPECT_EQ(record(defaults, "unknown-label", "gold", 600), "Burstable");

  k8s::ServeConfig config;
  ASSERT_TRUE(k8s::ParseServeConfig("classes:\n"
                                    "  - {name: inference, priority: 100, sloWaitSeconds: 2}\n"
                                    "  - {name: batch, priority: 0}\n",
                                    "tessera.yaml", &config)
                  .ok());
  EXPECT_EQ(record(config.classes, "serving", std::nullopt, 150), "inference");
  EXPECT_EQ(record(config.classes, "training", std::nullopt, 10), "batch");
  EXPECT_EQ(record(config.classes, "negative", std::nullopt, -5), "batch");
  EXPECT_EQ(record(config.classes, "named", "inference", 0), "inference");
}

// --- A recorded history, replayed ----------------------------------------------------------

std::vector<NodeSpec> MakeNodes() {
  struct Kind {
    std::string model;
    int gpus;
    int count;
  };
  const std::vector<Kind> kinds = {{"V100M32", 8, 2}, {"A10", 4, 3}, {"T4", 2, 3}};
  std::vector<NodeSpec> nodes;
  for (const Kind& k : kinds) {
    for (int i = 0; i < k.count; ++i) {
      NodeSpec s;
      s.cpu_milli = int64_t{k.gpus} * 8000;
      s.memory_mib = int64_t{k.gpus} * 32 * 1024;
      s.gpu_count = k.gpus;
      s.gpu_model = k.model;
      s.gpu_memory_mib = KnownGpuMemoryMib(k.model);  // what the node list's reader assumes
      nodes.push_back(s);
    }
  }
  Rng rng(kSeed);
  rng.Shuffle(nodes);
  for (size_t i = 0; i < nodes.size(); ++i) nodes[i].name = "node-0" + std::to_string(i);
  return nodes;
}

QosClasses Classes() {
  QosClasses q;
  q.classes = {
      {"LS", 1000, 1.0, false, 20}, {"Burstable", 500, 60.0, true, 30}, {"BE", 0, -1, true, 10}};
  q.fallback = 2;
  return q;
}

// Contention without preemption: pods queue, so starts come later than arrivals.
Timeline MakeTimeline(int pods) {
  Rng rng(kSeed + 1);
  Timeline t;
  int64_t at = 0;
  for (int i = 0; i < pods; ++i) {
    TimedPod tp;
    PodSpec& p = tp.spec;
    char name[16];
    std::snprintf(name, sizeof name, "p-%04d", i);
    p.name = name;
    const uint64_t r = rng.Below(100);
    if (r < 40) {
      static const int kGpus[] = {1, 2, 2, 4, 8};
      p.qos = "BE";
      p.gpu_count = kGpus[rng.Below(5)];
      p.gpu_milli = 1000;
      tp.duration_s = static_cast<double>(300 + rng.Below(1500));
    } else if (r < 70) {
      p.qos = "Burstable";
      p.gpu_count = 1;
      p.gpu_milli = rng.Below(2) == 0 ? 500 : 1000;
      tp.duration_s = static_cast<double>(100 + rng.Below(600));
    } else if (r < 92) {
      static const int32_t kMilli[] = {250, 300, 500, 1000};
      p.qos = "LS";
      p.gpu_count = 1;
      p.gpu_milli = kMilli[rng.Below(4)];
      tp.duration_s = static_cast<double>(30 + rng.Below(300));
    } else {  // CPU only
      p.qos = "BE";
      tp.duration_s = static_cast<double>(60 + rng.Below(300));
    }
    p.cpu_milli = int64_t{std::max(p.gpu_count, 1)} * 2000;
    p.memory_mib = int64_t{std::max(p.gpu_count, 1)} * 8192;
    if (p.gpu_count > 0 && rng.Below(100) < 15)
      p.gpu_spec = rng.Below(2) == 0 ? "A10" : "V100M32|T4";
    tp.arrival_s = static_cast<double>(at);
    at += 1 + static_cast<int64_t>(rng.Below(25));
    t.pods.push_back(tp);
  }
  return t;
}

ReplayOptions Options(const Timeline& timeline) {
  ReplayOptions o;
  o.qos = Classes();
  o.preemption = false;
  o.seed = kSeed;
  o.record_events = true;
  o.samples = 0;
  o.horizon_s = timeline.pods.back().arrival_s + 100000;  // every pod finishes
  return o;
}

// One step of the cluster history.
struct Action {
  enum Kind { kCreate, kBind, kDelete } kind;
  int64_t t = 0;  // replay seconds
  int pod = -1;
  int node = -1;
};

// A recorder and its list + watch over the fake API server, as `tessera record` runs them.
struct Session {
  Session(FakeApiServer& fake, const std::string& dir, ManualClock* clock,
          const QosClasses& classes = Classes()) {
    KubeApiConfig c;
    c.server = fake.url();
    c.source = "test";
    api = std::move(HttpKubeApi::Create(c).value());
    RecorderOptions ro;
    ro.dir = dir;
    ro.clock = clock;
    ro.server = fake.url();
    ro.classes = classes;  // serve's classes: pods without a label are sorted by priority
    Result<std::unique_ptr<Recorder>> r = Recorder::Open(ro);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    if (!r.ok()) return;
    recorder = std::move(*r);
    ClusterCacheOptions co;
    co.sleeper = &sleeper;
    co.backoff_initial_seconds = 0.001;
    co.backoff_max_seconds = 0.01;
    co.watch_timeout_seconds = 60;
    co.clock = clock;
    co.log = [](std::string_view, std::string_view, const Json&) {};
    cache = std::make_unique<ClusterCache>(api.get(), recorder.get(), co);
    cache->Start();
  }
  ~Session() {
    if (cache) cache->Stop();
  }
  bool Synced() const {
    return WaitFor([&] { return recorder->sync_status().synced; });
  }

  RecordingSleeper sleeper;
  std::unique_ptr<HttpKubeApi> api;
  std::unique_ptr<Recorder> recorder;
  std::unique_ptr<ClusterCache> cache;
};

std::string Describe(const ReplayEvent& e) {
  static const char* kKinds[] = {"start", "finish", "preempt", "nominate", "reject"};
  return std::to_string(e.t_s) + " " + kKinds[static_cast<int>(e.kind)] + " pod " +
         std::to_string(e.pod) + " node " + std::to_string(e.node) + " gpus " +
         std::to_string(e.gpus);
}

TEST(RecordHistory, DropsGoneBookmarksAndRestartsRecordEachPodOnceAndReplayTheSameRun) {
  const std::string policy = "fgd";
  const std::vector<NodeSpec> nodes = MakeNodes();
  const Timeline timeline = MakeTimeline(120);
  const ReplayOptions options = Options(timeline);
  std::unique_ptr<Engine> engine = std::move(Engine::Create(nodes, {}, policy, kSeed).value());
  const ReplayResult original =
      RunReplay(nodes, timeline, engine->policy(), engine->workload(), options);

  // The history: arrivals, then the run's starts and finishes, in time order (an arrival
  // before the start at the same second).
  std::vector<Action> actions;
  for (size_t i = 0; i < timeline.pods.size(); ++i) {
    actions.push_back({Action::kCreate, static_cast<int64_t>(timeline.pods[i].arrival_s),
                       static_cast<int>(i), -1});
  }
  std::map<int, int64_t> start_of, finish_of;
  int waited = 0;
  for (const ReplayEvent& e : original.events) {
    ASSERT_EQ(e.t_s, std::floor(e.t_s)) << "integer times survive the openb format";
    const int64_t t = static_cast<int64_t>(e.t_s);
    if (e.kind == ReplayEvent::Kind::kStart) {
      actions.push_back({Action::kBind, t, e.pod, e.node});
      start_of[e.pod] = t;
      waited += t > static_cast<int64_t>(timeline.pods[e.pod].arrival_s);
    } else if (e.kind == ReplayEvent::Kind::kFinish) {
      actions.push_back({Action::kDelete, t, e.pod, e.node});
      finish_of[e.pod] = t;
    } else {
      FAIL() << "unexpected event " << Describe(e);
    }
  }
  ASSERT_EQ(start_of.size(), timeline.pods.size());
  ASSERT_EQ(finish_of.size(), timeline.pods.size());
  ASSERT_GT(waited, 10) << "the history should have queueing";
  std::stable_sort(actions.begin(), actions.end(),
                   [](const Action& a, const Action& b) { return a.t < b.t; });

  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  const std::string dir = TempDir("history");
  ManualClock clock(static_cast<double>(kBase - 10));
  // Half the nodes exist before the recorder starts, the others are added while it watches.
  const size_t half = nodes.size() / 2;
  for (size_t i = 0; i < half; ++i) fake.AddNode(NodeObjectOf(nodes[i]));
  auto session = std::make_unique<Session>(fake, dir, &clock);
  ASSERT_TRUE(session->recorder && session->Synced());
  for (size_t i = half; i < nodes.size(); ++i) {
    fake.AddNode(NodeObjectOf(nodes[i]));
    const std::string name = nodes[i].name;
    ASSERT_TRUE(WaitFor([&] { return session->recorder->counts().nodes == int(i) + 1; })) << name;
  }

  const auto uid = [&](int pod) { return "uid-" + timeline.pods[pod].spec.name; };
  const auto reflected = [&](const Action& a) {
    const std::optional<RecordedPod> p = session->recorder->pod(uid(a.pod));
    if (!p) return false;
    if (a.kind == Action::kBind) return p->scheduled_time >= 0;
    if (a.kind == Action::kDelete) return p->deletion_time >= 0;
    return true;
  };
  const size_t first_stop = actions.size() / 3;
  const size_t second_stop = 2 * actions.size() / 3;
  bool down = false;
  int drops = 0, gones = 0, bookmarks = 0, restarts = 0, deleted_while_down = 0;
  int pods_lists_before_restarts = 0;
  for (size_t k = 0; k < actions.size(); ++k) {
    const Action& a = actions[k];
    clock.Set(static_cast<double>(kBase + a.t));
    if (down && a.kind == Action::kDelete && k > second_stop) {
      // The second restart comes after a deletion it did not watch, at the same instant: the
      // first list finds the pod gone and ends it at the list's time.
      fake.DeletePod("ml", timeline.pods[a.pod].spec.name);
      ++deleted_while_down;
      session = std::make_unique<Session>(fake, dir, &clock);
      ASSERT_TRUE(session->recorder && session->Synced());
      EXPECT_TRUE(session->recorder->resumed());
      ++restarts;
      down = false;
      ASSERT_TRUE(WaitFor([&] { return reflected(a); })) << "action " << k;
      continue;
    }
    if (down && a.kind == Action::kDelete) {
      // The first restart comes before the next deletion; what happened while it was down
      // (pods created and bound) is read from the objects' timestamps.
      session = std::make_unique<Session>(fake, dir, &clock);
      ASSERT_TRUE(session->recorder && session->Synced());
      EXPECT_TRUE(session->recorder->resumed());
      EXPECT_TRUE(session->recorder->dropped_torn_line());
      ++restarts;
      down = false;
    }
    if (!down) {
      if (k % 11 == 5) {
        fake.DropWatches();  // resumed from the last resourceVersion
        ++drops;
      }
      if (k % 13 == 7) {
        fake.SetGoneAsEvent(k % 2 == 0);
        fake.ModifyNode(NodeObjectOf(nodes[0]));  // past the pods watch's resourceVersion
        fake.Compact();
        fake.DropWatches();  // the resumed watch is too old: 410, relist
        ++gones;
      }
      if (k % 7 == 3) {
        fake.SendBookmarks();
        ++bookmarks;
      }
    }
    const PodSpec& spec = timeline.pods[a.pod].spec;
    if (a.kind == Action::kCreate) {
      Json pod = PodObjectOf(spec, spec.name);
      pod["metadata"]["creationTimestamp"] = Time(a.t);
      // Half the pods say their class by label, the others by priority only (as pods of a
      // PriorityClass do): the recorder sorts both as serve does.
      if (a.pod % 2 == 0) {
        pod["metadata"]["labels"] = {{"tessera.io/class", spec.qos}};
      } else {
        pod["spec"]["priority"] = options.qos.classes[options.qos.Find(spec.qos)].priority;
      }
      fake.AddPod(pod);
    } else if (a.kind == Action::kBind) {
      Json pod = fake.GetPod("ml", spec.name);
      ASSERT_FALSE(pod.is_null()) << spec.name;
      pod["spec"]["nodeName"] = nodes[a.node].name;
      pod["status"]["phase"] = "Running";
      pod["status"]["conditions"] = {
          {{"type", "PodScheduled"}, {"status", "True"}, {"lastTransitionTime", Time(a.t)}}};
      fake.ModifyPod(pod);
    } else {
      fake.DeletePod("ml", spec.name);
    }
    if (!down) {
      ASSERT_TRUE(WaitFor([&] { return reflected(a); })) << "action " << k;
    }
    if (!down && (k == first_stop || k == second_stop)) {
      // A kill: no end line, and the first time half a line at the end of the journal.
      pods_lists_before_restarts += session->cache->stats("pods").lists;
      session.reset();
      if (k == first_stop) {
        std::ofstream journal(dir + "/record.journal", std::ios::app);
        journal << R"({"kind":"pod","uid":"uid-half-writ)";
      }
      down = true;
    }
  }
  ASSERT_FALSE(down);
  const int pods_lists = pods_lists_before_restarts + session->cache->stats("pods").lists;
  const RecordCounts counts = session->recorder->counts();
  clock.Set(static_cast<double>(kBase + actions.back().t + 60));
  session->cache->Stop();
  ASSERT_TRUE(session->recorder->Finish(kBase + actions.back().t + 60).ok());
  session.reset();

  EXPECT_EQ(restarts, 2);
  EXPECT_EQ(deleted_while_down, 1);
  EXPECT_GE(counts.ended_unseen, 1);  // a 410's relist may find more
  EXPECT_EQ(counts.pods, static_cast<int>(timeline.pods.size()));
  EXPECT_GE(pods_lists, 3 + gones) << "a relist after each 410 Gone";
  std::cout << "[record history] actions " << actions.size() << ", watch drops " << drops
            << ", 410s " << gones << ", bookmarks " << bookmarks << ", restarts " << restarts
            << ", pod lists " << pods_lists << ", pods that waited " << waited << "\n";

  // Each pod exactly once, with the history's times.
  Result<std::string> status = ReadFile(dir + "/record.json");
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(Json::parse(*status)["state"], "complete");
  EXPECT_FALSE(std::filesystem::exists(dir + "/openb_pod_list.partial.csv"));
  Result<std::string> pods_text = ReadFile(dir + "/openb_pod_list.csv");
  Result<std::string> nodes_text = ReadFile(dir + "/openb_node_list.csv");
  ASSERT_TRUE(pods_text.ok() && nodes_text.ok());
  Result<std::vector<PodSpec>> pods = ReadPodCsv(*pods_text, "openb_pod_list.csv");
  ASSERT_TRUE(pods.ok()) << pods.error().message;
  Result<std::vector<NodeSpec>> recorded_nodes = ReadNodeCsv(*nodes_text, "openb_node_list.csv");
  ASSERT_TRUE(recorded_nodes.ok()) << recorded_nodes.error().message;
  ASSERT_EQ(pods->size(), timeline.pods.size());
  std::map<std::string, int> index;
  for (size_t i = 0; i < timeline.pods.size(); ++i) {
    index["ml/" + timeline.pods[i].spec.name] = static_cast<int>(i);
  }
  std::set<std::string> seen;
  for (const PodSpec& p : *pods) {
    ASSERT_TRUE(index.count(p.name)) << p.name;
    EXPECT_TRUE(seen.insert(p.name).second) << p.name;
    const int i = index[p.name];
    const PodSpec& want = timeline.pods[i].spec;
    EXPECT_EQ(p.creation_time, kBase + static_cast<int64_t>(timeline.pods[i].arrival_s)) << p.name;
    EXPECT_EQ(p.scheduled_time, kBase + start_of[i]) << p.name;
    EXPECT_EQ(p.deletion_time, kBase + finish_of[i]) << p.name;
    EXPECT_EQ(p.qos, want.qos) << p.name;
    EXPECT_EQ(p.gpu_count, want.gpu_count) << p.name;
    EXPECT_EQ(p.gpu_milli, want.gpu_milli) << p.name;
    EXPECT_EQ(p.gpu_spec, want.gpu_spec) << p.name;
    EXPECT_EQ(p.cpu_milli, want.cpu_milli) << p.name;
    EXPECT_EQ(p.memory_mib, want.memory_mib) << p.name;
  }
  ASSERT_EQ(recorded_nodes->size(), nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeSpec& a = (*recorded_nodes)[i];
    EXPECT_TRUE(a.name == nodes[i].name && a.cpu_milli == nodes[i].cpu_milli &&
                a.memory_mib == nodes[i].memory_mib && a.gpu_count == nodes[i].gpu_count &&
                a.gpu_model == nodes[i].gpu_model && a.gpu_memory_mib == nodes[i].gpu_memory_mib)
        << a.name;
  }

  // Replaying the recording gives the run that made it, event for event.
  const Timeline recorded =
      TimelineFromTrace(*pods, "openb_pod_list.csv", CsvDataLines(*pods_text), 1.0);
  EXPECT_TRUE(recorded.skipped.empty());
  std::unique_ptr<Engine> engine2 =
      std::move(Engine::Create(*recorded_nodes, {}, policy, kSeed).value());
  const ReplayResult replayed =
      RunReplay(*recorded_nodes, recorded, engine2->policy(), engine2->workload(), options);
  ASSERT_EQ(replayed.events.size(), original.events.size());
  for (size_t i = 0; i < original.events.size(); ++i) {
    const ReplayEvent& a = original.events[i];
    const ReplayEvent& b = replayed.events[i];
    ASSERT_TRUE(a.t_s == b.t_s && a.kind == b.kind && a.pod == b.pod && a.node == b.node &&
                a.gpus == b.gpus)
        << "event " << i << ": original " << Describe(a) << ", replayed " << Describe(b);
  }
  for (size_t c = 0; c < original.classes.size(); ++c) {
    EXPECT_EQ(original.classes[c].arrived, replayed.classes[c].arrived) << c;
    EXPECT_EQ(original.classes[c].wait_p99_s, replayed.classes[c].wait_p99_s) << c;
    EXPECT_EQ(original.classes[c].finished, replayed.classes[c].finished) << c;
    EXPECT_EQ(original.classes[c].gpu_hours, replayed.classes[c].gpu_hours) << c;
  }

  // Planned from: the demand `tessera plan` sizes for (plan/demand.h: each class's offered
  // load, arrival rate and durations, and the pods at the peak) is the history's.
  const double end_s = timeline.pods.back().arrival_s;
  const std::vector<ClassLoad> want_load = OfferedLoad(timeline, end_s);
  const std::vector<ClassLoad> got_load = OfferedLoad(recorded, end_s);
  ASSERT_EQ(got_load.size(), want_load.size());
  for (size_t c = 0; c < want_load.size(); ++c) {
    EXPECT_EQ(got_load[c].qos, want_load[c].qos) << c;
    EXPECT_EQ(got_load[c].pods, want_load[c].pods) << want_load[c].qos;
    EXPECT_DOUBLE_EQ(got_load[c].gpus, want_load[c].gpus) << want_load[c].qos;
    EXPECT_DOUBLE_EQ(got_load[c].arrival_per_s, want_load[c].arrival_per_s) << want_load[c].qos;
    EXPECT_DOUBLE_EQ(got_load[c].mean_duration_s, want_load[c].mean_duration_s) << want_load[c].qos;
  }
  EXPECT_EQ(PodsAtPeak(recorded), PodsAtPeak(timeline));
}

// One class rule for every front door: over Kubernetes QoS class x spec.priority x class label,
// the class a pod is in is the same in serve's /state and metrics, in record's output, and in
// the replay of that output (the replay sorts a pod by its qos column).
TEST(RecordClasses, ServeRecordAndReplayPutEveryPodInTheSameClass) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(testing::NodeObject("n1", 8));
  const std::vector<std::pair<std::string, Json>> qos_kinds = {
      {"guaranteed", {{"limits", {{"cpu", "1"}, {"memory", "1Gi"}, {"tessera.io/gpu", "1"}}}}},
      {"burstable",
       {{"requests", {{"cpu", "500m"}}}, {"limits", {{"cpu", "1"}, {"tessera.io/gpu", "1"}}}}},
      {"besteffort", {{"limits", {{"tessera.io/gpu", "1"}}}}},
  };
  const std::vector<std::optional<int>> priorities = {std::nullopt, -5,   0,         500,
                                                      950,          1000, 2000000000};
  const std::vector<std::string> labels = {"", "LS", "Burstable", "Gold"};
  std::vector<std::string> names;
  for (const auto& [kind, resources] : qos_kinds) {
    for (const std::optional<int>& priority : priorities) {
      for (const std::string& label : labels) {
        const std::string name = kind + "-" + (priority ? std::to_string(*priority) : "none") +
                                 "-" + (label.empty() ? "nolabel" : label);
        std::string dns;
        for (char c : name)
          dns += static_cast<char>(c == '-' || std::isdigit(c) ? c : std::tolower(c));
        Json pod = testing::PodObject(dns, testing::Shape(1));
        pod["spec"]["containers"][0]["resources"] = resources;
        pod["spec"]["schedulerName"] = "tessera-scheduler";
        if (priority) pod["spec"]["priority"] = *priority;
        if (!label.empty()) pod["metadata"]["labels"] = {{"tessera.io/class", label}};
        pod["metadata"]["creationTimestamp"] = Time(0);
        fake.AddPod(pod);
        names.push_back("ml/" + dns);
      }
    }
  }
  const QosClasses classes = DefaultQosClasses();  // serve's default and the replay's
  testing::Live live(fake);
  ASSERT_TRUE(live.Sync());
  ASSERT_TRUE(WaitFor([&] { return live.State()["pending"].size() == names.size(); }));
  std::map<std::string, std::string> serve_class;
  const Json state = live.State();
  for (const Json& p : state["pending"]) serve_class[p["pod"]] = p["class"];
  ASSERT_EQ(serve_class.size(), names.size());

  const std::string dir = TempDir("classes");
  ManualClock clock(static_cast<double>(kBase + 10));
  auto session = std::make_unique<Session>(fake, dir, &clock, classes);
  ASSERT_TRUE(session->recorder && session->Synced());
  ASSERT_TRUE(WaitFor([&] { return session->recorder->counts().pods == int(names.size()); }));
  session->cache->Stop();
  ASSERT_TRUE(session->recorder->Finish(kBase + 20).ok());
  session.reset();
  Result<std::string> text = ReadFile(dir + "/openb_pod_list.csv");
  ASSERT_TRUE(text.ok());
  Result<std::vector<PodSpec>> pods = ReadPodCsv(*text, "openb_pod_list.csv");
  ASSERT_TRUE(pods.ok()) << pods.error().message;
  ASSERT_EQ(pods->size(), names.size());

  std::map<std::string, int> per_class;
  for (const PodSpec& p : *pods) {
    ASSERT_TRUE(serve_class.count(p.name)) << p.name;
    EXPECT_EQ(p.qos, serve_class[p.name]) << p.name << ": record vs serve's /state";
    const int replay_class = classes.Find(p.qos);
    EXPECT_EQ(classes.classes[static_cast<size_t>(replay_class)].name, serve_class[p.name])
        << p.name << ": the replay's class vs serve's";
    ++per_class[p.qos];
  }
  // Every class appears, and the metrics count the same pods per class.
  const std::string metrics = live.extender->MetricsText();
  for (const QosClass& c : classes.classes) {
    EXPECT_GT(per_class[c.name], 0) << c.name;
    const std::string series = "tessera_pending_gpu_pods{class=\"" + c.name + "\"} ";
    const size_t at = metrics.find(series);
    ASSERT_NE(at, std::string::npos) << series;
    EXPECT_EQ(std::stod(metrics.substr(at + series.size())), per_class[c.name]) << c.name;
  }
  // A few by hand: a Guaranteed pod without priority is BE; the label wins; a label that
  // names no class falls back to the priority.
  EXPECT_EQ(serve_class["ml/guaranteed-none-nolabel"], "BE");
  EXPECT_EQ(serve_class["ml/besteffort-0-ls"], "LS");
  EXPECT_EQ(serve_class["ml/burstable-950-gold"], "Guaranteed");
  EXPECT_EQ(serve_class["ml/guaranteed-2000000000-burstable"], "Burstable");
}

// --- Failures are said, and never presented as a whole recording ---------------------------

TEST(RecordRun, UnreachableApiServerFailsBeforeWritingAnything) {
  KubeApiConfig c;
  c.server = "http://127.0.0.1:1";
  c.source = "test";
  c.connect_timeout_seconds = 2;
  std::unique_ptr<HttpKubeApi> api = std::move(HttpKubeApi::Create(c).value());
  RecordingSleeper stop;
  RecordRunOptions o;
  o.dir = TempDir("unreachable");
  o.stop = &stop;
  std::ostringstream err;
  EXPECT_EQ(RunRecord(api.get(), o, err), 1);
  EXPECT_NE(err.str().find("tessera record: error: cannot read nodes from the API server: GET "
                           "http://127.0.0.1:1/api/v1/nodes?limit=1: no response: cannot connect"),
            std::string::npos)
      << err.str();
  EXPECT_NE(err.str().find("reachable"), std::string::npos) << err.str();
  EXPECT_FALSE(std::filesystem::exists(o.dir)) << "nothing written";
}

TEST(RecordRun, ForbiddenSaysWhichPermissionAndWritesNothing) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.FailNext("GET", "/api/v1/pods", 1, 403);
  KubeApiConfig c;
  c.server = fake.url();
  c.source = "test";
  std::unique_ptr<HttpKubeApi> api = std::move(HttpKubeApi::Create(c).value());
  RecordingSleeper stop;
  RecordRunOptions o;
  o.dir = TempDir("forbidden");
  o.stop = &stop;
  std::ostringstream err;
  EXPECT_EQ(RunRecord(api.get(), o, err), 1);
  EXPECT_NE(err.str().find("cannot read pods from the API server: GET " + fake.url() +
                           "/api/v1/pods?limit=1: HTTP 403: \"injected failure\""),
            std::string::npos)
      << err.str();
  EXPECT_NE(err.str().find("get, list and watch on pods and nodes"), std::string::npos)
      << err.str();
  EXPECT_FALSE(std::filesystem::exists(o.dir));
}

// Waits (for real) until `ready` holds, then moves the clock by the time asked.
class AdvancingSleeper final : public Sleeper {
 public:
  AdvancingSleeper(ManualClock* clock, std::function<bool()> ready)
      : clock_(clock), ready_(std::move(ready)) {}
  bool Sleep(double seconds) override {
    WaitFor(ready_);
    clock_->Advance(seconds);
    slept_ += seconds;
    return true;
  }
  void Wake() override {}
  double slept() const { return slept_; }

 private:
  ManualClock* clock_;
  std::function<bool()> ready_;
  double slept_ = 0;
};

// Lists that the API server refuses after the first check (RBAC changed under a running
// recorder): the run gives up, says so, and leaves only partial lists.
class RefusingLists final : public KubeApi {
 public:
  explicit RefusingLists(KubeApi* inner) : inner_(inner) {}
  ApiStatus List(const std::string& path, const ListOptions& o, ListPage* page) override {
    if (o.limit != 1) {
      ++refusals_;
      ApiStatus s;
      s.http_status = 403;
      s.error = "GET " + path + ": HTTP 403: \"forbidden\"";
      return s;
    }
    return inner_->List(path, o, page);
  }
  ApiStatus Watch(const std::string& path, const std::string& rv, int timeout,
                  const std::function<bool(std::string_view)>& on_event,
                  const std::function<void()>& on_open) override {
    return inner_->Watch(path, rv, timeout, on_event, on_open);
  }
  void CancelWatches() override { inner_->CancelWatches(); }
  ApiStatus BindPod(const std::string&, const std::string&, const std::string&, const std::string&,
                    const std::map<std::string, std::string>&) override {
    return {403, "read-only"};
  }
  ApiStatus PatchPodStatus(const std::string&, const std::string&,
                           const nlohmann::ordered_json&) override {
    return {403, "read-only"};
  }
  ApiStatus DeletePod(const std::string&, const std::string&, const std::string&) override {
    return {403, "read-only"};
  }
  ApiStatus CreateEvent(const std::string&, const nlohmann::ordered_json&) override {
    return {403, "read-only"};
  }
  int refusals() const { return refusals_.load(); }

 private:
  KubeApi* inner_;
  std::atomic<int> refusals_{0};
};

TEST(RecordRun, RefusedAfterStartMarksTheRecordingFailed) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(testing::NodeObject("n1", 4));
  KubeApiConfig c;
  c.server = fake.url();
  c.source = "test";
  std::unique_ptr<HttpKubeApi> http = std::move(HttpKubeApi::Create(c).value());
  RefusingLists api(http.get());
  ManualClock clock(static_cast<double>(kBase));
  // Three refusals: one resource's reflector has failed twice, so its state says why.
  AdvancingSleeper stop(&clock, [&] { return api.refusals() >= 3; });
  RecordingSleeper backoff;
  RecordRunOptions o;
  o.dir = TempDir("refused");
  o.stop = &stop;
  o.clock = &clock;
  o.give_up_seconds = 300;  // a refusal ends the run before that
  o.cache.sleeper = &backoff;
  o.cache.log = [](std::string_view, std::string_view, const Json&) {};
  std::ostringstream err;
  EXPECT_EQ(RunRecord(&api, o, err), 1);
  EXPECT_NE(err.str().find("the recording is incomplete"), std::string::npos) << err.str();
  Result<std::string> status = ReadFile(o.dir + "/record.json");
  ASSERT_TRUE(status.ok());
  const Json j = Json::parse(*status);
  EXPECT_EQ(j["state"], "failed");
  EXPECT_EQ(j["complete"], false);
  EXPECT_NE(j["reason"].get<std::string>().find("the API server refuses: "), std::string::npos)
      << j.dump();
  EXPECT_NE(j["reason"].get<std::string>().find("HTTP 403"), std::string::npos) << j.dump();
  EXPECT_LT(stop.slept(), 300) << "given up at once, not after --give-up-seconds";
  EXPECT_FALSE(std::filesystem::exists(o.dir + "/openb_pod_list.csv"));
  EXPECT_FALSE(std::filesystem::exists(o.dir + "/openb_node_list.csv"));
  EXPECT_TRUE(std::filesystem::exists(o.dir + "/openb_pod_list.partial.csv"));
}

// Waits (for real) until the run's list + watch has both watches open, i.e. both lists are in
// (a watch starts after its list), then moves the clock by the time asked: a run of
// --duration that is in sync before its time passes.
class SyncedSleeper final : public Sleeper {
 public:
  SyncedSleeper(FakeApiServer* fake, ManualClock* clock) : fake_(fake), clock_(clock) {}
  /// Call before each run: only watches started after this count.
  void NewRun() { base_ = Watches(); }
  bool Sleep(double seconds) override {
    WaitFor([&] {
      const auto [nodes, pods] = Watches();
      return nodes > base_.first && pods > base_.second;
    });
    clock_->Advance(seconds);
    return true;
  }
  void Wake() override {}

 private:
  std::pair<int, int> Watches() const {
    int nodes = 0, pods = 0;
    for (const std::string& r : fake_->requests()) {
      nodes += r == "GET /api/v1/nodes?watch";
      pods += r == "GET /api/v1/pods?watch";
    }
    return {nodes, pods};
  }
  FakeApiServer* fake_;
  ManualClock* clock_;
  std::pair<int, int> base_{0, 0};
};

// In sync first; then the watches are dropped and every request for pods fails (500), and the
// run's time ends while the pod watch is broken.
class OutOfSyncAtTheEnd final : public Sleeper {
 public:
  OutOfSyncAtTheEnd(FakeApiServer* fake, ManualClock* clock) : fake_(fake), clock_(clock) {}
  bool Sleep(double seconds) override {
    WaitFor(
        [&] { return Count("GET /api/v1/pods?watch") > 0 && Count("GET /api/v1/nodes?watch"); });
    if (++sleeps_ == 2) {  // the first check finds the run in sync
      const int watches = Count("GET /api/v1/pods?watch");
      fake_->FailNext("GET", "/api/v1/pods", 1000000, 500);
      fake_->DropWatches();
      WaitFor([&] { return Count("GET /api/v1/pods?watch") >= watches + 2; });
    }
    clock_->Advance(seconds);
    return true;
  }
  void Wake() override {}

 private:
  int Count(const std::string& line) const {
    int n = 0;
    for (const std::string& r : fake_->requests()) n += r == line;
    return n;
  }
  FakeApiServer* fake_;
  ManualClock* clock_;
  int sleeps_ = 0;
};

TEST(RecordRun, AnEndWhileOutOfSyncIsAFailedRecording) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(testing::NodeObject("n1", 4));
  KubeApiConfig c;
  c.server = fake.url();
  c.source = "test";
  std::unique_ptr<HttpKubeApi> api = std::move(HttpKubeApi::Create(c).value());
  ManualClock clock(static_cast<double>(kBase));
  OutOfSyncAtTheEnd stop(&fake, &clock);
  RecordingSleeper backoff;
  RecordRunOptions o;
  o.dir = TempDir("outofsync");
  o.stop = &stop;
  o.clock = &clock;
  o.duration_seconds = 20;
  o.flush_seconds = 10;
  o.cache.sleeper = &backoff;
  o.cache.log = [](std::string_view, std::string_view, const Json&) {};
  std::ostringstream err;
  EXPECT_EQ(RunRecord(api.get(), o, err), 1) << err.str();
  EXPECT_NE(err.str().find("ended out of sync with the API server"), std::string::npos)
      << err.str();
  Result<std::string> status = ReadFile(o.dir + "/record.json");
  ASSERT_TRUE(status.ok());
  const Json j = Json::parse(*status);
  EXPECT_EQ(j["state"], "failed") << j.dump();
  EXPECT_EQ(j["complete"], false);
  EXPECT_FALSE(std::filesystem::exists(o.dir + "/openb_pod_list.csv"));
}

TEST(RecordRun, DurationEndsCleanlyWithTheFinalListsAndAResumeAddsNoDuplicate) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(testing::NodeObject("n1", 4));
  Json pod = testing::PodObject("a", testing::Shape(1, 500, "n1"));
  pod["metadata"]["creationTimestamp"] = Time(0);
  fake.AddPod(pod);
  KubeApiConfig c;
  c.server = fake.url();
  c.source = "test";
  ManualClock clock(static_cast<double>(kBase + 100));
  SyncedSleeper stop(&fake, &clock);
  RecordingSleeper backoff;
  RecordRunOptions o;
  o.dir = TempDir("duration");
  o.stop = &stop;
  o.clock = &clock;
  o.duration_seconds = 25;
  o.flush_seconds = 10;
  o.cache.sleeper = &backoff;
  o.cache.log = [](std::string_view, std::string_view, const Json&) {};
  for (int run = 0; run < 2; ++run) {
    // A client per run, as a process has (CancelWatches at the end of a run is for good).
    std::unique_ptr<HttpKubeApi> api = std::move(HttpKubeApi::Create(c).value());
    std::ostringstream err;
    stop.NewRun();
    ASSERT_EQ(RunRecord(api.get(), o, err), 0) << err.str();
    EXPECT_NE(err.str().find("done: 1 pods (1 running"), std::string::npos) << err.str();
    Result<std::string> text = ReadFile(o.dir + "/openb_pod_list.csv");
    ASSERT_TRUE(text.ok());
    Result<std::vector<PodSpec>> pods = ReadPodCsv(*text, "pods");
    ASSERT_TRUE(pods.ok()) << pods.error().message;
    ASSERT_EQ(pods->size(), 1u) << *text;
    EXPECT_EQ((*pods)[0].name, "ml/a");
    // Created before the recording started: at its start (the window the lists describe).
    EXPECT_EQ((*pods)[0].creation_time, kBase + 100);
    // Bound without a PodScheduled condition: the time it was first seen bound.
    EXPECT_EQ((*pods)[0].scheduled_time, kBase + 100);
    EXPECT_EQ((*pods)[0].deletion_time, kBase + 100 + 25 * (run + 1));  // closed at the end
    const Json status = Json::parse(ReadFile(o.dir + "/record.json").value());
    EXPECT_EQ(status["state"], "complete");
    EXPECT_EQ(status["runs"], run + 1);
  }
}

}  // namespace
}  // namespace tessera::k8s
