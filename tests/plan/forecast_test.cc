// The demand forecast against what a synthetic demand is known to be: on stationary Poisson
// arrivals with exponential durations the mean concurrent demand is λ · E[S] · GPUs (Little's
// law) and a p95 forecast is exceeded in about 5 % of the held-out buckets (and in far more when
// the demand grows); a daily peak shows in the hour-of-day profile; the growth factor scales the
// quantiles; bad histories are errors. Then the default trace, when it is there.

#include "plan/forecast.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "trace/csv_reader.h"
#include "util/file.h"
#include "util/rng.h"

namespace tessera {
namespace {

constexpr double kDay = 86400;

double Uniform(Rng& rng) { return static_cast<double>(rng.Next() >> 11) * 0x1.0p-53; }

// Poisson arrivals of `qos` pods asking `gpu_count` × `gpu_milli` over `days`, at
// rate_per_s · shape(t) (thinning; shape in [0, 1]), exponential durations of mean `mean_s`.
void AddPoisson(Timeline& t, Rng& rng, const std::string& qos, double rate_per_s, double mean_s,
                double days, int gpu_count, int gpu_milli,
                const std::function<double(double)>& shape = nullptr) {
  double now = 0;
  while (true) {
    now += -std::log(1 - Uniform(rng)) / rate_per_s;
    if (now >= days * kDay) break;
    if (shape && Uniform(rng) >= shape(now)) continue;
    TimedPod p;
    p.spec.name = qos + "-" + std::to_string(t.pods.size());
    p.spec.qos = qos;
    p.spec.gpu_count = gpu_count;
    p.spec.gpu_milli = gpu_milli;
    p.arrival_s = now;
    p.duration_s = -std::log(1 - Uniform(rng)) * mean_s;
    t.pods.push_back(std::move(p));
  }
}

void SortByArrival(Timeline& t) {
  std::stable_sort(t.pods.begin(), t.pods.end(),
                   [](const TimedPod& a, const TimedPod& b) { return a.arrival_s < b.arrival_s; });
}

// LS: 0.05 pods/s × 1000 s × 2 GPUs = 100 GPUs; BE: 0.02/s × 2000 s × 0.5 GPU = 20 GPUs.
Timeline Stationary(double days, uint64_t seed) {
  Rng rng(seed);
  Timeline t;
  AddPoisson(t, rng, "LS", 0.05, 1000, days, 2, 1000);
  AddPoisson(t, rng, "BE", 0.02, 2000, days, 1, 500);
  SortByArrival(t);
  return t;
}

const ClassDemand& Class(const DemandHistory& h, const std::string& name) {
  for (const ClassDemand& c : h.classes) {
    if (c.name == name) return c;
  }
  ADD_FAILURE() << "no class " << name;
  return h.classes.front();
}

ForecastOptions WithWarmup() {
  ForecastOptions o;
  o.warmup_s = 4 * 3600;  // 14 mean durations of LS, 7 of BE: the empty start forgotten
  return o;
}

TEST(Forecast, ConcurrentDemandFollowsLittlesLaw) {
  Result<DemandHistory> h = AnalyzeDemand(Stationary(7, 1), WithWarmup());
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_TRUE(h->by_hour);
  EXPECT_EQ(h->start_s, 4 * 3600);
  const ClassDemand& ls = Class(*h, "LS");
  const ClassDemand& be = Class(*h, "BE");
  EXPECT_NEAR(ls.gpus.mean, 100, 3);
  EXPECT_NEAR(be.gpus.mean, 20, 0.8);
  // The occupancy of M/M/∞ is Poisson(50) pods: p95 ≈ 50 + 1.645·√50 ≈ 61.6 pods = 123 GPUs
  // (a little less: the bucket averages over 300 s).
  EXPECT_GT(ls.gpus.p95, 112);
  EXPECT_LT(ls.gpus.p95, 126);
  EXPECT_LT(ls.gpus.p50, ls.gpus.p95);
  EXPECT_LE(ls.gpus.p95, ls.gpus.p99);
  EXPECT_NEAR(ls.arrivals_per_hour_mean, 180, 5);
  EXPECT_GT(ls.arrivals_per_hour_peak, ls.arrivals_per_hour_mean);
  EXPECT_NEAR(ls.duration_s.mean, 1000, 20);
  EXPECT_NEAR(ls.duration_s.p50, 1000 * std::log(2.0), 20);
  EXPECT_EQ(Class(*h, "Guaranteed").pods, 0);
  EXPECT_EQ(Class(*h, "Guaranteed").gpus.max, 0);
}

TEST(Forecast, BacktestOnStationaryDemandExceedsP95AboutFivePercent) {
  // 7 days: the p95 forecast by hour of day (5.25 days to learn from), over 8 draws.
  double sum = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    Result<DemandForecast> f = BuildDemandForecast(Stationary(7, seed), WithWarmup(), {});
    ASSERT_TRUE(f.ok()) << f.error().message;
    const Backtest& b = f->backtest;
    EXPECT_TRUE(b.by_hour) << b.no_by_hour;
    EXPECT_EQ(b.train_buckets + b.test_buckets, f->history.buckets);
    EXPECT_EQ(b.buckets, 2 * b.test_buckets);  // LS and BE; the classes without pods left out
    EXPECT_GE(b.exceeded_pct(), 1) << "seed " << seed;
    EXPECT_LE(b.exceeded_pct(), 12) << "seed " << seed;
    sum += b.exceeded_pct();
  }
  std::cout << "7 days, by hour of day: backtest above p95 in " << sum / 8
            << " % of the held-out class-buckets (mean of 8 draws)\n";
  EXPECT_GE(sum / 8, 4);
  EXPECT_LE(sum / 8, 9);
  // 2 days: 1.5 to learn from, the pooled p95.
  Result<DemandForecast> f = BuildDemandForecast(Stationary(2, 7), WithWarmup(), {});
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_FALSE(f->backtest.by_hour);
  EXPECT_NE(f->backtest.no_by_hour.find("1.37 days, < 2"), std::string::npos)
      << f->backtest.no_by_hour;
  std::cout << "2 days, pooled: backtest above p95 in " << f->backtest.exceeded_pct() << " %\n";
  EXPECT_GE(f->backtest.exceeded_pct(), 1);
  EXPECT_LE(f->backtest.exceeded_pct(), 12);
}

TEST(Forecast, BacktestCatchesGrowingDemand) {
  // Arrivals rise linearly over a week: the held-out end is above most of the past.
  Rng rng(3);
  Timeline t;
  AddPoisson(t, rng, "LS", 0.05, 1000, 7, 2, 1000, [](double s) { return s / (7 * kDay); });
  Result<DemandForecast> f = BuildDemandForecast(t, WithWarmup(), {});
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_GT(f->backtest.exceeded_pct(), 30);
}

// LS arrivals four times as often in hours 18 and 19 as in the rest of the day.
Timeline DailyPeak(double days) {
  Rng rng(11);
  Timeline t;
  AddPoisson(t, rng, "LS", 0.04, 600, days, 1, 1000, [](double s) {
    const int hour = static_cast<int>(std::fmod(s, kDay) / 3600);
    return hour == 18 || hour == 19 ? 1.0 : 0.25;
  });
  return t;
}

TEST(Forecast, HourOfDayProfileFindsTheDailyPeak) {
  Result<DemandHistory> h = AnalyzeDemand(DailyPeak(4), {});
  ASSERT_TRUE(h.ok()) << h.error().message;
  ASSERT_TRUE(h->by_hour) << h->no_by_hour;
  const ClassDemand& ls = Class(*h, "LS");
  ASSERT_EQ(ls.gpus_by_hour.size(), 24u);
  int peak = 0;
  for (int hour = 0; hour < 24; ++hour) {
    if (ls.gpus_by_hour[hour].p50 > ls.gpus_by_hour[peak].p50) peak = hour;
  }
  EXPECT_TRUE(peak == 18 || peak == 19) << "peak hour " << peak;
  // 0.04/s × 600 s = 24 GPUs in the peak, 6 off it.
  EXPECT_GT(ls.gpus_by_hour[19].p50, 3 * ls.gpus_by_hour[6].p50);
  EXPECT_NEAR(ls.gpus_by_hour[6].mean, 6, 1.5);

  // A window over the peak hours forecasts more than the whole day.
  ForecastSpec evening;
  evening.window_start_hour = 18;
  evening.window_hours = 2;
  Result<Forecast> peak_f = ForecastDemand(*h, evening);
  Result<Forecast> day_f = ForecastDemand(*h, {});
  ASSERT_TRUE(peak_f.ok() && day_f.ok());
  EXPECT_GT(peak_f->classes[0].gpus.p50, 2 * day_f->classes[0].gpus.p50);
  EXPECT_TRUE(peak_f->by_hour);
  ASSERT_EQ(peak_f->classes[0].gpus_by_hour.size(), 24u);
  // The hour-of-day forecast keeps the peak.
  const std::vector<DemandQuantiles>& hourly = day_f->classes[0].gpus_by_hour;
  ASSERT_EQ(hourly.size(), 24u);
  EXPECT_GT(hourly[19].p95, 2 * hourly[6].p95);
  EXPECT_GT(hourly[19].p95, hourly[19].mean);
  // And the backtest of the peak, learnt by hour of day, is about 5 % too.
  Result<Backtest> b = BacktestDemand(*h, 0.25);
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->by_hour);
  EXPECT_GE(b->exceeded_pct(), 1);
  EXPECT_LE(b->exceeded_pct(), 12);
}

