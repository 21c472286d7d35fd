// Extender::FilterJson (the HTTP path) must say exactly what Filter says.

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "k8s/api/kube_api.h"
#include "k8s/api/objects.h"
#include "k8s/extender/extender.h"
#include "k8s/extender/extender_protocol.h"
#include "k8s/translate/translate.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;

Json NodeObject(const std::string& name, const std::string& cpu, int gpus, const std::string& model,
                bool cordoned = false) {
  return {{"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", {{"tessera.io/gpu-model", model}}}}},
          {"spec", {{"unschedulable", cordoned}}},
          {"status",
           {{"allocatable",
             {{"cpu", cpu}, {"memory", "64Gi"}, {"tessera.io/gpu", std::to_string(gpus)}}}}}};
}

std::string Nodes() {
  Json list = {{"items",
                {NodeObject("a", "16", 2, "A10"), NodeObject("b", "1", 2, "A10"),
                 NodeObject("c", "16", 1, "T4"), NodeObject("d", "16", 4, "A10", true),
                 NodeObject("e\"q", "16", 4, "A10")}}};
  return list.dump();
}

Json Pod(const std::string& milli, int gpus, const std::string& model = "") {
  Json pod = {{"metadata", {{"name", "p"}, {"namespace", "ml"}, {"uid", "u"}}},
              {"spec",
               {{"containers",
                 {{{"name", "c"},
                   {"resources",
                    {{"limits",
                      {{"cpu", "2"},
                       {"tessera.io/gpu", std::to_string(gpus)},
                       {"tessera.io/gpu-milli", milli}}}}}}}}}}};
  if (!model.empty()) pod["metadata"]["annotations"] = {{"tessera.io/gpu-model", model}};
  return pod;
}

