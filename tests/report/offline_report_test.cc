#include <gtest/gtest.h>

#include "report/report.h"

namespace tessera {
namespace {

RunResult FakeRun(const std::string& policy, uint64_t seed, double unallocated_at_100) {
  RunResult r;
  r.policy = policy;
  r.seed = seed;
  for (int a = 0; a <= 100; ++a) {
    CurvePoint p;
    p.arrival_pct = a;
    p.unallocated_pct = a == 100 ? unallocated_at_100 : 100.0 - a;
    r.curve.push_back(p);
  }
  return r;
}

OfflineBoundRow Bound(uint64_t seed, double pct) {
  OfflineBoundRow b;
  b.seed = seed;
  b.arrival_pct = 100;
  b.arrived_pct = 100.5;
  b.bound.capacity_milli = 1000;
  b.bound.max_placed_milli = 1000 - 10 * pct;
  b.bound.unallocated_pct = pct;
  b.bound.pods = 7;
  return b;
}

TEST(OfflineReport, GapsPerPolicyOverSeedsWithABound) {
  const std::vector<RunResult> runs = {FakeRun("fgd", 1, 5), FakeRun("fgd", 2, 7),
                                       FakeRun("fgd", 3, 9), FakeRun("<b>", 1, 4)};
  const std::vector<OfflineBoundRow> bounds = {Bound(1, 3), Bound(2, 3)};  // no seed 3
  const std::vector<std::string> policies = {"fgd", "<b>"};
  const std::vector<OfflineGap> gaps = OfflineGaps(runs, policies, bounds);
  ASSERT_EQ(gaps.size(), 2u);
  EXPECT_EQ(gaps[0].gap.runs, 2);
  EXPECT_DOUBLE_EQ(gaps[0].unallocated.mean, 6);
  EXPECT_DOUBLE_EQ(gaps[0].gap.mean, 3);
  EXPECT_NEAR(gaps[0].gap.sd, 1.41421356, 1e-6);
  EXPECT_DOUBLE_EQ(gaps[1].gap.mean, 1);

  EXPECT_EQ(OfflineGapCsv(runs, bounds),
            "policy,seed,arrival_pct,unallocated_pct,bound_pct,gap_pp\n"
            "fgd,1,100,5,3,2\nfgd,2,100,7,3,4\n<b>,1,100,4,3,1\n");
  EXPECT_EQ(OfflineBoundCsv({Bound(1, 2.5)}),
            "seed,arrival_pct,arrived_pct,capacity_milli,max_placed_milli,bound_pct,pods,"
            "node_types,pod_shapes,patterns,rounds,converged\n"
            "1,100,100.5,1000,975,2.5,7,0,0,0,0,1\n");

  const std::string table = OfflineTable(runs, policies, bounds);
  EXPECT_NE(table.find("fgd       6.00±1.41  3.00±0.00  3.00±1.41"), std::string::npos) << table;
  EXPECT_NE(table.find("bound             -  3.00±0.00          -"), std::string::npos) << table;

  const std::string html = OfflineSectionHtml(runs, policies, bounds);
  EXPECT_NE(html.find("id=\"offline\""), std::string::npos);
  EXPECT_NE(html.find("&lt;b&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_EQ(OfflineSectionHtml(runs, policies, {}), "");
}

TEST(OfflineReport, WhatTheBoundLeavesOut) {
  OfflineBoundRow a = Bound(1, 3), b = Bound(2, 3);
  a.bound.classes = {{1, 470, 10, 10}, {1, 810, 100, 70}, {8, 1000, 3, 2}};
  b.bound.classes = {{1, 470, 10, 9.8}, {1, 810, 90, 70}, {8, 1000, 3, 3}};
  EXPECT_EQ(OfflineClassesCsv({a, b}),
            "seed,gpus,gpu_milli,arrived,placed\n1,1,470,10,10\n1,1,810,100,70\n1,8,1000,3,2\n"
            "2,1,470,10,9.8\n2,1,810,90,70\n2,8,1000,3,3\n");
  // Mean per seed: 25 of the 95 810-milli pods (20.25 GPUs) before 0.5 of 3 8-GPU ones (4);
  // 0.1 of the 470s is below half a pod and not named.
  EXPECT_EQ(OfflineLeftOut({a, b}),
            "left out by the bound, mean per seed: 25.0 of 95 pods of 1 GPU x 810 milli, 0.5 of 3 "
            "pods of 8 GPUs x 1000 milli\n");
  b.bound.classes[1].placed = 90;
  a.bound.classes[1].placed = 100;
  a.bound.classes[2].placed = 3;
  EXPECT_EQ(OfflineLeftOut({a, b}), "");
  EXPECT_EQ(OfflineLeftOut({}), "");
  const std::vector<RunResult> runs = {FakeRun("fgd", 1, 5)};
  EXPECT_EQ(OfflineSectionHtml(runs, {"fgd"}, {a, b}).find("offline-left-out"), std::string::npos);
  a.bound.classes[1].placed = 70;
  EXPECT_NE(OfflineSectionHtml(runs, {"fgd"}, {a, b})
                .find("<p class=\"note\" id=\"offline-left-out\">left out by the bound, mean per "
                      "seed: 15.0 of 95 pods of 1 GPU x 810 milli. The bound"),
            std::string::npos);
}

}  // namespace
}  // namespace tessera
