#pragma once

// Demand forecast: per class of service, the concurrent GPU demand of a pod history sampled by
// time bucket (its p50/p95/p99 overall and by hour of day), the arrival rates and the duration
// distribution; a forecast of the demand quantiles for a future window (the history × a growth
// factor, or its busiest day × k); and a backtest that forecasts the held-out end of the
// history from the rest and counts how often the actual demand exceeded the forecast p95. The
// planner's demand model (`tessera plan`) and its "forecast p95 GPUs / target utilization"
// baseline. Pure functions: no I/O, no clock; thread-safe.
//
// The demand is what the pods asked for, not what a cluster placed: a pod adds its GPUs
// (gpu_count · gpu_milli / 1000, so a sharing pod a fraction) from its arrival for its
// duration. A bucket's demand is the time average over the bucket (GPU-seconds / bucket_s),
// so the mean over the buckets is λ · E[S] · GPUs per pod (Little's law). Quantiles are
// nearest-rank, as the replay's wait quantiles. The forecast's hour-of-day quantiles (and the
// backtest's) come from a location-scale model rather than from each hour's few buckets alone:
// hour h's quantile p is m_h + s_h · z_p, with m_h the hour's mean shrunk toward the overall
// mean by empirical Bayes (as far as its days disagree), s_h its standard deviation and z_p
// the p-quantile of the standardized demand pooled over the hours. The forecast scales the
// quantiles linearly with the growth factor: exact when each pod becomes g pods at once,
// conservative (above the truth) for g times as many independent arrivals, whose spread grows
// only as √g. The statistics are written by hand: exact nearest-rank quantiles are a sort, and
// Boost.Accumulators' quantile estimators (P², extended P²) are approximations that would not
// match the replay's quantiles.

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "replay/timeline.h"
#include "sched/classes.h"
#include "util/result.h"

namespace tessera {

/// How a history is cut into buckets and classes.
struct ForecastOptions {
  /// A pod's class is classes.Find(spec.qos), as in the replay (unknown qos: the fallback).
  QosClasses classes = DefaultQosClasses();
  double bucket_s = 300;  ///< bucket width, seconds (> 0)
  /// Buckets before this time are not sampled: the pods that arrived before the history began
  /// are unknown, so its first hours under-count the demand (default: none).
  double warmup_s = 0;
  /// The hour of day of time t is floor(((t + day_offset_s) mod 86400) / 3600): 0 when t = 0
  /// is midnight (arrival times are seconds from the history's first arrival).
  double day_offset_s = 0;
  double holdout_fraction = 0.25;  ///< backtest: the share of the buckets held out, in (0, 1)
};

/// Quantiles, mean and maximum of a sample (concurrent GPUs or durations in seconds).
struct DemandQuantiles {
  double p50 = 0, p95 = 0, p99 = 0;
  double mean = 0, max = 0;
};

/// The demand history of one class.
struct ClassDemand {
  std::string name;
  int64_t pods = 0;           ///< the class's pods that ask for a GPU (all the rest is about them)
  int64_t cpu_only_pods = 0;  ///< the class's pods that ask for none
  DemandQuantiles gpus;       ///< concurrent GPUs over all sampled buckets
  /// 24 entries (hour of day 0..23) when DemandHistory::by_hour; empty otherwise.
  std::vector<DemandQuantiles> gpus_by_hour;
  double arrivals_per_hour_mean = 0;  ///< arrivals in the sampled window / its length in hours
  double arrivals_per_hour_peak = 0;  ///< the busiest bucket's arrivals, as a rate per hour
  DemandQuantiles duration_s;         ///< of all the class's GPU pods
  /// The demand of each sampled bucket, GPUs (bucket i starts at start_s + i · bucket_s).
  /// Per-bucket data: ToJson leaves it out.
  std::vector<double> series;
};

/// The sampled window and the classes' demand in it.
struct DemandHistory {
  double bucket_s = 300;
  double day_offset_s = 0;
  double start_s = 0;      ///< the first sampled bucket's start (warmup_s rounded up to a bucket)
  int64_t buckets = 0;     ///< whole buckets up to the last arrival
  bool by_hour = false;    ///< whether the hour-of-day quantiles are there
  std::string no_by_hour;  ///< why not, when !by_hour ("the history spans 1.50 days, < 2")
  std::vector<ClassDemand> classes;  ///< one per class of ForecastOptions::classes, in order

