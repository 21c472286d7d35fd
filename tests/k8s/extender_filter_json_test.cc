// Extender::FilterJson (the HTTP path) must say exactly what Filter says.

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "k8s/extender.h"
#include "k8s/extender_protocol.h"

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

}  // namespace
}  // namespace tessera::k8s