TEST(Forecast, ShortHistoryHasNoHourOfDayProfileAndSaysWhy) {
  Result<DemandHistory> h = AnalyzeDemand(DailyPeak(1.5), {});
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_FALSE(h->by_hour);
  EXPECT_NE(h->no_by_hour.find("< 2"), std::string::npos) << h->no_by_hour;
  EXPECT_TRUE(Class(*h, "LS").gpus_by_hour.empty());
  Result<Forecast> f = ForecastDemand(*h, {});
  ASSERT_TRUE(f.ok());
  EXPECT_FALSE(f->by_hour);
  EXPECT_EQ(f->no_by_hour, h->no_by_hour);
  EXPECT_TRUE(f->classes[0].gpus_by_hour.empty());
}

TEST(Forecast, GrowthScalesTheQuantilesAndTheBaseline) {
  Result<DemandHistory> h = AnalyzeDemand(Stationary(3, 5), WithWarmup());
  ASSERT_TRUE(h.ok()) << h.error().message;
  ForecastSpec once, twice;
  twice.growth = 2;
  Result<Forecast> f1 = ForecastDemand(*h, once);
  Result<Forecast> f2 = ForecastDemand(*h, twice);
  ASSERT_TRUE(f1.ok() && f2.ok());
  for (size_t c = 0; c < f1->classes.size(); ++c) {
    EXPECT_DOUBLE_EQ(f2->classes[c].gpus.p50, 2 * f1->classes[c].gpus.p50);
    EXPECT_DOUBLE_EQ(f2->classes[c].gpus.p95, 2 * f1->classes[c].gpus.p95);
    EXPECT_DOUBLE_EQ(f2->classes[c].gpus.p99, 2 * f1->classes[c].gpus.p99);
    ASSERT_EQ(f2->classes[c].gpus_by_hour.size(), 24u);
    EXPECT_DOUBLE_EQ(f2->classes[c].gpus_by_hour[5].p95, 2 * f1->classes[c].gpus_by_hour[5].p95);
  }
  EXPECT_DOUBLE_EQ(f1->classes[0].gpus.p95, Class(*h, "LS").gpus.p95);

  double sum = 0;
  for (const ClassForecast& c : f2->classes) sum += c.gpus.p95;
  Result<int64_t> gpus = BaselineGpus(*f2, 0.8);
  ASSERT_TRUE(gpus.ok());
  EXPECT_EQ(*gpus, static_cast<int64_t>(std::ceil(sum / 0.8)));
  EXPECT_GT(*gpus, 2 * 120 / 0.8);  // above twice the mean demand at 80 %
  Result<std::vector<int64_t>> per_class = BaselineGpusPerClass(*f2, 0.8);
  ASSERT_TRUE(per_class.ok());
  EXPECT_EQ((*per_class)[0],
            static_cast<int64_t>(std::ceil(f2->classes[0].gpus.p95 / 0.8)));  // LS
  EXPECT_EQ((*per_class)[1], 0);                                              // Guaranteed: no pods
  EXPECT_FALSE(BaselineGpus(*f2, 0).ok());
  EXPECT_FALSE(BaselineGpus(*f2, 1.5).ok());
  EXPECT_FALSE(ForecastDemand(*h, ForecastSpec{.growth = 0}).ok());
}

