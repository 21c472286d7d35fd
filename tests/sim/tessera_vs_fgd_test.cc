// `tessera` against FGD as published, same trace, seeds and run: on the default trace
// tessera leaves at most 4.2 % of the GPUs unallocated at 100 % arrival (FGD: 4.76, tessera 4.10
// with hole fill, the demand-weighted M and `adaptive_open`, see docs/POLICIES.md), and on the
// default trace and on gpuspec20 (GPU-model constraints) it trails FGD by no more than 0.3 pp at
// any arrival level before 100 %.
#include <gtest/gtest.h>

#include <filesystem>

#include "model/cluster.h"
#include "report/report.h"
#include "sim/grid.h"
#include "trace/csv_reader.h"
#include "util/file.h"

namespace tessera {
namespace {

struct SideBySide {
  SummaryCell fgd, ours;
  double worst_gap = -1e9;  // pp, tessera − fgd, over arrival levels 1..99
  int worst_level = 0;
};

// fgd and tessera on one pod list, seeds 42–51, one run.
SideBySide Compare(const std::string& list) {
  const std::string dir = TESSERA_DATA_DIR;
  auto nodes = ReadNodeCsv(ReadFile(dir + "/openb_node_list_gpu_node.csv").value(), "nodes");
  auto pods = ReadPodCsv(ReadFile(dir + "/" + list).value(), "pods");
  EXPECT_TRUE(nodes.ok() && pods.ok());
  TargetWorkload w = TargetWorkload::FromPods(*pods);
  w.Resolve(Cluster(*nodes));
  std::vector<uint64_t> seeds;
  for (uint64_t s = 42; s <= 51; ++s) seeds.push_back(s);
  InflationOptions options;
  options.record_placements = false;
  auto runs = RunGrid(*nodes, *pods, w, {"fgd", "tessera"}, seeds, 2, options);
  EXPECT_TRUE(runs.ok());
  SideBySide out;
  out.fgd = Summarize(*runs, "fgd", 100, false);
  out.ours = Summarize(*runs, "tessera", 100, false);
  for (int level = 1; level < 100; ++level) {
    const double gap =
        Summarize(*runs, "tessera", level, false).mean - Summarize(*runs, "fgd", level, false).mean;
    if (gap > out.worst_gap) {
      out.worst_gap = gap;
      out.worst_level = level;
    }
  }
  std::printf(
      "  %s unallocated@100: fgd %.2f ± %.2f, tessera %.2f ± %.2f; worst gap before 100: "
      "%+.2f pp at %d %%\n",
      list.c_str(), out.fgd.mean, out.fgd.sd, out.ours.mean, out.ours.sd, out.worst_gap,
      out.worst_level);
  return out;
}

bool HaveTrace(const std::string& list) {
  return std::filesystem::exists(std::string(TESSERA_DATA_DIR) + "/" + list);
}

TEST(TesseraVsFgd, DefaultTraceFewerUnallocatedGpusAndNeverBehindOnTheCurve) {
  if (!HaveTrace("openb_pod_list_default.csv")) GTEST_SKIP() << "no trace";
  const SideBySide r = Compare("openb_pod_list_default.csv");
  EXPECT_LE(r.ours.mean, 4.2);
  EXPECT_LT(r.ours.mean, r.fgd.mean - 0.5);
  EXPECT_LE(r.worst_gap, 0.3) << "at " << r.worst_level << " % arrival";
}

// GPU-model constraints: without the model pressure, tessera trailed FGD by 0.57 pp at 97 %
// arrival here (T4-only pods failing after unconstrained pods took the T4 GPUs).
TEST(TesseraVsFgd, Gpuspec20FewerUnallocatedGpusAndNeverBehindOnTheCurve) {
  if (!HaveTrace("openb_pod_list_gpuspec20.csv")) GTEST_SKIP() << "no trace";
  const SideBySide r = Compare("openb_pod_list_gpuspec20.csv");
  EXPECT_LT(r.ours.mean, r.fgd.mean - 0.3);
  EXPECT_LE(r.worst_gap, 0.3) << "at " << r.worst_level << " % arrival";
}

}  // namespace
}  // namespace tessera
