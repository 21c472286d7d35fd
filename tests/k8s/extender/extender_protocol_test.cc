#include "k8s/extender/extender_protocol.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "k8s/api/json_util.h"
#include "k8s/api/objects.h"
#include "k8s/api/quantity.h"
#include "k8s/hami/register.h"
#include "k8s/testdata.h"
#include "k8s/translate/translate.h"
#include "util/rng.h"

namespace tessera::k8s {
namespace {

// Fixtures as kubectl printed them (pretty, with \u003c escapes).
const std::string& PodJson() {
  static const std::string s = ReadTestdata("pod_tessera.json");
  return s;
}
const std::string& NodeHamiJson() {
  static const std::string s = ReadTestdata("node_hami.json");
  return s;
}
const std::string& NodeTesseraJson() {
  static const std::string s = ReadTestdata("node_tessera.json");
  return s;
}

template <typename T>
T Must(Result<T> r) {
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(r).value() : T{};
}

template <typename T>
std::string ErrorOf(const Result<T>& r) {
  EXPECT_FALSE(r.ok()) << "decoded without error";
  return r.ok() ? "" : r.error().message;
}

// ---------------------------------------------------------------------------- ExtenderArgs

TEST(K8sExtenderProtocol, ArgsWithNodeNamesAnyKeyCase) {
  const std::vector<std::string> bodies = {
      R"({"Pod":)" + PodJson() + R"(,"Nodes":null,"NodeNames":["n1","n2"]})",
      R"({"pod":)" + PodJson() + R"(,"nodes":null,"nodenames":["n1","n2"]})",
      R"({"POD":)" + PodJson() + R"(,"NODENAMES":["n1","n2"],"Unknown":{"x":[1,{}]}})",
      R"( { "nodeNames" : [ "n1" , "n2" ] , "pOd" : )" + PodJson() + " }\n",
  };
  for (const std::string& body : bodies) {
    const ExtenderArgs args = Must(DecodeExtenderArgs(body));
    EXPECT_EQ(args.pod.name, "infer-0");
    EXPECT_EQ(args.pod.annotations.at("note"), "a <b> & c");
    EXPECT_FALSE(args.nodes.has_value());
    EXPECT_TRUE(args.nodes_json.empty());
    ASSERT_TRUE(args.node_names.has_value());
    EXPECT_EQ(*args.node_names, (std::vector<std::string>{"n1", "n2"}));
    EXPECT_EQ(args.CandidateNames(), (std::vector<std::string>{"n1", "n2"}));
    const PodSpec spec = Must(PodToSpec(args.pod));
    EXPECT_EQ(spec.gpu_milli, 500);
  }
}

TEST(K8sExtenderProtocol, ArgsExactKeyWinsOverFoldedOne) {
  const ExtenderArgs args = Must(DecodeExtenderArgs(
      R"({"nodenames":["folded"],"NodeNames":["exact"],"Pod":{"metadata":{"name":"p"}}})"));
  EXPECT_EQ(*args.node_names, std::vector<std::string>{"exact"});
}

// kube-scheduler's own body shape takes a fast path (no JSON tree for NodeNames); any other
// spelling takes the general one. Both must give the same answer, errors included: "pOd"
// forces the general path without changing what Go would decode.
TEST(K8sExtenderProtocol, FastAndGeneralPathsAgree) {
  const std::string pod = PodJson();
  std::vector<std::string> bodies = {
      R"({"Pod":)" + pod + R"(,"Nodes":null,"NodeNames":["n1","n2"]})",
      R"({"Pod":)" + pod + R"(,"Nodes":null,"NodeNames":[]})",
      R"({"Pod":)" + pod + R"(,"Nodes":null,"NodeNames":null})",
      R"( {"NodeNames" : [ "n1" ] ,"Pod" :)" + pod + "}\n",
      R"({"Pod":)" + pod + R"(,"NodeNames":["n\u0031","\u003cx\u003e"]})",
      R"({"Pod":)" + pod + R"(,"NodeNames":["n1",7]})",
      R"({"Pod":)" + pod + R"(,"NodeNames":["n1"],"NodeNames":["n2"]})",
      R"({"Pod":)" + pod + R"(,"Pod":{"metadata":{"name":"second"}},"NodeNames":["n1"]})",
      R"({"Pod":null,"NodeNames":["n1"]})",
      R"({"Pod":{"spec":{"priority":"high"}},"NodeNames":["n1"]})",
      R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":["n1"]} x)",
      R"({"Pod":{"metadata":{"name":"p\ud800"}},"NodeNames":["n1"]})",
      R"({"Pod":{"metadata":{"name":"p"}},"Nodes":null,"NodeNames":["n1")",
      R"({"Pod":{"metadata":{"name":"p"}},"Nodes":nul,"NodeNames":["n1"]})",
      R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":["n1"],})",
      R"({"Pod":{"metadata":{"name":"p"}} "NodeNames":["n1"]})",
      R"({"Pod":[1,2,{"a":"}"}],"NodeNames":["n1"]})",
      R"({"Pod":"x","NodeNames":["n1"]})",
      R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":["n1\t"]})",
  };
  bodies.push_back("{\"Pod\":" + std::string(300, '[') + std::string(300, ']') +
                   ",\"NodeNames\":[\"n1\"]}");
  bodies.push_back("{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[\"n\xff\"]}");
  for (const std::string& body : bodies) {
    std::string general = body;
    const size_t at = general.find("\"Pod\"");
    ASSERT_NE(at, std::string::npos);
    general.replace(at, 5, "\"pOd\"");
    Result<ExtenderArgs> fast = DecodeExtenderArgs(body);
    Result<ExtenderArgs> slow = DecodeExtenderArgs(general);
    // The server's decoder (names as views) agrees as well, without and with a memo of
    // NodeNames arrays (first sighting, remembered, recognised).
    NodeNamesMemo memo;
    for (int round = 0; round < 4; ++round) {
      ExtenderArgsRef ref;
      const Status s = round == 0
                           ? DecodeExtenderArgsRef(body, &ref)
                           : DecodeExtenderArgsRef(body, &ref, kDefaultMaxExtenderBodyBytes, &memo);
      ASSERT_EQ(s.ok(), slow.ok()) << body;
      if (!s.ok()) {
        EXPECT_EQ(s.error().message, slow.error().message) << body;
      } else {
        EXPECT_EQ(ref.has_node_names, slow->node_names.has_value()) << body;
        EXPECT_EQ(std::vector<std::string>(ref.names.begin(), ref.names.end()),
                  slow->CandidateNames())
            << body;
        EXPECT_EQ(ref.args.pod.name, slow->pod.name) << body;
      }
    }
    ASSERT_EQ(fast.ok(), slow.ok()) << body << "\n"
                                    << (fast.ok() ? slow.error().message : fast.error().message);
    if (!fast.ok()) {
      EXPECT_EQ(fast.error().message, slow.error().message) << body;
      continue;
    }
    EXPECT_EQ(fast->pod.name, slow->pod.name) << body;
    EXPECT_EQ(fast->pod.uid, slow->pod.uid) << body;
    EXPECT_EQ(fast->pod.labels, slow->pod.labels) << body;
    EXPECT_EQ(fast->pod.annotations, slow->pod.annotations) << body;
    EXPECT_EQ(fast->pod.priority, slow->pod.priority) << body;
    EXPECT_EQ(fast->node_names, slow->node_names) << body;
    EXPECT_EQ(fast->nodes.has_value(), slow->nodes.has_value()) << body;
  }
}

// The fast path (simdjson On-Demand) takes kube-scheduler's body with any names it can leave as
// views into the body, non-ASCII ones included, and declines everything else, which the general
// path then decides: each body decodes the same in place (body_capacity with the padding), from
// a padded copy, with a memo of NodeNames arrays, and by the general path.
TEST(K8sExtenderProtocol, FastPathTakesPlainNamesAndDeclinesTheRest) {
  const std::string pod = PodJson();
  const std::string p = R"({"Pod":)" + pod;
  std::string many = p + R"(,"Nodes":null,"NodeNames":[)";
  for (int i = 0; i < 3000; ++i) many += (i > 0 ? ",\"" : "\"") + std::to_string(i % 10) + "\"";
  many += "]}";
  // Arrays nested `arrays` deep in the Pod: the body is two deeper.
  const auto deep = [](int arrays) {
    return R"({"Pod":{"metadata":{"name":"p"},"x":)" + std::string(arrays, '[') +
           std::string(arrays, ']') + R"(},"NodeNames":["n1"]})";
  };
  const std::vector<std::string> taken = {
      p + R"(,"Nodes":null,"NodeNames":["n1","n2"]})",
      p + R"(,"Nodes":null,"NodeNames":[]})",
      p + R"(,"Nodes" : null , "NodeNames" : [ ] })",
      R"( {"NodeNames" : [ "n1" , "n2" ]
,	"Pod" :)" +
          pod + ", \"Nodes\" : null }\n",
      p + R"(,"NodeNames":["","n 1","n)" + std::string("\x7f") + R"("]})",
      p + ",\"NodeNames\":[\"n\xc3\xa9ud-1\",\"\xe8\x8a\x82\xe7\x82\xb9\",\"\xf0\x9f\x9a\x80\"]}",
      many,
      deep(kMaxJsonDepth - 2),
  };
  const std::vector<std::string> declined = {
      p + R"(,"Nodes":null,"NodeNames":null})",  // no names to view: same as general anyway
      p + R"(,"NodeNames":["n\u0031","\u003cx\u003e"]})",
      p + R"(,"NodeNames":["a\"b"]})",
      p + R"(,"NodeNames":["n1\\"]})",
      R"({"P\u006fd":)" + pod + R"(,"NodeNames":["n1"]})",
      p + R"(,"NodeNames":["n1"],"Extra":1})",
      p + R"(,"Nodes":{"items":[]},"NodeNames":["n1"]})",
      p + R"(,"NodeNames":["n1" "n2"]})",
      p + R"(,"NodeNames":["n1"]}})",
      p + R"(,"NodeNames":["n1"]} x)",
      p + R"(,"NodeNames":"n1"})",
      p + R"(,"NodeNames":["n1",null]})",
      p + R"(,"NodeNames":["n1"],"NodeNames":["n2"]})",
      p + ",\"NodeNames\":[\"n\xc3\"]}",
      p + ",\"NodeNames\":[\"n\x01\"]}",
      R"({"Pod":[],"NodeNames":["n1"]})",
      R"({"Pod":{"metadata":{"name":"p"]},"NodeNames":["n1"]})",
      deep(kMaxJsonDepth - 1),
  };
  const auto check = [&](const std::string& body, bool fast) {
    SCOPED_TRACE(body.size() > 300 ? body.substr(body.size() - 300) : body);
    std::string general = body;
    const size_t at = general.find("\"Pod\"");
    if (at != std::string::npos) general.replace(at, 5, "\"pOd\"");
    ExtenderArgsRef slow;
    const Status want = DecodeExtenderArgsRef(general, &slow);
    std::string padded;
    padded.reserve(body.size() + kExtenderBodyPadding);
    padded = body;
    NodeNamesMemo memo;
    for (int round = 0; round < 5; ++round) {  // copy, in place, memo x3 (remembered on the 2nd)
      ExtenderArgsRef ref;
      const Status s = round == 0
                           ? DecodeExtenderArgsRef(padded, &ref)
                           : DecodeExtenderArgsRef(padded, &ref, kDefaultMaxExtenderBodyBytes,
                                                   round >= 2 ? &memo : nullptr, padded.capacity());
      ASSERT_EQ(s.ok(), want.ok()) << (want.ok() ? s.error().message : want.error().message);
      if (!s.ok()) {
        EXPECT_EQ(s.error().message, want.error().message);
        continue;
      }
      EXPECT_EQ(ref.has_node_names, slow.has_node_names);
      EXPECT_EQ(std::vector<std::string>(ref.names.begin(), ref.names.end()),
                std::vector<std::string>(slow.names.begin(), slow.names.end()));
      EXPECT_EQ(ref.args.pod.name, slow.args.pod.name);
      EXPECT_EQ(ref.args.pod.annotations, slow.args.pod.annotations);
      EXPECT_EQ(ref.args.pod.requests, slow.args.pod.requests);
      // The fast path leaves args.node_names unset: the names are views into the body.
      EXPECT_EQ(!ref.args.node_names.has_value() && ref.has_node_names, fast);
      for (const std::string_view name : ref.names) {
        if (!fast) break;
        EXPECT_TRUE(name.data() >= padded.data() && name.data() < padded.data() + padded.size());
      }
      if (round == 4 && fast) {
        EXPECT_NE(ref.names_id, 0u);
      }
    }
    Result<ExtenderArgs> args = DecodeExtenderArgs(body);
    ASSERT_EQ(args.ok(), want.ok());
    if (args.ok()) {
      EXPECT_EQ(args->CandidateNames(),
                std::vector<std::string>(slow.names.begin(), slow.names.end()));
    }
  };
  for (const std::string& body : taken) check(body, true);
  for (const std::string& body : declined) check(body, false);
}