TEST(Forecast, BusiestDayTimesK) {
  // Day 2 (of 0..3) carries three times the arrivals of the others.
  Rng rng(9);
  Timeline t;
  AddPoisson(t, rng, "LS", 0.03, 600, 4, 1, 1000,
             [](double s) { return static_cast<int>(s / kDay) == 2 ? 1.0 : 1.0 / 3; });
  Result<DemandHistory> h = AnalyzeDemand(t, {});
  ASSERT_TRUE(h.ok()) << h.error().message;
  ForecastSpec spec;
  spec.busiest_day = true;
  spec.growth = 3;
  Result<Forecast> f = ForecastDemand(*h, spec);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_NE(f->basis.find("busiest day: buckets 576..863"), std::string::npos) << f->basis;
  // 0.03 × 600 = 18 GPUs that day, × 3; the whole history's p50 is about 6.
  EXPECT_NEAR(f->classes[0].gpus.mean, 54, 6);
  EXPECT_TRUE(f->by_hour);
  EXPECT_EQ(f->classes[0].gpus_by_hour.size(), 24u);
}

TEST(Forecast, DemandIsTheTimeAverageOverEachBucket) {
  Timeline t;
  auto add = [&](const std::string& qos, double arrival, double duration, int gpus, int milli) {
    TimedPod p;
    p.spec.qos = qos;
    p.spec.gpu_count = gpus;
    p.spec.gpu_milli = milli;
    p.arrival_s = arrival;
    p.duration_s = duration;
    t.pods.push_back(p);
  };
  add("LS", 0, 900, 1, 1000);     // buckets 0, 1, 2 in full
  add("LS", 150, 300, 2, 1000);   // half of bucket 0, half of bucket 1
  add("nope", 300, 150, 1, 250);  // an unknown qos: the fallback (BE), a quarter GPU
  add("LS", 600, 100, 0, 0);      // CPU only
  add("BE", 1200, 10, 1, 1000);   // the last arrival: buckets 0..3 are whole
  Result<DemandHistory> h = AnalyzeDemand(t, {});
  ASSERT_TRUE(h.ok()) << h.error().message;
  ASSERT_EQ(h->buckets, 4);
  const ClassDemand& ls = Class(*h, "LS");
  EXPECT_EQ(ls.pods, 2);
  EXPECT_EQ(ls.cpu_only_pods, 1);
  ASSERT_EQ(ls.series.size(), 4u);
  EXPECT_DOUBLE_EQ(ls.series[0], 2.0);
  EXPECT_DOUBLE_EQ(ls.series[1], 2.0);
  EXPECT_DOUBLE_EQ(ls.series[2], 1.0);
  EXPECT_DOUBLE_EQ(ls.series[3], 0.0);
  const ClassDemand& be = Class(*h, "BE");
  EXPECT_EQ(be.pods, 2);
  EXPECT_DOUBLE_EQ(be.series[1], 0.25 * 150 / 300);
  EXPECT_DOUBLE_EQ(be.series[3], 0.0);  // the bucket from 1200 s is not whole
  EXPECT_DOUBLE_EQ(ls.arrivals_per_hour_mean, 2 / (1200.0 / 3600));
  EXPECT_DOUBLE_EQ(ls.arrivals_per_hour_peak, 2 * 12.0);  // 2 in bucket 0
}

