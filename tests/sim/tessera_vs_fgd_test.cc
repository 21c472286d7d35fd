// `tessera` against FGD as published, same trace, seeds and run (issue 5): on the default
// trace tessera leaves fewer GPUs unallocated at 100 % arrival, and at no arrival level before
// it does it trail FGD by more than 0.3 pp.
#include <gtest/gtest.h>

#include <filesystem>

#include "model/cluster.h"
#include "report/report.h"
#include "sim/grid.h"
#include "trace/csv_reader.h"
#include "util/file.h"

namespace tessera {
namespace {

TEST(TesseraVsFgd, DefaultTraceFewerUnallocatedGpusAndNeverBehindOnTheCurve) {
  const std::string dir = TESSERA_DATA_DIR;
  if (!std::filesystem::exists(dir + "/openb_pod_list_default.csv"))
    GTEST_SKIP() << "no trace at " << dir;
  auto nodes = ReadNodeCsv(ReadFile(dir + "/openb_node_list_gpu_node.csv").value(), "nodes");
  auto pods = ReadPodCsv(ReadFile(dir + "/openb_pod_list_default.csv").value(), "pods");
  ASSERT_TRUE(nodes.ok() && pods.ok());
  TargetWorkload w = TargetWorkload::FromPods(*pods);
  w.Resolve(Cluster(*nodes));
  std::vector<uint64_t> seeds;
  for (uint64_t s = 42; s <= 51; ++s) seeds.push_back(s);
  InflationOptions options;
  options.record_placements = false;
  auto runs = RunGrid(*nodes, *pods, w, {"fgd", "tessera"}, seeds, 2, options);
  ASSERT_TRUE(runs.ok());
  const SummaryCell fgd = Summarize(*runs, "fgd", 100, false);
  const SummaryCell ours = Summarize(*runs, "tessera", 100, false);
  std::printf("  unallocated@100: fgd %.2f ± %.2f, tessera %.2f ± %.2f\n", fgd.mean, fgd.sd,
              ours.mean, ours.sd);
  EXPECT_LT(ours.mean, fgd.mean - 0.2);
  for (int level = 1; level < 100; ++level) {
    EXPECT_LE(Summarize(*runs, "tessera", level, false).mean,
              Summarize(*runs, "fgd", level, false).mean + 0.3)
        << "at " << level << " % arrival";
  }
}

}  // namespace
}  // namespace tessera