// A remembered NodeNames array at the end of the body is not read again: the text before it is
// parsed with "[]" in its place. That text must still be kube-scheduler's object, with the
// array as the value of NodeNames; anything else is read in full.
TEST(K8sExtenderProtocol, RememberedArrayAtTheEndIsTheNodeNamesValue) {
  const std::string pod = PodJson();
  const std::string list = R"(["a","b","c"])";
  NodeNamesMemo memo;
  const auto decode = [&](const std::string& body, ExtenderArgsRef* ref) {
    return DecodeExtenderArgsRef(body, ref, kDefaultMaxExtenderBodyBytes, &memo);
  };
  const std::string plain = R"({"Pod":)" + pod + R"(,"Nodes":null,"NodeNames":)" + list + "}";
  uint64_t id = 0;
  for (int sighting = 0; sighting < 2; ++sighting) {
    ExtenderArgsRef ref;
    ASSERT_TRUE(decode(plain, &ref).ok());
    id = ref.names_id;
  }
  ASSERT_NE(id, 0u);
  const auto general = [](std::string body) {
    const size_t at = body.find("\"Pod\"");
    if (at != std::string::npos) body.replace(at, 5, "\"pOd\"");
    return DecodeExtenderArgs(body);
  };
  struct Case {
    std::string body;
    bool hit;  ///< the remembered array is NodeNames' value
  };
  const std::vector<Case> cases = {
      {R"({"Pod":)" + pod + R"(,"Nodes":null,"NodeNames":)" + list + " \n}\n", true},
      {R"({"Nodes":null,"Pod":)" + pod + R"(,"NodeNames" : )" + list + "}", true},
      {R"({"NodeNames":)" + list + R"(,"Pod":)" + pod + "}", true},  // read in full, recognised
      {R"({"Pod":)" + pod + R"(,"NodeNames":["z"],"Extra":)" + list + "}", false},
      {R"({"NodeNames":["q"],"Pod":)" + pod + R"(,"NodeNames":)" + list + "}", false},
      {R"({"Pod":)" + pod + R"(,"Nodes":)" + list + "}", false},
      {R"({"Pod":)" + pod + R"(,"nodenames":)" + list + "}", false},
      {R"({"Pod":null,"NodeNames":)" + list + "}", false},
      {R"({"Pod":)" + pod + R"(,"NodeNames":[)" + list + "]}", false},
      {R"({"Pod":)" + pod + R"(,"NodeNames":)" + list + "}}", false},
      {R"({"Pod":)" + pod + R"(,"NodeNames")" + list + "}", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body.substr(c.body.size() > 120 ? c.body.size() - 120 : 0));
    const uint64_t hits = memo.hits();
    ExtenderArgsRef ref;
    const Status s = decode(c.body, &ref);
    const Result<ExtenderArgs> want = general(c.body);
    ASSERT_EQ(s.ok(), want.ok());
    if (!s.ok()) {
      EXPECT_EQ(s.error().message, want.error().message);
    } else {
      EXPECT_EQ(std::vector<std::string>(ref.names.begin(), ref.names.end()),
                want->CandidateNames());
      EXPECT_EQ(ref.args.pod.name, want->pod.name);
    }
    EXPECT_EQ(ref.names_id == id, c.hit);
    EXPECT_EQ(memo.hits(), hits + (c.hit ? 1 : 0));
    if (c.hit) {
      EXPECT_EQ(ref.names[2].data(), c.body.data() + c.body.rfind("\"c\"") + 1);  // views into it
    }
  }
}