TEST(ExtenderFilterJson, SaysWhatFilterSays) {
  Result<std::unique_ptr<Extender>> ext = Extender::FromJson(Nodes(), "", {});
  ASSERT_TRUE(ext.ok()) << ext.error().message;
  const Json names = {"e\"q", "d", "c", "b", "a", "ghost", "a"};
  const std::vector<Json> bodies = {
      {{"Pod", Pod("500", 1)}, {"Nodes", nullptr}, {"NodeNames", names}},
      {{"Pod", Pod("1000", 2)}, {"NodeNames", names}},
      {{"Pod", Pod("1000", 1, "T4")}, {"NodeNames", names}},
      {{"Pod", Pod("1000", 1)}, {"NodeNames", Json::array()}},
      {{"Pod", Pod("2000", 1)}, {"NodeNames", names}},  // PodToSpec rejects it
      {{"Pod", Pod("500", 1)},
       {"Nodes", {{"items", {NodeObject("a", "16", 2, "A10"), NodeObject("c", "16", 1, "T4")}}}}},
      {{"Pod", Pod("2000", 1)}, {"Nodes", {{"items", {NodeObject("a", "16", 2, "A10")}}}}},
  };
  for (const Json& body : bodies) {
    Result<ExtenderArgs> args = DecodeExtenderArgs(body.dump());
    ASSERT_TRUE(args.ok()) << args.error().message;
    const ExtenderFilterResult want = (*ext)->Filter(*args);
    const std::string json = (*ext)->FilterJson(*args);
    ASSERT_TRUE(Json::accept(json)) << json;
    Result<ExtenderFilterResult> got = DecodeExtenderFilterResult(json);
    ASSERT_TRUE(got.ok()) << got.error().message;
    EXPECT_EQ(*got, want) << body.dump() << "\n" << json;
  }
  // The counters saw both calls of each body.
  const std::string metrics = (*ext)->MetricsText();
  EXPECT_NE(metrics.find("tessera_filter_rejections_total{reason=\"unknown-node\"} 6"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("tessera_filter_rejections_total{reason=\"bad-pod\"} 4"),
            std::string::npos)
      << metrics;
}

TEST(ExtenderFilterJson, PrioritizeJsonSaysWhatPrioritizeSays) {
  Result<std::unique_ptr<Extender>> ext = Extender::FromJson(Nodes(), "", {});
  ASSERT_TRUE(ext.ok()) << ext.error().message;
  for (const Json& body : std::vector<Json>{
           {{"Pod", Pod("500", 1)}, {"NodeNames", {"e\"q", "d", "c", "b", "a", "ghost"}}},
           {{"Pod", Pod("1000", 2)}, {"NodeNames", Json::array()}},
           {{"Pod", Pod("2000", 1)}, {"NodeNames", {"a"}}},
           {{"Pod", Pod("500", 1)}, {"Nodes", {{"items", {NodeObject("a", "16", 2, "A10")}}}}}}) {
    Result<ExtenderArgs> args = DecodeExtenderArgs(body.dump());
    ASSERT_TRUE(args.ok()) << args.error().message;
    EXPECT_EQ((*ext)->PrioritizeJson(*args), EncodeHostPriorityList((*ext)->Prioritize(*args)))
        << body.dump();
  }
}

// Filter checks a fit once per scheduler group and prioritize scores one node per group:
// nodes in equal states (a, a2), listed twice, between cordoned and unknown ones, must be
// answered as if each were decided alone. Long unknown names among many known ones make
// prioritize's presized answer grow.
TEST(ExtenderFilterJson, NodesInEqualStatesAreAnsweredAlike) {
  Json list = {{"items",
                {NodeObject("a", "16", 2, "A10"), NodeObject("b", "1", 2, "A10"),
                 NodeObject("a2", "16", 2, "A10"), NodeObject("c", "16", 1, "T4"),
                 NodeObject("d", "16", 4, "A10", true), NodeObject("f", "16", 4, "A10")}}};
  Result<std::unique_ptr<Extender>> ext = Extender::FromJson(list.dump(), "", {});
  ASSERT_TRUE(ext.ok()) << ext.error().message;
  const std::string longest(100, '"');  // 200 bytes once escaped
  Json names = Json::array();
  for (int i = 0; i < 40; ++i) {
    for (const char* n : {"a", "b", "a2", "c", "d", "f", "a"}) names.push_back(n);
    if (i % 10 == 3) names.push_back(longest + std::to_string(i));
  }
  size_t distinct_scores = 0;
  for (const Json& pod : {Pod("500", 1), Pod("1000", 2), Pod("1000", 1, "T4"), Pod("1000", 4)}) {
    const Json body = {{"Pod", pod}, {"NodeNames", names}};
    Result<ExtenderArgs> args = DecodeExtenderArgs(body.dump());
    ASSERT_TRUE(args.ok()) << args.error().message;
    const std::string json = (*ext)->PrioritizeJson(*args);
    const HostPriorityList all = (*ext)->Prioritize(*args);
    EXPECT_EQ(json, EncodeHostPriorityList(all));
    const ExtenderFilterResult filtered = (*ext)->Filter(*args);
    ASSERT_TRUE(Json::accept((*ext)->FilterJson(*args)));
    // Each node alone in a list of the same distinct nodes gets the score and the fit it
    // got in the long list.
    const Json alone = {{"Pod", pod}, {"NodeNames", {"a", "b", "a2", "c", "d", "f"}}};
    Result<ExtenderArgs> few = DecodeExtenderArgs(alone.dump());
    ASSERT_TRUE(few.ok());
    std::map<std::string, int64_t> score_of;
    for (const HostPriority& h : (*ext)->Prioritize(*few)) score_of[h.host] = h.score;
    const ExtenderFilterResult filtered_few = (*ext)->Filter(*few);
    // "a" and "a2" are in equal states: alike, unless one of them is the engine's choice,
    // the one candidate that scores 10.
    if (score_of["a"] != 10 && score_of["a2"] != 10) {
      EXPECT_EQ(score_of["a"], score_of["a2"]);
    }
    int tens = 0;
    for (const auto& [host, score] : score_of) tens += score == 10;
    EXPECT_LE(tens, 1);
    ASSERT_EQ(all.size(), names.size());
    for (const HostPriority& h : all) {
      const bool unknown = h.host.size() > 50;
      EXPECT_EQ(h.score, unknown ? 0 : score_of[h.host]) << h.host;
    }
    const auto fits = [](const ExtenderFilterResult& r, const std::string& n) {
      return std::find(r.node_names.begin(), r.node_names.end(), n) != r.node_names.end();
    };
    for (const char* n : {"a", "b", "a2", "c", "d", "f"}) {
      EXPECT_EQ(fits(filtered, n), fits(filtered_few, n)) << n;
      EXPECT_EQ(filtered.failed_nodes.count(n), filtered_few.failed_nodes.count(n)) << n;
    }
    EXPECT_EQ(fits(filtered, "a"), fits(filtered, "a2"));
    // Filter decides the fit on its own path: a node it rejects has no score.
    std::set<int64_t> scores;
    for (const HostPriority& h : all) {
      if (!fits(filtered, h.host)) {
        EXPECT_EQ(h.score, 0) << h.host;
      }
      scores.insert(h.score);
    }
    distinct_scores = std::max(distinct_scores, scores.size());
  }
  EXPECT_GE(distinct_scores, 2u);  // some nodes fit, some do not
}

// The server's path (names as views into the body) answers byte for byte what the
// ExtenderArgs path answers, escaped names (general decoder) and full Nodes included.
TEST(ExtenderFilterJson, RefPathAnswersTheSameBytes) {
  Result<std::unique_ptr<Extender>> ext = Extender::FromJson(Nodes(), "", {});
  ASSERT_TRUE(ext.ok()) << ext.error().message;
  const std::vector<std::string> bodies = {
      Json{{"Pod", Pod("500", 1)}, {"Nodes", nullptr}, {"NodeNames", {"a", "b", "c", "d", "x"}}}
          .dump(),
      Json{{"Pod", Pod("500", 1)}, {"NodeNames", {"e\"q", "d", "c", "b", "a", "ghost", "a"}}}
          .dump(),
      Json{{"Pod", Pod("1000", 2)}, {"Nodes", nullptr}, {"NodeNames", Json::array()}}.dump(),
      Json{{"Pod", Pod("2000", 1)}, {"Nodes", nullptr}, {"NodeNames", {"a"}}}.dump(),
      Json{
          {"Pod", Pod("500", 1)},
          {"Nodes", {{"items", {NodeObject("a", "16", 2, "A10"), NodeObject("c", "16", 1, "T4")}}}}}
          .dump(),
      Json{{"Pod", Pod("500", 1)}, {"Nodes", nullptr}, {"NodeNames", {"gh\u00f6st", "a"}}}.dump(),
  };
  for (const std::string& body : bodies) {
    Result<ExtenderArgs> args = DecodeExtenderArgs(body);
    ASSERT_TRUE(args.ok()) << args.error().message;
    ExtenderArgsRef ref;
    ASSERT_TRUE(DecodeExtenderArgsRef(body, &ref).ok()) << body;
    EXPECT_EQ(std::vector<std::string>(ref.names.begin(), ref.names.end()), args->CandidateNames())
        << body;
    EXPECT_EQ((*ext)->FilterJson(ref), (*ext)->FilterJson(*args)) << body;
    EXPECT_EQ((*ext)->PrioritizeJson(ref), EncodeHostPriorityList((*ext)->Prioritize(*args)))
        << body;
  }
  ExtenderArgsRef bad;
  EXPECT_EQ(DecodeExtenderArgsRef(R"({"Pod":null,"NodeNames":["a"]})", &bad).error().message,
            DecodeExtenderArgs(R"({"Pod":null,"NodeNames":["a"]})").error().message);
}

// No candidates at all (NodeNames [] or null, Nodes.items []), as the first request of a thread
// (each HTTP connection has its own): the answer is the complete filter result, each key once.
// The writer once told its two failure maps apart by address, and on a thread that had never
// answered a candidate both were empty at the same address: the answer was
// {"Nodes":null,"NodeNames":[],"FailedNodes":{],"FailedNodes":{},"Error":""}.
TEST(ExtenderFilterJson, NoCandidatesOnAFreshThreadGetACompleteAnswer) {
  Result<std::unique_ptr<Extender>> ext = Extender::FromJson(Nodes(), "", {});
  ASSERT_TRUE(ext.ok()) << ext.error().message;
  const std::string by_names =
      R"({"Nodes":null,"NodeNames":[],"FailedNodes":{},"FailedAndUnresolvableNodes":{},)"
      R"("Error":""})";
  const std::string by_nodes =
      R"({"Nodes":{"metadata":{},"items":[]},"NodeNames":[],"FailedNodes":{},)"
      R"("FailedAndUnresolvableNodes":{},"Error":""})";
  const std::vector<std::pair<Json, std::string>> cases = {
      {{{"Pod", Pod("500", 1)}, {"Nodes", nullptr}, {"NodeNames", Json::array()}}, by_names},
      {{{"Pod", Pod("500", 1)}, {"Nodes", nullptr}, {"NodeNames", nullptr}}, by_names},
      {{{"Pod", Pod("500", 1)}}, by_names},
      {{{"Pod", Pod("500", 1)},
        {"Nodes", {{"metadata", Json::object()}, {"items", Json::array()}}}},
       by_nodes},
      {{{"Pod", Pod("500", 1)}, {"Nodes", Json::array()}}, by_nodes},
  };
  for (const auto& [body, want] : cases) {
    const std::string text = body.dump();
    std::string by_args, by_ref;
    // Each on a thread of its own, whose section lists have never held a candidate.
    std::thread([&] {
      Result<ExtenderArgs> args = DecodeExtenderArgs(text);
      ASSERT_TRUE(args.ok()) << args.error().message;
      by_args = (*ext)->FilterJson(*args);
    }).join();
    std::thread([&] {
      ExtenderArgsRef ref;
      ASSERT_TRUE(DecodeExtenderArgsRef(text, &ref).ok()) << text;
      by_ref = (*ext)->FilterJson(ref);
    }).join();
    EXPECT_EQ(by_args, want) << text;
    EXPECT_EQ(by_ref, want) << text;
    Result<ExtenderArgs> args = DecodeExtenderArgs(text);
    ASSERT_TRUE(args.ok());
    EXPECT_EQ(EncodeExtenderFilterResult((*ext)->Filter(*args)), want) << text;
  }
}

// A request that lists a node twice gets each rejected node once in its failure map (a JSON
// object names a key once; Filter's maps hold it once), and each fit twice in NodeNames, as
// Filter does. The answer once repeated the key ("n1":"...","n1":"...").
TEST(ExtenderFilterJson, NamesListedTwiceAreOneKeyOfTheFailureMaps) {
  Result<std::unique_ptr<Extender>> ext = Extender::FromJson(Nodes(), "", {});
  ASSERT_TRUE(ext.ok()) << ext.error().message;
  const Json body = {{"Pod", Pod("1000", 2)},
                     {"Nodes", nullptr},
                     {"NodeNames", {"b", "ghost", "a", "c", "b", "ghost", "a", "d", "c", "d"}}};
  for (const bool by_ref : {false, true}) {
    const std::string text = body.dump();
    Result<ExtenderArgs> args = DecodeExtenderArgs(text);
    ASSERT_TRUE(args.ok()) << args.error().message;
    ExtenderArgsRef ref;
    ASSERT_TRUE(DecodeExtenderArgsRef(text, &ref).ok());
    const std::string json = by_ref ? (*ext)->FilterJson(ref) : (*ext)->FilterJson(*args);
    for (const char* key : {"\"b\":", "\"ghost\":", "\"c\":", "\"d\":"}) {
      size_t n = 0;
      for (size_t at = json.find(key); at != std::string::npos; at = json.find(key, at + 1)) ++n;
      EXPECT_EQ(n, 1u) << key << " in " << json;
    }
    Result<ExtenderFilterResult> got = DecodeExtenderFilterResult(json);
    ASSERT_TRUE(got.ok()) << got.error().message;
    const ExtenderFilterResult want = (*ext)->Filter(*args);
    EXPECT_EQ(*got, want) << json;
    EXPECT_EQ(got->node_names, (std::vector<std::string>{"a", "a"}));
    EXPECT_EQ(got->failed_and_unresolvable_nodes.count("ghost"), 1u);
  }
}

// Candidates are resolved by position with a remembered guess: lists that change between
// requests (order, unknown names, length) must still be answered right.
TEST(ExtenderFilterJson, ChangingCandidateListsAreResolvedRight) {
  Result<std::unique_ptr<Extender>> ext = Extender::FromJson(Nodes(), "", {});
  ASSERT_TRUE(ext.ok()) << ext.error().message;
  const auto filter = [&](const Json& names) {
    Result<ExtenderArgs> args =
        DecodeExtenderArgs(Json{{"Pod", Pod("1000", 2)}, {"NodeNames", names}}.dump());
    EXPECT_TRUE(args.ok());
    return (*ext)->Filter(*args);
  };
  EXPECT_EQ(filter({"a", "b", "c"}).node_names, std::vector<std::string>{"a"});
  ExtenderFilterResult r = filter({"c", "ghost", "a", "e\"q"});
  EXPECT_EQ(r.node_names, (std::vector<std::string>{"a", "e\"q"}));
  EXPECT_EQ(r.failed_and_unresolvable_nodes.at("ghost"), "unknown node");
  EXPECT_EQ(r.failed_and_unresolvable_nodes.count("c"), 1u);
  r = filter({"ghost", "a"});
  EXPECT_EQ(r.node_names, std::vector<std::string>{"a"});
  EXPECT_EQ(r.failed_and_unresolvable_nodes.size(), 1u);
  EXPECT_EQ(filter({"b", "a", "b", "c", "d", "e\"q"}).node_names,
            (std::vector<std::string>{"a", "e\"q"}));
}

// The memo of NodeNames arrays: an array is remembered on its second sighting and then
// recognised byte for byte; any other array (one name changed, shorter, longer, other
// spacing) is scanned and answers its own names, and errors stay the general decoder's.
TEST(NodeNamesMemo, RecognisesOnlyTheSameArray) {
  NodeNamesMemo memo;
  const std::string pod = Json(Pod("500", 1)).dump();
  const auto body = [&](const std::string& names) {
    return R"({"Pod":)" + pod + R"(,"Nodes":null,"NodeNames":)" + names + "}";
  };
  const auto decode = [&](const std::string& b, ExtenderArgsRef* ref) {
    const Status s = DecodeExtenderArgsRef(b, ref, kDefaultMaxExtenderBodyBytes, &memo);
    Result<ExtenderArgs> want = DecodeExtenderArgs(b);
    EXPECT_EQ(s.ok(), want.ok()) << b;
    if (s.ok() && want.ok()) {
      EXPECT_EQ(std::vector<std::string>(ref->names.begin(), ref->names.end()),
                want->CandidateNames())
          << b;
    }
    return s;
  };
  const std::string list = R"(["a","b","c"])";
  ExtenderArgsRef first, second, third;
  ASSERT_TRUE(decode(body(list), &first).ok());
  EXPECT_EQ(first.names_id, 0u);  // first sighting: only its hash is kept
  ASSERT_TRUE(decode(body(list), &second).ok());
  EXPECT_NE(second.names_id, 0u);  // remembered now
  EXPECT_EQ(memo.hits(), 0u);
  std::string copy = body(list);  // another buffer with the same bytes
  ASSERT_TRUE(decode(copy, &third).ok());
  EXPECT_EQ(third.names_id, second.names_id);
  EXPECT_EQ(memo.hits(), 1u);
  EXPECT_EQ(third.names[1].data(), copy.data() + copy.find("\"b\"") + 1);  // views into it
  for (const std::string& other :
       {std::string(R"(["a","b","d"])"), std::string(R"(["a","b"])"),
        std::string(R"(["a","b","c","d"])"), std::string(R"([ "a","b","c"])"),
        std::string(R"(["a","b","c"] )"), std::string(R"(["a","b\u0063"])")}) {
    for (int round = 0; round < 3; ++round) {  // also once remembered
      ExtenderArgsRef ref;
      ASSERT_TRUE(decode(body(other), &ref).ok()) << other;
      EXPECT_NE(ref.names_id, second.names_id) << other;
    }
  }
  // A remembered array followed by a body the fast path refuses: the general decoder's answer.
  for (const std::string& bad : {body(list) + "x", R"({"Pod":null,"NodeNames":)" + list + "}",
                                 body(list.substr(0, list.size() - 1))}) {
    ExtenderArgsRef ref;
    const Status s = DecodeExtenderArgsRef(bad, &ref, kDefaultMaxExtenderBodyBytes, &memo);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.error().message, DecodeExtenderArgs(bad).error().message);
  }
  // The memo holds kSlots arrays: older ones are replaced, and then scanned again.
  for (int k = 0; k < 2 * static_cast<int>(NodeNamesMemo::kSlots); ++k) {
    const std::string names = "[\"n" + std::to_string(k) + "\"]";
    for (int round = 0; round < 2; ++round) {
      ExtenderArgsRef ref;
      ASSERT_TRUE(decode(body(names), &ref).ok());
    }
  }
  ExtenderArgsRef again;
  ASSERT_TRUE(decode(body(list), &again).ok());
  EXPECT_NE(again.names_id, second.names_id);
}

