// Headroom in `tessera serve`: idle GPUs kept for the classes that may use headroom (LS by
// default). A BE pod is refused where placing it would leave fewer idle GPUs than the target
// (the reason names the headroom) and admitted where it would not (a share on a used GPU
// takes no idle one, and bind puts it there); an LS pod uses the headroom; the backlog mode
// grows with an LS burst and shrinks once it ages out of the window.

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "k8s/extender/extender.h"
#include "k8s/extender/extender_protocol.h"
#include "util/clock.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;

Json Nodes() {
  Json items = Json::array();
  for (const char* name : {"n1", "n2"}) {
    Json alloc = {{"cpu", "64"}, {"memory", "256Gi"}, {"pods", "110"}, {"tessera.io/gpu", "4"}};
    items.push_back({{"apiVersion", "v1"},
                     {"kind", "Node"},
                     {"metadata",
                      {{"name", name},
                       {"uid", std::string("uid-") + name},
                       {"labels", {{"tessera.io/gpu-model", "A10"}}}}},
                     {"spec", Json::object()},
                     {"status", {{"allocatable", alloc}, {"capacity", alloc}}}});
  }
  return {{"apiVersion", "v1"}, {"kind", "NodeList"}, {"items", items}};
}

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
  explicit Cluster(HeadroomOptions headroom) {
    ExtenderOptions options;
    options.headroom = headroom;
    options.clock = &clock;
    options.filter_pass_seconds = 0;
    ext = std::move(Extender::FromJson(Nodes().dump(), "", options).value());
  }
  ExtenderFilterResult Filter(const Json& pod) {
    Json body = {{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", {"n1", "n2"}}};
    return ext->Filter(DecodeExtenderArgs(body.dump()).value());
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

}  // namespace
}  // namespace tessera::k8s