TEST(K8sExtenderProtocol, ArgsWithNodeList) {
  const std::string body = R"({"Pod":)" + PodJson() + R"(,"Nodes":{"metadata":{},"items":[)" +
                           NodeHamiJson() + "," + NodeTesseraJson() + R"(]},"NodeNames":null})";
  const ExtenderArgs args = Must(DecodeExtenderArgs(body));
  ASSERT_TRUE(args.nodes.has_value());
  ASSERT_EQ(args.nodes->size(), 2u);
  EXPECT_FALSE(args.node_names.has_value());
  EXPECT_EQ(args.CandidateNames(), (std::vector<std::string>{"gpu-node-1", "a10-7"}));
  EXPECT_EQ((*args.nodes)[1].json_path, "Nodes.items[1]");
  EXPECT_EQ(Must(NodeToSpec((*args.nodes)[0])).gpu_count, 2);
  // The kept node text is the same JSON value as the input.
  ASSERT_EQ(args.nodes_json.size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(args.nodes_json[0]), nlohmann::json::parse(NodeHamiJson()));
  EXPECT_EQ(nlohmann::json::parse(args.nodes_json[1]), nlohmann::json::parse(NodeTesseraJson()));

  // A bare array is accepted too; absent fields are nullopt.
  const ExtenderArgs bare =
      Must(DecodeExtenderArgs(R"({"Pod":{},"nodes":[)" + NodeTesseraJson() + "]}"));
  EXPECT_EQ(bare.CandidateNames(), std::vector<std::string>{"a10-7"});
  EXPECT_EQ((*bare.nodes)[0].json_path, "Nodes[0]");  // paths use the Go field name
  const ExtenderArgs none = Must(DecodeExtenderArgs(R"({"Pod":{}})"));
  EXPECT_FALSE(none.nodes.has_value());
  EXPECT_FALSE(none.node_names.has_value());
  EXPECT_TRUE(none.CandidateNames().empty());
  const ExtenderArgs empty_list = Must(DecodeExtenderArgs(R"({"Pod":{},"Nodes":{"items":null}})"));
  ASSERT_TRUE(empty_list.nodes.has_value());
  EXPECT_TRUE(empty_list.nodes->empty());
}