// The server's path with the memo answers what the ExtenderArgs path answers, request after
// request, while the candidate list and the cluster change: the node indices remembered for a
// list must follow binds (state) and node changes (API mode rebuilds the model).
/// Accepts every write (binds are then "assumed" until the pod is seen bound).
class AcceptingApi final : public KubeApi {
 public:
  ApiStatus List(const std::string&, const ListOptions&, ListPage*) override { return {}; }
  ApiStatus Watch(const std::string&, const std::string&, int,
                  const std::function<bool(std::string_view)>&,
                  const std::function<void()>&) override {
    return {};
  }
  void CancelWatches() override {}
  ApiStatus BindPod(const std::string&, const std::string&, const std::string&, const std::string&,
                    const std::map<std::string, std::string>&) override {
    return {};
  }
  ApiStatus PatchPodStatus(const std::string&, const std::string&,
                           const nlohmann::ordered_json&) override {
    return {};
  }
  ApiStatus DeletePod(const std::string&, const std::string&, const std::string&) override {
    return {};
  }
  ApiStatus CreateEvent(const std::string&, const nlohmann::ordered_json&) override { return {}; }
};

TEST(NodeNamesMemo, AnswersFollowTheClusterInApiMode) {
  AcceptingApi api;
  LiveOptions live;
  live.api = &api;
  Result<std::unique_ptr<Extender>> created = Extender::Create({}, live);
  ASSERT_TRUE(created.ok()) << created.error().message;
  Extender& ext = **created;
  const auto upsert = [&](const Json& node) {
    Result<Node> n = DecodeNode(node, "node");
    ASSERT_TRUE(n.ok()) << n.error().message;
    ASSERT_TRUE(ext.UpsertNode(*n).ok());
  };
  upsert(NodeObject("a", "16", 2, "A10"));
  upsert(NodeObject("b", "16", 2, "A10"));
  upsert(NodeObject("c", "16", 1, "T4"));
  ext.SyncChanged({true, ""});
  NodeNamesMemo memo;
  const std::string body =
      Json{{"Pod", Pod("1000", 2)}, {"Nodes", nullptr}, {"NodeNames", {"c", "b", "a", "z"}}}.dump();
  const auto check = [&](const std::string& what) {
    for (int round = 0; round < 3; ++round) {
      ExtenderArgsRef ref;
      EXPECT_TRUE(DecodeExtenderArgsRef(body, &ref, kDefaultMaxExtenderBodyBytes, &memo).ok());
      Result<ExtenderArgs> args = DecodeExtenderArgs(body);
      if (!args.ok()) return std::string();
      // (FilterJson lists the failure maps in request order: compare what they mean.)
      Result<ExtenderFilterResult> got = DecodeExtenderFilterResult(ext.FilterJson(ref));
      EXPECT_TRUE(got.ok() && *got == ext.Filter(*args)) << what;
      EXPECT_EQ(ext.PrioritizeJson(ref), EncodeHostPriorityList(ext.Prioritize(*args))) << what;
    }
    ExtenderArgsRef ref;
    EXPECT_TRUE(DecodeExtenderArgsRef(body, &ref, kDefaultMaxExtenderBodyBytes, &memo).ok());
    EXPECT_NE(ref.names_id, 0u) << what;
    return ext.FilterJson(ref);
  };
  std::string answer = check("start");
  EXPECT_NE(answer.find(R"("NodeNames":["b","a"])"), std::string::npos) << answer;
  EXPECT_NE(answer.find(R"("z":"unknown node")"), std::string::npos) << answer;
  // A new node "z" sorts last: the model is rebuilt, indices stay; "z" now fits.
  upsert(NodeObject("z", "16", 2, "A10"));
  answer = check("z added");
  EXPECT_NE(answer.find(R"("NodeNames":["b","a","z"])"), std::string::npos) << answer;
  // "a" deleted: every node after it moves down one index.
  ext.DeleteNode("a");
  answer = check("a deleted");
  EXPECT_NE(answer.find(R"("NodeNames":["b","z"])"), std::string::npos) << answer;
  EXPECT_NE(answer.find(R"("a":"unknown node")"), std::string::npos) << answer;
  // "0" sorts first: every index moves up one.
  upsert(NodeObject("0", "16", 2, "A10"));
  upsert(NodeObject("a", "16", 2, "A10"));
  answer = check("0 and a added");
  EXPECT_NE(answer.find(R"("NodeNames":["b","a","z"])"), std::string::npos) << answer;
  // Cordoning changes the answer without changing indices.
  upsert(NodeObject("b", "16", 2, "A10", true));
  answer = check("b cordoned");
  EXPECT_NE(answer.find(R"("NodeNames":["a","z"])"), std::string::npos) << answer;
  // A bind through the API fills "a" (assumed allocation): the same list no longer fits there.
  ASSERT_EQ(ext.Bind({"p", "ml", "u", "a"}).error, "");
  answer = check("u bound to a");
  EXPECT_NE(answer.find(R"("NodeNames":["z"])"), std::string::npos) << answer;
  EXPECT_NE(answer.find(R"("a":"gpu: not enough GPU left")"), std::string::npos) << answer;
  // The watch shows another pod bound to "z": nothing fits any more.
  Json bound = Pod("1000", 2);
  bound["metadata"]["uid"] = "w";
  bound["metadata"]["name"] = "w";
  bound["spec"]["nodeName"] = "z";
  Result<k8s::Pod> pod = DecodePod(bound, "pod");
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  ASSERT_TRUE(ext.UpsertPod(*pod).ok());
  answer = check("w seen on z");
  EXPECT_NE(answer.find(R"("NodeNames":[])"), std::string::npos) << answer;
}