TEST(Forecast, EmptyOrOneBucketHistoryIsAnError) {
  Timeline empty;
  empty.skipped.push_back({"p0", "pods.csv:2", "deletion_time missing"});
  Result<DemandHistory> h = AnalyzeDemand(empty, {});
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.error().message,
            "demand history: no pods with usable times (1 skipped; the first at pods.csv:2: "
            "deletion_time missing)");

  Timeline one;
  for (double a : {0.0, 200.0, 420.0}) {
    TimedPod p;
    p.spec.gpu_count = 1;
    p.spec.gpu_milli = 1000;
    p.arrival_s = a;
    p.duration_s = 50;
    one.pods.push_back(p);
  }
  h = AnalyzeDemand(one, {});
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.error().message,
            "demand history: 1 whole bucket of 300 s between 0 s and the last arrival at 420 s; "
            "need at least 2");
  ForecastOptions narrow;
  narrow.bucket_s = 0;
  EXPECT_EQ(AnalyzeDemand(one, narrow).error().message, "bucket width 0 s must be > 0");
  narrow.bucket_s = 100;
  EXPECT_TRUE(AnalyzeDemand(one, narrow).ok());
  EXPECT_EQ(BacktestDemand(AnalyzeDemand(one, narrow).value(), 1).error().message,
            "held-out fraction 1 must be in (0, 1)");
}