TEST(K8sExtenderProtocol, ArgsErrorsNameThePath) {
  EXPECT_EQ(ErrorOf(DecodeExtenderArgs(R"({"Pod":{},"NodeNames":["a","b",3]})")),
            "NodeNames[2]: expected string, got number");
  EXPECT_EQ(ErrorOf(DecodeExtenderArgs(R"({"Pod":{},"NodeNames":"a"})")),
            "NodeNames: expected array, got string");
  EXPECT_EQ(ErrorOf(DecodeExtenderArgs(R"({"NodeNames":[]})")), "Pod: missing");
  EXPECT_EQ(ErrorOf(DecodeExtenderArgs(R"({"Pod":null})")), "Pod: missing");
  EXPECT_EQ(ErrorOf(DecodeExtenderArgs(R"({"Pod":[]})")), "Pod: expected Pod object, got array");
  EXPECT_EQ(ErrorOf(DecodeExtenderArgs(R"({"Pod":{},"Nodes":"n1"})")),
            "Nodes: expected NodeList object, got string");
  EXPECT_EQ(ErrorOf(DecodeExtenderArgs(R"({"Pod":{},"Nodes":{"items":{}}})")),
            "Nodes.items: expected array, got object");
  EXPECT_EQ(ErrorOf(DecodeExtenderArgs(
                R"({"Pod":{},"Nodes":{"items":[{},{"status":{"allocatable":{"cpu":"1x"}}}]}})")),
            "Nodes.items[1].status.allocatable.cpu: bad quantity \"1x\" (unknown suffix \"x\")");
  EXPECT_EQ(ErrorOf(DecodeExtenderArgs(R"({"Pod":{"spec":{"containers":[{"resources":{"limits":
                {"memory":"12Zi"}}}]}}})")),
            "Pod.spec.containers[0].resources.limits.memory: bad quantity \"12Zi\" (unknown "
            "suffix \"Zi\")");
  EXPECT_EQ(ErrorOf(DecodeExtenderArgs("[]")), "ExtenderArgs: expected object, got array");
  EXPECT_EQ(ErrorOf(DecodeExtenderArgs("")), "ExtenderArgs: empty body");
  EXPECT_EQ(ErrorOf(DecodeExtenderArgs(" \n")), "ExtenderArgs: empty body");
}