// Before the initial sync every candidate is refused, whichever verb comes first; once the
// sync comes, the model is built and the answers use its node names (JSON filter and
// prioritize once read them from before a rebuild).
TEST(NodeNamesMemo, RequestsBeforeTheSyncAreRefusedThenAnsweredFromTheBuiltModel) {
  AcceptingApi api;
  LiveOptions live;
  live.api = &api;
  for (const bool prioritize_first : {false, true}) {
    Result<std::unique_ptr<Extender>> created = Extender::Create({}, live);
    ASSERT_TRUE(created.ok()) << created.error().message;
    Extender& ext = **created;
    for (const char* name : {"a", "b", "c"}) {
      Result<Node> n = DecodeNode(NodeObject(name, "16", 2, "A10"), "node");
      ASSERT_TRUE(n.ok()) << n.error().message;
      ASSERT_TRUE(ext.UpsertNode(*n).ok());
    }
    const std::string body =
        Json{{"Pod", Pod("1000", 2)}, {"Nodes", nullptr}, {"NodeNames", {"c", "a", "z"}}}.dump();
    ExtenderArgsRef ref;
    ASSERT_TRUE(DecodeExtenderArgsRef(body, &ref, kDefaultMaxExtenderBodyBytes, nullptr).ok());
    if (prioritize_first) {
      EXPECT_EQ(ext.PrioritizeJson(ref),
                R"([{"Host":"c","Score":0},{"Host":"a","Score":0},{"Host":"z","Score":0}])");
    }
    const std::string refused = ext.FilterJson(ref);
    EXPECT_NE(
        refused.find(
            R"("NodeNames":[],"FailedNodes":{},"FailedAndUnresolvableNodes":{"c":"not-synced: )"),
        std::string::npos)
        << refused;
    ext.SyncChanged({true, ""});
    if (prioritize_first) {
      // The two nodes are alike: one is the engine's choice (10), the other at most 5.
      const std::string answer = ext.PrioritizeJson(ref);
      EXPECT_TRUE(
          answer == R"([{"Host":"c","Score":10},{"Host":"a","Score":5},{"Host":"z","Score":0}])" ||
          answer == R"([{"Host":"c","Score":5},{"Host":"a","Score":10},{"Host":"z","Score":0}])")
          << answer;
    }
    EXPECT_EQ(ext.FilterJson(ref),
              R"({"Nodes":null,"NodeNames":["c","a"],"FailedNodes":{},)"
              R"("FailedAndUnresolvableNodes":{"z":"unknown node"},"Error":""})");
  }
}

