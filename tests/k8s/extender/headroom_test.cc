// Headroom in `tessera serve`: idle GPUs kept for the classes that may use headroom (LS by
// default). A BE pod is refused where placing it would leave fewer idle GPUs than the target
// (the reason names the headroom) and admitted where it would not (a share on a used GPU
// takes no idle one, and bind puts it there); an LS pod uses the headroom; the backlog mode
// grows with an LS burst and shrinks once it ages out of the window. A floor per GPU model
// refuses a BE pod on a node of that model where it would take the model's kept GPUs (the
// reason names the model), while nodes of other models take it; /state and the metrics show
// the target and the idle GPUs per model.

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "k8s/extender/extender.h"
#include "k8s/extender/extender_protocol.h"
#include "util/clock.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;

// Nodes of four GPUs: (name, GPU model) each.
Json NodesOf(const std::vector<std::pair<std::string, std::string>>& nodes) {
  Json items = Json::array();
  for (const auto& [name, model] : nodes) {
    Json alloc = {{"cpu", "64"}, {"memory", "256Gi"}, {"pods", "110"}, {"tessera.io/gpu", "4"}};
    items.push_back(
        {{"apiVersion", "v1"},
         {"kind", "Node"},
         {"metadata",
          {{"name", name}, {"uid", "uid-" + name}, {"labels", {{"tessera.io/gpu-model", model}}}}},
         {"spec", Json::object()},
         {"status", {{"allocatable", alloc}, {"capacity", alloc}}}});
  }
  return {{"apiVersion", "v1"}, {"kind", "NodeList"}, {"items", items}};
}

Json Nodes() { return NodesOf({{"n1", "A10"}, {"n2", "A10"}}); }

// A pending pod of class `cls` (label tessera.io/class) asking `gpus` GPUs of `milli` each.
Json PodOf(const std::string& uid, const std::string& cls, int gpus, int milli = 1000) {
  Json limits = {{"cpu", "1"}, {"memory", "1Gi"}, {"tessera.io/gpu", std::to_string(gpus)}};
  if (milli < 1000) limits["tessera.io/gpu-milli"] = std::to_string(milli);
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", "pod-" + uid},
        {"namespace", "ml"},
        {"uid", uid},
        {"labels", {{"tessera.io/class", cls}}}}},
      {"spec",
       {{"containers", {{{"name", "main"}, {"image", "x"}, {"resources", {{"limits", limits}}}}}}}},
      {"status", {{"phase", "Pending"}}}};
}