TEST(K8sExtenderProtocol, MalformedTruncatedAndOversizedBodies) {
  const std::string body = R"({"Pod":{},"NodeNames":["n1"]})";
  const std::string truncated = body.substr(0, 23);  // {"Pod":{},"NodeNames":[
  const std::string e = ErrorOf(DecodeExtenderArgs(truncated));
  EXPECT_EQ(e.rfind("ExtenderArgs: malformed JSON at byte 23: ", 0), 0u) << e;
  EXPECT_NE(e.find("unexpected end of input"), std::string::npos) << e;
  const std::string garbage = ErrorOf(DecodeExtenderArgs(R"({"Pod":{}, x})"));
  EXPECT_EQ(garbage.rfind("ExtenderArgs: malformed JSON at byte 11: ", 0), 0u) << garbage;
  EXPECT_EQ(ErrorOf(DecodeExtenderArgs(body + "x")).rfind("ExtenderArgs: malformed JSON", 0), 0u);
  EXPECT_EQ(ErrorOf(DecodeExtenderArgs(body, 10)),
            "ExtenderArgs: body is 29 bytes, over the limit of 10");
  EXPECT_TRUE(DecodeExtenderArgs(body, body.size()).ok());
  // Deep nesting is refused before parsing, wherever it is.
  const std::string deep =
      R"({"Pod":{},"x":)" + std::string(1000, '[') + std::string(1000, ']') + "}";
  EXPECT_EQ(ErrorOf(DecodeExtenderArgs(deep)), "ExtenderArgs: nesting deeper than 512");
  // Brackets inside strings do not count.
  const std::string in_string = R"({"Pod":{},"x":")" + std::string(1000, '[') + "\\\"\"}";
  EXPECT_TRUE(DecodeExtenderArgs(in_string).ok());
  // Invalid UTF-8 is a syntax error, not a crash.
  EXPECT_FALSE(DecodeExtenderArgs("{\"Pod\":{\"metadata\":{\"name\":\"\xff\"}}}").ok());
}

// ---------------------------------------------------------------------------- filter result

TEST(K8sExtenderProtocol, FilterResultEncoding) {
  EXPECT_EQ(EncodeExtenderFilterResult({}),
            R"({"Nodes":null,"NodeNames":[],"FailedNodes":{},"FailedAndUnresolvableNodes":{},)"
            R"("Error":""})");
  ExtenderFilterResult r;
  r.node_names = {"n2", "n1"};
  r.failed_nodes = {{"n3", "needs 2 GPUs with 500 milli free; has 1"}, {"n0", "a \"quoted\" <x>"}};
  r.failed_and_unresolvable_nodes = {{"n9", "GPU model T4 not in A10|V100M32"}};
  r.error = "";
  const std::string wire = EncodeExtenderFilterResult(r);
  EXPECT_EQ(wire, R"({"Nodes":null,"NodeNames":["n2","n1"],"FailedNodes":{"n0":"a \"quoted\" <x>",)"
                  R"("n3":"needs 2 GPUs with 500 milli free; has 1"},"FailedAndUnresolvableNodes":)"
                  R"({"n9":"GPU model T4 not in A10|V100M32"},"Error":""})");
  EXPECT_EQ(Must(DecodeExtenderFilterResult(wire)), r);

  // Invalid UTF-8 in a message is replaced, never thrown on.
  ExtenderFilterResult bad;
  bad.error = "cut \xe2\x82";
  const std::string bad_wire = EncodeExtenderFilterResult(bad);
  EXPECT_NE(bad_wire.find("\"Error\":\"cut \xef\xbf\xbd"), std::string::npos) << bad_wire;
  EXPECT_TRUE(nlohmann::json::accept(bad_wire));

  // Nodes returned as a NodeList for a scheduler that is not nodeCacheCapable.
  const ExtenderArgs args =
      Must(DecodeExtenderArgs(R"({"Pod":{},"Nodes":{"items":[)" + NodeTesseraJson() + "]}}"));
  ExtenderFilterResult with_nodes;
  with_nodes.node_names = {"a10-7"};
  with_nodes.nodes_json = args.nodes_json;
  const std::string nodes_wire = EncodeExtenderFilterResult(with_nodes);
  EXPECT_EQ(nodes_wire.rfind(R"({"Nodes":{"metadata":{},"items":[{)", 0), 0u);
  const nlohmann::json parsed = nlohmann::json::parse(nodes_wire);
  EXPECT_EQ(parsed["Nodes"]["items"][0], nlohmann::json::parse(NodeTesseraJson()));
  EXPECT_EQ(Must(DecodeExtenderFilterResult(nodes_wire)), with_nodes);
  ExtenderFilterResult no_nodes;
  no_nodes.nodes_json = std::vector<std::string>{};
  EXPECT_EQ(
      EncodeExtenderFilterResult(no_nodes).rfind(R"({"Nodes":{"metadata":{},"items":[]},)", 0), 0u);
}