// File mode: binds change the answers for a remembered list (nothing about the cluster's
// state is cached with it).
TEST(NodeNamesMemo, AnswersFollowBinds) {
  const Json nodes = {{"items",
                       {NodeObject("a", "16", 2, "A10"), NodeObject("b", "1", 2, "A10"),
                        NodeObject("f", "16", 4, "A10")}}};
  Result<std::unique_ptr<Extender>> ext = Extender::FromJson(nodes.dump(), "", {});
  ASSERT_TRUE(ext.ok()) << ext.error().message;
  NodeNamesMemo memo;
  const auto body = [](const std::string& uid) {
    Json pod = Pod("1000", 2);
    pod["metadata"]["uid"] = uid;
    pod["metadata"]["name"] = uid;
    return Json{{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", {"a", "f", "b"}}}.dump();
  };
  std::vector<std::string> fits;
  for (int k = 0; k < 5; ++k) {
    const std::string uid = "u" + std::to_string(k);
    const std::string b = body(uid);
    ExtenderArgsRef ref;
    ASSERT_TRUE(DecodeExtenderArgsRef(b, &ref, kDefaultMaxExtenderBodyBytes, &memo).ok());
    Result<ExtenderArgs> args = DecodeExtenderArgs(b);
    ASSERT_TRUE(args.ok());
    const ExtenderFilterResult want = (*ext)->Filter(*args);
    const std::string got = (*ext)->FilterJson(ref);
    EXPECT_EQ(got, (*ext)->FilterJson(*args)) << k;  // the same bytes without the memo
    Result<ExtenderFilterResult> decoded = DecodeExtenderFilterResult(got);
    EXPECT_TRUE(decoded.ok() && decoded->node_names == want.node_names) << got;
    EXPECT_EQ((*ext)->PrioritizeJson(ref), EncodeHostPriorityList((*ext)->Prioritize(*args)));
    if (want.node_names.empty()) {
      fits.push_back("");
      continue;
    }
    fits.push_back(want.node_names.front());
    ASSERT_EQ((*ext)->Bind({uid, "ml", uid, want.node_names.front()}).error, "");
  }
  // a (2 GPUs) takes one pod, f (4 GPUs) two; then nothing fits.
  EXPECT_EQ(fits, (std::vector<std::string>{"a", "f", "f", "", ""}));
  EXPECT_GE(memo.hits(), 2u);
}

}  // namespace
}  // namespace tessera::k8s