  double end_s() const { return start_s + static_cast<double>(buckets) * bucket_s; }
  /// The hour of day (0..23) of bucket i's start.
  int HourOf(int64_t i) const;
};

/// The future window to forecast.
struct ForecastSpec {
  double growth = 1;  ///< the demand multiplier (> 0): 1.1 for +10 %
  /// Forecast from the busiest whole day of the history (the highest demand summed over the
  /// classes; the earliest on a tie) instead of all of it: "the busiest day × 3" is
  /// busiest_day with growth 3. Without a whole day in the history, all of it is used.
  bool busiest_day = false;
  /// The window's hours of day: [window_start_hour, window_start_hour + window_hours) mod 24;
  /// the window quantiles pool the buckets that start in them. 0..23 and 1..24.
  int window_start_hour = 0;
  int window_hours = 24;
};

struct ClassForecast {
  std::string name;
  DemandQuantiles gpus;  ///< concurrent GPUs in the window (empirical), × growth
  /// 24 entries (the location-scale model of the basis's buckets, whatever the window) when
  /// Forecast::by_hour, × growth; empty otherwise.
  std::vector<DemandQuantiles> gpus_by_hour;
};

struct Forecast {
  ForecastSpec spec;
  std::string basis;  ///< what was scaled: "all 2016 buckets", "the busiest day, ..."
  bool by_hour = false;
  std::string no_by_hour;              ///< why not, when !by_hour
  std::vector<ClassForecast> classes;  ///< in the history's order
};

/// The backtest of one class: held-out buckets where the actual demand was above the p95
/// forecast from the buckets before them (by hour of day when those span 2 days or more).
struct ClassBacktest {
  std::string name;
  int64_t buckets = 0;
  int64_t exceeded = 0;
  double mean_forecast_p95 = 0;  ///< over the held-out buckets, GPUs
  double mean_actual = 0;        ///< over the held-out buckets, GPUs

  double exceeded_pct() const;
};

struct Backtest {
  double holdout_fraction = 0.25;
  double split_s = 0;  ///< the held-out part starts here
  int64_t train_buckets = 0, test_buckets = 0;
  bool by_hour = false;  ///< whether the forecast was by hour of day
  std::string no_by_hour;
  std::vector<ClassBacktest> classes;
  /// Pooled over the classes that have GPU pods: class-buckets and exceedances.
  int64_t buckets = 0;
  int64_t exceeded = 0;

  double exceeded_pct() const;
};

/// All three, for the planner and for plan.json.
struct DemandForecast {
  DemandHistory history;
  Forecast forecast;
  Backtest backtest;
};

/// The demand history of `timeline`. Errors: bucket_s <= 0 or non-finite, warmup_s < 0, and a
/// history with fewer than two whole buckets between warmup_s and the last arrival ("demand
/// history: 1 whole bucket of 300 s between 0 s and the last arrival at 420 s; need at least
/// 2"), an empty one included.
Result<DemandHistory> AnalyzeDemand(const Timeline& timeline, const ForecastOptions& options);

/// The forecast of `history` for `spec`. Errors: growth <= 0, window hours out of range, a
/// window in which no bucket of the history starts.
Result<Forecast> ForecastDemand(const DemandHistory& history, const ForecastSpec& spec);

/// Holds out the last `holdout_fraction` of the buckets (at least one, at least one left to
/// train on), forecasts their p95 from the rest with growth 1 and counts the exceedances.
/// Errors: a fraction outside (0, 1), a history too short to split.
Result<Backtest> BacktestDemand(const DemandHistory& history, double holdout_fraction);

/// AnalyzeDemand, ForecastDemand and BacktestDemand (options.holdout_fraction) in one.
Result<DemandForecast> BuildDemandForecast(const Timeline& timeline, const ForecastOptions& options,
                                           const ForecastSpec& spec);

/// The "forecast p95 GPUs / target utilization" baseline: ceil(Σ over classes of the window
/// p95 / utilization), GPUs. Error: utilization outside (0, 1].
Result<int64_t> BaselineGpus(const Forecast& forecast, double utilization);
/// The same per class: ceil(p95 / utilization), in the forecast's class order.
Result<std::vector<int64_t>> BaselineGpusPerClass(const Forecast& forecast, double utilization);

/// The forecast as JSON: keys in a fixed order, numbers rounded to 3 decimals, the per-bucket
/// series left out; byte-identical for identical inputs.
nlohmann::ordered_json ToJson(const DemandForecast& forecast);

/// A text table for stdout: a line on the window, one row per class (pods, arrival rates,
/// duration p50/p95, demand p50/p95/p99, forecast p95, backtest exceedance), the pooled
/// backtest line.
std::string FormatForecastTable(const DemandForecast& forecast);

}  // namespace tessera