TEST(K8sExtenderProtocol, FilterResultDecodesNullsAndCase) {
  const ExtenderFilterResult r = Must(DecodeExtenderFilterResult(
      R"({"nodes":null,"nodenames":null,"failednodes":null,"ERROR":"boom"})"));
  EXPECT_TRUE(r.node_names.empty());
  EXPECT_FALSE(r.nodes_json.has_value());
  EXPECT_EQ(r.error, "boom");
  EXPECT_EQ(ErrorOf(DecodeExtenderFilterResult(R"({"FailedNodes":{"n1":1}})")),
            "FailedNodes.n1: expected string, got number");
}

// ---------------------------------------------------------------------------- prioritize

TEST(K8sExtenderProtocol, HostPriorityList) {
  EXPECT_EQ(EncodeHostPriorityList({}), "[]");
  const HostPriorityList list = {{"n1", 7}, {"node.with.dots", 0}, {"n<3>", 10}};
  const std::string wire = EncodeHostPriorityList(list);
  EXPECT_EQ(wire, R"([{"Host":"n1","Score":7},{"Host":"node.with.dots","Score":0},)"
                  R"({"Host":"n<3>","Score":10}])");
  EXPECT_EQ(Must(DecodeHostPriorityList(wire)), list);
  EXPECT_EQ(Must(DecodeHostPriorityList(R"([{"host":"a","SCORE":-3}])")),
            (HostPriorityList{{"a", -3}}));
  EXPECT_TRUE(Must(DecodeHostPriorityList("null")).empty());
  EXPECT_EQ(ErrorOf(DecodeHostPriorityList(R"([{"Host":"a","Score":1.5}])")),
            "HostPriorityList[0].Score: expected integer, got 1.5");
  EXPECT_EQ(ErrorOf(DecodeHostPriorityList(R"({"Host":"a"})")),
            "HostPriorityList: expected array, got object");
  EXPECT_EQ(ErrorOf(DecodeHostPriorityList(R"([{"Host":"a","Score":99999999999999999999}])")),
            "HostPriorityList[0].Score: expected integer, got 1e+20");
}

// ---------------------------------------------------------------------------- preempt

TEST(K8sExtenderProtocol, PreemptionArgs) {
  const std::string body = R"({"Pod":)" + PodJson() + R"(,"NodeNameToVictims":{"gpu-node-1":)" +
                           R"({"Pods":[)" + ReadTestdata("pod_running.json") +
                           R"(],"NumPDBViolations":1},"n2":null,"n3":{"Pods":null}},)" +
                           R"("NodeNameToMetaVictims":null})";
  const ExtenderPreemptionArgs args = Must(DecodeExtenderPreemptionArgs(body));
  EXPECT_EQ(args.pod.name, "infer-0");
  ASSERT_TRUE(args.node_name_to_victims.has_value());
  EXPECT_FALSE(args.node_name_to_meta_victims.has_value());
  const auto& victims = *args.node_name_to_victims;
  ASSERT_EQ(victims.size(), 3u);
  ASSERT_EQ(victims.at("gpu-node-1").pods.size(), 1u);
  EXPECT_EQ(victims.at("gpu-node-1").pods[0].uid, "7e8f9a0b-1c2d-4e3f-8a9b-0c1d2e3f4a5b");
  EXPECT_EQ(victims.at("gpu-node-1").pods[0].json_path, "NodeNameToVictims.gpu-node-1.Pods[0]");
  EXPECT_EQ(victims.at("gpu-node-1").num_pdb_violations, 1);
  EXPECT_TRUE(victims.at("n2").pods.empty());
  EXPECT_TRUE(victims.at("n3").pods.empty());

  const ExtenderPreemptionArgs meta = Must(DecodeExtenderPreemptionArgs(
      R"({"pod":{"metadata":{"uid":"p"}},"nodenametometavictims":{"n1":{"pods":[{"uid":"u1"},)"
      R"({"UID":"u2"}],"numpdbviolations":2},"n2":{"Pods":[],"NumPDBViolations":0}}})"));
  EXPECT_FALSE(meta.node_name_to_victims.has_value());
  ASSERT_TRUE(meta.node_name_to_meta_victims.has_value());
  EXPECT_EQ(meta.node_name_to_meta_victims->at("n1"), (MetaVictims{{"u1", "u2"}, 2}));
  EXPECT_EQ(meta.node_name_to_meta_victims->at("n2"), (MetaVictims{{}, 0}));

  EXPECT_EQ(ErrorOf(DecodeExtenderPreemptionArgs(
                R"({"Pod":{},"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":5}]}}})")),
            "NodeNameToMetaVictims.n1.Pods[0].UID: expected string, got number");
  EXPECT_EQ(ErrorOf(DecodeExtenderPreemptionArgs(
                R"({"Pod":{},"NodeNameToVictims":{"a.b":{"Pods":[{"spec":{"priority":"x"}}]}}})")),
            "NodeNameToVictims[\"a.b\"].Pods[0].spec.priority: expected integer, got string");
  EXPECT_EQ(ErrorOf(DecodeExtenderPreemptionArgs(
                R"({"Pod":{},"NodeNameToVictims":{"n":{"NumPDBViolations":"1"}}})")),
            "NodeNameToVictims.n.NumPDBViolations: expected integer, got string");
  EXPECT_EQ(ErrorOf(DecodeExtenderPreemptionArgs(R"({"Pod":{},"NodeNameToVictims":[]})")),
            "NodeNameToVictims: expected object, got array");
  EXPECT_EQ(ErrorOf(DecodeExtenderPreemptionArgs(R"({"NodeNameToVictims":{}})")), "Pod: missing");
}

