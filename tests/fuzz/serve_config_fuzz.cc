// Fuzzes the configuration file of `tessera serve` (tessera.yaml, docs/EXTENDER_CONFIG.md):
// ParseServeConfig, then an extender built with what it says (policy, classes, headroom, topology
// pools) on the extender harnesses' cluster, which must answer a filter and a prioritize
// well-formed. Oracles: an error names the file; accepted values are within the documented ranges.

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "fuzz/fuzz_util.h"
#include "k8s/serve/serve_config.h"

namespace {

void FuzzOne(std::string_view text) {
  using namespace tessera::fuzz;  // NOLINT
  tessera::k8s::ServeConfig c;
  const tessera::Status s = tessera::k8s::ParseServeConfig(text, "tessera.yaml", &c);
  if (!s.ok()) {
    FUZZ_CHECK(s.error().message.rfind("tessera.yaml", 0) == 0, s.error().message);
    return;
  }
  FUZZ_CHECK(c.spin_us >= 0 && c.spin_us <= tessera::k8s::kMaxSpinMicroseconds,
             std::to_string(c.spin_us));
  FUZZ_CHECK(!c.classes.classes.empty(), Excerpt(text));
  FUZZ_CHECK(
      c.classes.fallback >= 0 && c.classes.fallback < static_cast<int>(c.classes.classes.size()),
      Excerpt(text));
  std::set<std::string> names;
  for (const auto& cls : c.classes.classes) FUZZ_CHECK(names.insert(cls.name).second, cls.name);
  // An extender as `tessera serve` builds it from the file (a policy name it does not know is
  // refused there).
  tessera::Result<std::unique_ptr<tessera::k8s::Extender>> e = tessera::k8s::Extender::FromJson(
      Cluster().nodes_json, Cluster().pods_json, tessera::k8s::ToExtenderOptions(c));
  if (!e.ok()) {
    FUZZ_CHECK(!e.error().message.empty(), Excerpt(text));
    return;
  }
  const std::string body =
      R"({"Pod":{"metadata":{"name":"p","namespace":"ml","uid":"u","labels":{"tessera.io/class":)"
      R"("BE"}},"spec":{"priority":5,"containers":[{"name":"c","resources":{"limits":{)"
      R"("tessera.io/gpu":"1","tessera.io/gpu-milli":"500"}}}]}},"Nodes":null,)"
      R"("NodeNames":["a10-7","gpu-node-1","a10-hami-2","a100-hami-8","n1","n2","x"]})";
  tessera::Result<tessera::k8s::ExtenderArgs> args = tessera::k8s::DecodeExtenderArgs(body);
  FUZZ_CHECK(args.ok(), args.error().message);
  CheckFilterAnswer((*e)->FilterJson(*args));
  CheckPrioritizeAnswer((*e)->PrioritizeJson(*args));
}

}  // namespace

TESSERA_FUZZ_TARGET((32 << 10), FuzzOne)