class Cluster {
 public:
  explicit Cluster(HeadroomOptions headroom, const Json& nodes = Nodes()) {
    ExtenderOptions options;
    options.headroom = headroom;
    options.clock = &clock;
    options.filter_pass_seconds = 0;
    ext = std::move(Extender::FromJson(nodes.dump(), "", options).value());
    for (const Json& n : nodes["items"]) names.push_back(n["metadata"]["name"]);
  }
  std::string Body(const Json& pod) const {
    return Json{{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", names}}.dump();
  }
  ExtenderFilterResult Filter(const Json& pod) {
    return ext->Filter(DecodeExtenderArgs(Body(pod)).value());
  }
  /// Filter then bind to `node`; the bind's error ("" when bound).
  std::string Place(const Json& pod, const std::string& node) {
    Filter(pod);
    const Json& m = pod["metadata"];
    return ext->Bind({m["name"], "ml", m["uid"], node}).error;
  }
  Json State() const { return Json::parse(ext->StateJson()); }
  Json Gpus(const std::string& uid) const {
    const Json state = State();  // a range over a temporary's member would dangle
    for (const Json& a : state["assignments"]) {
      if (a["uid"] == uid) return a["gpus"];
    }
    return nullptr;
  }

  ManualClock clock{1000};
  std::unique_ptr<Extender> ext;
  std::vector<std::string> names;  ///< the candidates of Filter: every node
};

HeadroomOptions Static(int gpus) {
  HeadroomOptions h;
  h.mode = HeadroomOptions::Mode::kStatic;
  h.gpus = gpus;
  return h;
}

TEST(ServeHeadroom, BeIsRefusedWhereItWouldEatTheReservedGpusWithAReason) {
  Cluster c(Static(4));                                 // 8 idle GPUs, 4 kept for LS
  EXPECT_EQ(c.Place(PodOf("be1", "BE", 2), "n1"), "");  // leaves 6
  EXPECT_EQ(c.Place(PodOf("be2", "BE", 2), "n2"), "");  // leaves 4
  const ExtenderFilterResult r = c.Filter(PodOf("be3", "BE", 1));
  EXPECT_TRUE(r.node_names.empty());
  ASSERT_EQ(r.failed_nodes.size(), 2u);  // resolvable: it may fit once GPUs free up
  EXPECT_EQ(r.failed_nodes.at("n1").rfind("headroom: ", 0), 0u) << r.failed_nodes.at("n1");
  EXPECT_TRUE(r.failed_and_unresolvable_nodes.empty());
  // A bind past the filter (which filters once more) is refused too, and allocates nothing.
  const std::string bind = c.Place(PodOf("be3", "BE", 1), "n1");
  EXPECT_EQ(bind.rfind("refused: headroom: ", 0), 0u) << bind;
  EXPECT_EQ(c.State()["headroom"]["idle_gpus"], 4);
  EXPECT_EQ(c.State()["headroom"]["target_gpus"], 4);
  // The metric an operator reads.
  const std::string m = c.ext->MetricsText();
  EXPECT_NE(m.find("tessera_headroom_target_gpus 4\n"), std::string::npos) << m;
  EXPECT_NE(m.find("tessera_filter_rejections_total{reason=\"headroom\"} 4\n"), std::string::npos);
}

TEST(ServeHeadroom, LsUsesTheHeadroomAndABeShareOnAUsedGpuIsAdmitted) {
  Cluster c(Static(4));
  EXPECT_EQ(c.Place(PodOf("be1", "BE", 2), "n1"), "");
  EXPECT_EQ(c.Place(PodOf("be2", "BE", 2), "n2"), "");  // 4 idle: all reserved
  // LS may use it.
  EXPECT_EQ(c.Filter(PodOf("ls1", "LS", 1, 250)).node_names.size(), 2u);
  EXPECT_EQ(c.Place(PodOf("ls1", "LS", 1, 250), "n1"), "");  // takes an idle GPU: 3 left
  const Json ls_gpu = c.Gpus("ls1");
  ASSERT_EQ(ls_gpu.size(), 1u);
  // A BE share takes no idle GPU on n1 (the LS share's GPU has room), one on n2.
  const ExtenderFilterResult r = c.Filter(PodOf("be3", "BE", 1, 500));
  EXPECT_EQ(r.node_names, std::vector<std::string>{"n1"});
  ASSERT_EQ(r.failed_nodes.count("n2"), 1u);
  EXPECT_EQ(r.failed_nodes.at("n2").rfind("headroom: ", 0), 0u);
  EXPECT_EQ(c.Place(PodOf("be3", "BE", 1, 500), "n1"), "");
  EXPECT_EQ(c.Gpus("be3"), ls_gpu);  // beside the LS share, not on an idle GPU
  EXPECT_EQ(c.State()["headroom"]["idle_gpus"], 3);
  // Whole LS pods still go.
  EXPECT_EQ(c.Place(PodOf("ls2", "LS", 2), "n2"), "");
}

// The headroom yields to a pod at risk of its class's SLO, as in the replay
// (ReplayTest.HeadroomYieldsToAPodAtRiskOfItsSlo): a Burstable pod (SLO 60 s) is held while
// it is fresh; once it has waited 15 s (a quarter of its SLO, since it was first seen) it may
// take the idle GPUs down to ceil(0.2 · 5) = 1, not below. A BE pod (no SLO) never may.
TEST(ServeHeadroom, YieldsToAPodAtRiskOfItsSloDownToTheKeptPart) {
  Cluster c(Static(5));                                 // 8 idle GPUs, 5 kept
  EXPECT_EQ(c.Place(PodOf("be1", "BE", 3), "n1"), "");  // leaves 5
  EXPECT_TRUE(c.Filter(PodOf("b1", "Burstable", 3)).node_names.empty());
  EXPECT_TRUE(c.Filter(PodOf("b2", "Burstable", 2)).node_names.empty());
  EXPECT_TRUE(c.Filter(PodOf("be2", "BE", 1)).node_names.empty());
  c.clock.Advance(14);
  EXPECT_TRUE(c.Filter(PodOf("b1", "Burstable", 3)).node_names.empty());
  c.clock.Advance(1);
  EXPECT_EQ(c.Filter(PodOf("b1", "Burstable", 3)).node_names, std::vector<std::string>{"n2"});
  EXPECT_TRUE(c.Filter(PodOf("be2", "BE", 1)).node_names.empty());
  EXPECT_EQ(c.Place(PodOf("b1", "Burstable", 3), "n2"), "");
  EXPECT_EQ(c.State()["headroom"]["idle_gpus"], 2);
  // b2 is at risk too, but two GPUs would leave none of the kept one; one GPU would not.
  EXPECT_TRUE(c.Filter(PodOf("b2", "Burstable", 2)).node_names.empty());
  EXPECT_EQ(c.Filter(PodOf("b2", "Burstable", 1)).node_names.size(), 2u);
}

TEST(ServeHeadroom, BacklogGrowsWithAnLsBurstAndShrinksAfterIt) {
  HeadroomOptions h;
  h.mode = HeadroomOptions::Mode::kBacklog;
  h.window_s = 600;
  h.bucket_s = 60;
  h.factor = 1;
  Cluster c(h);
  EXPECT_EQ(c.State()["headroom"]["target_gpus"], 0);
  // A burst: five LS pods of one GPU each within a minute.
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(c.Place(PodOf("ls" + std::to_string(i), "LS", 1), i < 3 ? "n1" : "n2"), "");
    c.clock.Advance(5);
  }
  const int grown = c.State()["headroom"]["target_gpus"];
  EXPECT_GE(grown, 3) << c.State()["headroom"].dump();
  EXPECT_LE(grown, 8);  // never more than the cluster has
  // BE is now held: 3 idle GPUs, all of them reserved.
  EXPECT_TRUE(c.Filter(PodOf("be1", "BE", 1)).node_names.empty());
  // Quiet for longer than the window: the burst ages out and BE goes again.
  for (int i = 0; i < 12; ++i) {
    c.clock.Advance(60);
    c.Filter(PodOf("probe", "BE", 1));  // the verbs move the headroom to the clock's now
  }
  EXPECT_EQ(c.State()["headroom"]["target_gpus"], 0);
  EXPECT_EQ(c.Place(PodOf("be1", "BE", 1), "n2"), "");
}

// The metric's value in the exposition `text`, or -1 when absent.
double MetricValue(const std::string& text, const std::string& series) {
  const size_t at = text.find("\n" + series + " ");
  return at == std::string::npos ? -1 : std::stod(text.substr(at + series.size() + 2));
}

// (model, target_gpus, idle_gpus) of each entry of /state's headroom.models, in order.
std::vector<std::tuple<std::string, int, int>> StateModels(const Json& state) {
  std::vector<std::tuple<std::string, int, int>> out;
  for (const Json& m : state["headroom"]["models"]) {
    out.emplace_back(m["model"], m["target_gpus"], m["idle_gpus"]);
  }
  return out;
}

constexpr char kA10Reason[] =
    "headroom: placing the pod here would take idle A10 GPUs kept for the classes that may use "
    "headroom (4 kept, 4 idle)";

TEST(ServeHeadroom, ModelFloorRefusesBeOnA10WhereTheClusterKeepsHAndAdmitsItOnV100) {
  HeadroomOptions h = Static(2);
  h.model_gpus = {{"A10", 4}, {"H100", 2}};  // H100: no such node, kept but matching none
  Cluster c(h, NodesOf({{"a1", "A10"}, {"a2", "A10"}, {"v1", "V100M16"}}));
  EXPECT_EQ(c.Place(PodOf("be1", "BE", 4), "a1"), "");  // A10: 8 idle -> 4, the floor
  // One more GPU of A10 would leave 3 < 4 of A10 (the cluster would keep 7 >= 2).
  const ExtenderFilterResult r = c.Filter(PodOf("be2", "BE", 1));
  EXPECT_EQ(r.node_names, std::vector<std::string>{"v1"});
  ASSERT_EQ(r.failed_nodes.count("a2"), 1u);  // resolvable: A10 GPUs may free up
  EXPECT_EQ(r.failed_nodes.at("a2"), kA10Reason);
  EXPECT_EQ(r.failed_nodes.count("a1"), 1u);  // full
  EXPECT_TRUE(r.failed_and_unresolvable_nodes.empty());
  // The fast codec says the same.
  const std::string json =
      c.ext->FilterJson(DecodeExtenderArgs(c.Body(PodOf("be2", "BE", 1))).value());
  EXPECT_EQ(Json::parse(json)["FailedNodes"]["a2"], kA10Reason) << json;
  EXPECT_EQ(Json::parse(json)["NodeNames"], Json::array({"v1"})) << json;
  // Bind applies the same rule.
  EXPECT_EQ(c.Place(PodOf("be2", "BE", 1), "a2"), std::string("refused: ") + kA10Reason);
  EXPECT_EQ(c.Place(PodOf("be2", "BE", 1), "v1"), "");
  // LS may use the A10 floor.
  EXPECT_EQ(c.Filter(PodOf("ls1", "LS", 1)).node_names, (std::vector<std::string>{"a2", "v1"}));
  EXPECT_EQ(c.Place(PodOf("ls1", "LS", 1), "a2"), "");

  // /state: every model of the cluster, then the named model it lacks.
  const Json state = c.State();
  EXPECT_EQ(state["headroom"]["target_gpus"], 2);
  EXPECT_EQ(state["headroom"]["idle_gpus"], 6);
  const std::vector<std::tuple<std::string, int, int>> want = {
      {"A10", 4, 3}, {"V100M16", 0, 3}, {"H100", 0, 0}};
  EXPECT_EQ(StateModels(state), want) << state["headroom"].dump();
  // The metrics: per model, every model of the cluster; the cluster-wide ones as before.
  const std::string m = c.ext->MetricsText();
  EXPECT_EQ(MetricValue(m, "tessera_model_idle_gpus{model=\"A10\"}"), 3) << m;
  EXPECT_EQ(MetricValue(m, "tessera_model_idle_gpus{model=\"V100M16\"}"), 3);
  EXPECT_EQ(MetricValue(m, "tessera_model_headroom_target_gpus{model=\"A10\"}"), 4);
  EXPECT_EQ(MetricValue(m, "tessera_model_headroom_target_gpus{model=\"V100M16\"}"), 0);
  EXPECT_EQ(MetricValue(m, "tessera_model_headroom_target_gpus{model=\"H100\"}"), -1);
  EXPECT_EQ(MetricValue(m, "tessera_headroom_target_gpus"), 2);
  EXPECT_EQ(MetricValue(m, "tessera_idle_gpus"), 6);
  // a2 refused for the A10 floor by Filter, FilterJson and the filters before be2's two binds:
  // counted as headroom refusals.
  EXPECT_EQ(MetricValue(m, "tessera_filter_rejections_total{reason=\"headroom\"}"), 4);
}

TEST(ServeHeadroom, ModelFloorAloneHoldsPodsAndCapsAtTheModelsGpus) {
  // No cluster-wide H; A10 asks for more than its 8 GPUs: all of them kept.
  HeadroomOptions h = Static(0);
  h.model_gpus = {{"A10", 100}};
  Cluster c(h, NodesOf({{"a1", "A10"}, {"a2", "A10"}, {"v1", "V100M16"}}));
  const ExtenderFilterResult r = c.Filter(PodOf("be1", "BE", 1));
  EXPECT_EQ(r.node_names, std::vector<std::string>{"v1"});
  EXPECT_EQ(r.failed_nodes.at("a1"),
            "headroom: placing the pod here would take idle A10 GPUs kept for the classes that "
            "may use headroom (8 kept, 8 idle)");
  const std::vector<std::tuple<std::string, int, int>> want = {{"A10", 8, 8}, {"V100M16", 0, 4}};
  EXPECT_EQ(StateModels(c.State()), want);
  // Without floors the same pod goes anywhere (the default is unchanged).
  Cluster plain(Static(0), NodesOf({{"a1", "A10"}, {"a2", "A10"}, {"v1", "V100M16"}}));
  EXPECT_EQ(plain.Filter(PodOf("be1", "BE", 1)).node_names.size(), 3u);
  const std::vector<std::tuple<std::string, int, int>> none = {{"A10", 0, 8}, {"V100M16", 0, 4}};
  EXPECT_EQ(StateModels(plain.State()), none);
}

}  // namespace
}  // namespace tessera::k8s