TEST(K8sExtenderProtocol, PreemptionResult) {
  EXPECT_EQ(EncodeExtenderPreemptionResult({}), R"({"NodeNameToMetaVictims":{}})");
  ExtenderPreemptionResult r;
  r.node_name_to_meta_victims["n2"] = MetaVictims{{}, 0};
  r.node_name_to_meta_victims["n1"] = MetaVictims{{"u1", "u2"}, 1};
  const std::string wire = EncodeExtenderPreemptionResult(r);
  EXPECT_EQ(wire, R"({"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"u1"},{"UID":"u2"}],)"
                  R"("NumPDBViolations":1},"n2":{"Pods":[],"NumPDBViolations":0}}})");
  EXPECT_EQ(Must(DecodeExtenderPreemptionResult(wire)), r);
}

// ---------------------------------------------------------------------------- bind

TEST(K8sExtenderProtocol, Binding) {
  const ExtenderBindingArgs args{"infer-0", "ml", "5f1c2b9e", "gpu-node-1"};
  const std::string wire = EncodeExtenderBindingArgs(args);
  EXPECT_EQ(wire, R"({"PodName":"infer-0","PodNamespace":"ml","PodUID":"5f1c2b9e",)"
                  R"("Node":"gpu-node-1"})");
  EXPECT_EQ(Must(DecodeExtenderBindingArgs(wire)), args);
  EXPECT_EQ(
      Must(DecodeExtenderBindingArgs(
          R"({"podname":"infer-0","PODNAMESPACE":"ml","poduid":"5f1c2b9e","node":"gpu-node-1",)"
          R"("extra":1})")),
      args);
  EXPECT_EQ(ErrorOf(DecodeExtenderBindingArgs(R"({"PodName":"a","Node":"n"})")), "PodUID: missing");
  EXPECT_EQ(ErrorOf(DecodeExtenderBindingArgs(R"({"PodName":"a","PodUID":"u","Node":null})")),
            "Node: missing");
  EXPECT_EQ(ErrorOf(DecodeExtenderBindingArgs(R"({"PodName":1,"PodUID":"u","Node":"n"})")),
            "PodName: expected string, got number");
  EXPECT_EQ(EncodeExtenderBindingResult({}), R"({"Error":""})");
  EXPECT_EQ(EncodeExtenderBindingResult({"node <n1> is gone"}), R"({"Error":"node <n1> is gone"})");
  EXPECT_EQ(Must(DecodeExtenderBindingResult(R"({"error":"x\u003cy"})")).error, "x<y");
}

// ---------------------------------------------------------------------------- fuzz

// Mutates `s` in place: truncation, byte flips, insertions, deletions, duplicated ranges and
// type swaps of JSON values.
void Mutate(Rng& rng, std::string& s) {
  static const char* const kInsert[] = {
      "{",     "}",  "[",  "]",     "\"",   ":",     ",",
      "null",  "0",  "-1", "1e999", "\\",   "\\u00", "true",
      "\"x\"", "{}", "[]", "\xff",  "\xc3", " ",     "9999999999999999999999"};
  static const std::pair<const char*, const char*> kSwaps[] = {
      {"\"", "1"},      {"\"", "null"},   {"[", "{"},    {"{", "["},      {"]", "}"},
      {":\"", ":["},    {":\"", ":{"},    {":{", ":\""}, {":[", ":1,"},   {"null", "[]"},
      {"null", "\"\""}, {"1", "\"1\""},   {"0", "1.5"},  {"\"n1\"", "7"}, {"Gi", "Zi"},
      {"m\"", "\""},    {"true", "\"t\""}};
  const int mutations = 1 + static_cast<int>(rng.Below(4));
  for (int m = 0; m < mutations && !s.empty(); ++m) {
    const size_t pos = rng.Below(s.size());
    switch (rng.Below(7)) {
      case 0:  // truncate
        s.resize(pos);
        break;
      case 1:  // flip one bit
        s[pos] = static_cast<char>(s[pos] ^ (1 << rng.Below(8)));
        break;
      case 2:  // insert a token
        s.insert(pos, kInsert[rng.Below(std::size(kInsert))]);
        break;
      case 3:  // delete a range
        s.erase(pos, 1 + rng.Below(16));
        break;
      case 4: {  // duplicate a range
        const std::string piece = s.substr(pos, 1 + rng.Below(32));
        s.insert(rng.Below(s.size() + 1), piece);
        break;
      }
      case 5:  // random byte
        s[pos] = static_cast<char>(rng.Below(256));
        break;
      default: {  // swap a value's type at a random occurrence
        const auto& [from, to] = kSwaps[rng.Below(std::size(kSwaps))];
        const size_t at = s.find(from, pos);
        if (at != std::string::npos) s.replace(at, std::string(from).size(), to);
        break;
      }
    }
  }
}

// Compact forms of the fixtures keep each iteration cheap.
std::string Compact(const std::string& json) { return nlohmann::json::parse(json).dump(); }