TEST(Forecast, JsonIsDeterministicRoundedAndLeavesTheSeriesOut) {
  Result<DemandForecast> f = BuildDemandForecast(Stationary(3, 2), WithWarmup(), {});
  ASSERT_TRUE(f.ok()) << f.error().message;
  const std::string a = ToJson(*f).dump(1);
  const std::string b =
      ToJson(BuildDemandForecast(Stationary(3, 2), WithWarmup(), {}).value()).dump(1);
  EXPECT_EQ(a, b);
  const nlohmann::ordered_json j = ToJson(*f);
  EXPECT_EQ(j.begin().key(), "history");
  EXPECT_EQ(j["history"]["classes"][0]["class"], "LS");
  EXPECT_EQ(j["history"]["classes"][0]["gpus_by_hour"]["p95"].size(), 24u);
  EXPECT_TRUE(j["history"]["classes"][1]["gpus_by_hour"].is_object());
  EXPECT_EQ(a.find("series"), std::string::npos);
  const double mean = j["history"]["classes"][0]["gpus"]["mean"].get<double>();
  EXPECT_EQ(mean, std::round(mean * 1000) / 1000);
  EXPECT_EQ(mean, std::round(f->history.classes[0].gpus.mean * 1000) / 1000);
  EXPECT_EQ(j["backtest"]["exceeded"].get<int64_t>(), f->backtest.exceeded);

  const std::string table = FormatForecastTable(*f);
  EXPECT_NE(table.find("\nLS "), std::string::npos) << table;
  EXPECT_NE(table.find("by hour of day"), std::string::npos) << table;
}

// The default trace as the history (its own times, not compressed): the figures are printed,
// the test checks that it spans its 149 days with a profile and a backtest.
TEST(Forecast, DefaultTrace) {
  const std::string dir = TESSERA_DATA_DIR;
  const std::string file = dir + "/openb_pod_list_default.csv";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << "trace not found at " << dir;
  const std::string text = ReadFile(file).value();
  Result<std::vector<PodSpec>> pods = ReadPodCsv(text, "openb_pod_list_default.csv");
  ASSERT_TRUE(pods.ok()) << pods.error().message;
  const Timeline t = TimelineFromTrace(*pods, "openb_pod_list_default.csv", CsvDataLines(text), 1);
  Result<DemandForecast> f = BuildDemandForecast(t, {}, {});
  ASSERT_TRUE(f.ok()) << f.error().message;
  std::cout << FormatForecastTable(*f);
  for (const ClassBacktest& c : f->backtest.classes) {
    std::cout << "backtest " << c.name << ": held-out mean demand " << c.mean_actual
              << " GPUs, mean forecast p95 " << c.mean_forecast_p95 << " GPUs\n";
  }
  EXPECT_TRUE(f->history.by_hour);
  EXPECT_GT(f->history.end_s() - f->history.start_s, 140 * kDay);
  EXPECT_GT(Class(f->history, "LS").pods, 1000);
  EXPECT_GT(f->backtest.buckets, 0);
}

}  // namespace
}  // namespace tessera