// Decodes mutated bodies with `decode` for `iterations` rounds; every result must be a value
// or a non-empty error. Returns how many decoded successfully.
int FuzzDecoder(uint64_t seed, int iterations, const std::vector<std::string>& seeds,
                const std::function<bool(const std::string&)>& decode) {
  Rng rng(seed);
  int ok = 0;
  for (int i = 0; i < iterations; ++i) {
    std::string body = seeds[rng.Below(seeds.size())];
    Mutate(rng, body);
    if (decode(body)) ++ok;
  }
  return ok;
}

template <typename T>
bool Check(const Result<T>& r) {
  if (!r.ok()) {
    EXPECT_FALSE(r.error().message.empty());
  }
  return r.ok();
}

TEST(K8sFuzz, ExtenderArgs) {
  const std::string pod = Compact(PodJson());
  const std::string node = Compact(NodeHamiJson());
  const std::vector<std::string> seeds = {
      R"({"Pod":)" + pod + R"(,"Nodes":null,"NodeNames":["n1","n2"]})",
      R"({"Pod":)" + pod + R"(,"Nodes":{"metadata":{},"items":[)" + node + "]}}",
      R"({"pod":)" + Compact(ReadTestdata("pod_hami.json")) + R"(,"nodenames":["n1"]})",
  };
  const int ok = FuzzDecoder(1, 6000, seeds, [](const std::string& body) {
    Result<ExtenderArgs> args = DecodeExtenderArgs(body);
    if (!Check(args)) return false;
    Check(PodToSpec(args->pod));
    if (args->nodes) {
      for (const Node& n : *args->nodes) Check(NodeToSpec(n));
    }
    ExtenderFilterResult r;
    r.node_names = args->CandidateNames();
    r.nodes_json = args->nodes_json;
    EXPECT_TRUE(nlohmann::json::accept(EncodeExtenderFilterResult(r)));
    return true;
  });
  EXPECT_GT(ok, 100);  // the mutations leave some bodies valid
  EXPECT_LT(ok, 6000);
}

TEST(K8sFuzz, PreemptionAndBinding) {
  const std::string pod = Compact(PodJson());
  const std::vector<std::string> seeds = {
      R"({"Pod":)" + pod + R"(,"NodeNameToVictims":{"n1":{"Pods":[)" + pod +
          R"(],"NumPDBViolations":1}},"NodeNameToMetaVictims":null})",
      R"({"Pod":{"metadata":{"uid":"p"}},"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"u1"}],)"
      R"("NumPDBViolations":0}}})",
      R"({"PodName":"a","PodNamespace":"ns","PodUID":"u","Node":"n1"})",
  };
  const int ok = FuzzDecoder(2, 6000, seeds, [](const std::string& body) {
    bool any = Check(DecodeExtenderPreemptionArgs(body));
    any = Check(DecodeExtenderBindingArgs(body)) || any;
    return any;
  });
  EXPECT_GT(ok, 100);
}

TEST(K8sFuzz, ResultsAndNodes) {
  ExtenderFilterResult filter;
  filter.node_names = {"n1", "n2"};
  filter.failed_nodes = {{"n3", "no GPU"}};
  ExtenderPreemptionResult preempt;
  preempt.node_name_to_meta_victims["n1"] = MetaVictims{{"u1"}, 1};
  const std::vector<std::string> seeds = {
      EncodeExtenderFilterResult(filter),           EncodeHostPriorityList({{"n1", 7}, {"n2", 3}}),
      EncodeExtenderPreemptionResult(preempt),      EncodeExtenderBindingResult({"x"}),
      Compact(ReadTestdata("node_hami_json.json")), Compact(ReadTestdata("node_tessera.json")),
  };
  const int ok = FuzzDecoder(3, 4000, seeds, [](const std::string& body) {
    bool any = Check(DecodeExtenderFilterResult(body));
    any = Check(DecodeHostPriorityList(body)) || any;
    any = Check(DecodeExtenderPreemptionResult(body)) || any;
    any = Check(DecodeExtenderBindingResult(body)) || any;
    Result<Node> node = ParseNodeJson(body);
    if (Check(node)) {
      any = true;
      Check(NodeToSpec(*node));
    }
    return any;
  });
  EXPECT_GT(ok, 100);
}

TEST(K8sFuzz, QuantitiesAndHamiRegister) {
  Rng rng(4);
  const std::vector<std::string> quantities = {
      "500m", "1.5Gi", "1e3", "-2.5E-3", "20Gi", "1G", "0.000000001", "9223372036854775807", "7Ei"};
  const std::vector<std::string> registers = {
      "GPU-a,10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true:GPU-b,10,32768,100,T4,1,false:",
      "GPU-c,4,40960,100,A100,1,T,3,mig:",
      R"([{"id":"GPU-j","index":1,"count":2,"devmem":100,"type":"T4","numa":1,"health":true}])"};
  int ok = 0;
  for (int i = 0; i < 4000; ++i) {
    std::string q = quantities[rng.Below(quantities.size())];
    Mutate(rng, q);
    Result<Quantity> parsed = ParseQuantity(q);
    if (Check(parsed)) {
      ++ok;
      Check(ToMilli(*parsed));
      Check(ToMiB(*parsed));
      Check(ToInt(*parsed));
    }
    std::string r = registers[rng.Below(registers.size())];
    Mutate(rng, r);
    if (Check(ParseHamiNodeRegister(r))) ++ok;
  }
  EXPECT_GT(ok, 100);
}

}  // namespace
}  // namespace tessera::k8s
