#include "plan/forecast.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "model/resources.h"
#include "util/format.h"
#include "util/percentile.h"

namespace tessera {
namespace {

constexpr double kDayS = 86400;
constexpr double kHourS = 3600;
constexpr int64_t kMaxBuckets = 100'000'000;  // 8 bytes each and class: a bucket_s typo

DemandQuantiles Summarize(std::vector<double> v) {
  DemandQuantiles q;
  if (v.empty()) return q;
  std::sort(v.begin(), v.end());
  q.p50 = Percentile(v, 50);
  q.p95 = Percentile(v, 95);
  q.p99 = Percentile(v, 99);
  double sum = 0;
  for (double x : v) sum += x;
  q.mean = sum / static_cast<double>(v.size());
  q.max = v.back();
  return q;
}

DemandQuantiles Scaled(DemandQuantiles q, double g) {
  q.p50 *= g;
  q.p95 *= g;
  q.p99 *= g;
  q.mean *= g;
  q.max *= g;
  return q;
}

// A number for a message: integers without decimals.
std::string Num(double x) {
  return x == std::floor(x) && std::fabs(x) < 1e15 ? std::to_string(static_cast<int64_t>(x))
                                                   : Fixed(x, 3);
}

// Why a span of `span_s` seconds in buckets of `bucket_s` has no hour-of-day profile, or "".
std::string NoByHour(double span_s, double bucket_s) {
  if (bucket_s > kHourS) return "buckets of " + Num(bucket_s) + " s are longer than an hour";
  if (span_s < 2 * kDayS) return "the history spans " + Fixed(span_s / kDayS, 2) + " days, < 2";
  return {};
}

// The quantiles of `series` over buckets [begin, end) by hour of day (24 entries).
std::vector<DemandQuantiles> ByHour(const DemandHistory& h, const std::vector<double>& series,
                                    int64_t begin, int64_t end) {
  std::vector<std::vector<double>> per_hour(24);
  for (int64_t i = begin; i < end; ++i) per_hour[h.HourOf(i)].push_back(series[i]);
  std::vector<DemandQuantiles> out;
  out.reserve(24);
  for (auto& v : per_hour) out.push_back(Summarize(std::move(v)));
  return out;
}

// The location-scale hour-of-day model of `series` over buckets [begin, end): hour h's
// quantile p is m_h + s_h · z_p, with s_h the hour's standard deviation, z_p the p-quantile of
// the standardized demand (x − m_h) / s_h pooled over all hours (an hour with s_h = 0 adds
// nothing and forecasts m_h), and m_h the hour's mean shrunk toward the overall mean m by
// empirical Bayes: m_h = m + (1 − B)(mean_h − m), B = the noise variance of an hour's mean
// (from how its days differ, so that autocorrelation counts) / the variance of the hour means,
// clamped to [0, 1]. A stationary demand's hour means differ by noise alone and shrink to m;
// without the shrinkage each hour's forecast is learnt from a few independent samples and the
// backtest on 7 days of stationary demand (tests/plan/forecast_test.cc) exceeds the p95 in
// about 9 % of the buckets rather than about 6.5 %.
std::vector<DemandQuantiles> SeasonalByHour(const DemandHistory& h,
                                            const std::vector<double>& series, int64_t begin,
                                            int64_t end) {
  // Per hour: the mean of each day's buckets in that hour, then their mean and spread.
  std::vector<std::map<int64_t, std::pair<double, double>>> days(24);  // day -> (sum, count)
  std::vector<double> sum(24, 0), count(24, 0);
  double total = 0;
  for (int64_t i = begin; i < end; ++i) {
    const int hour = h.HourOf(i);
    const int64_t day = static_cast<int64_t>(
        std::floor((h.start_s + static_cast<double>(i) * h.bucket_s + h.day_offset_s) / kDayS));
    auto& d = days[hour][day];
    d.first += series[i];
    d.second += 1;
    sum[hour] += series[i];
    count[hour] += 1;
    total += series[i];
  }
  const double overall = total / static_cast<double>(end - begin);
  std::vector<double> raw(24, overall);
  double noise = 0, spread = 0;
  for (int hour = 0; hour < 24; ++hour) {
    if (count[hour] == 0) continue;
    raw[hour] = sum[hour] / count[hour];
    spread += (raw[hour] - overall) * (raw[hour] - overall);
    const double k = static_cast<double>(days[hour].size());
    if (k < 2) continue;
    double v = 0;
    for (const auto& [day, d] : days[hour]) {
      const double m = d.first / d.second;
      v += (m - raw[hour]) * (m - raw[hour]);
    }
    noise += v / (k - 1) / k;  // the variance of the mean of k day means
  }
  const double b = spread > 0 ? std::clamp(noise / spread, 0.0, 1.0) : 1.0;
  std::vector<double> mean(24), sd(24, 0), sum2(24, 0);
  for (int hour = 0; hour < 24; ++hour) mean[hour] = overall + (1 - b) * (raw[hour] - overall);
  for (int64_t i = begin; i < end; ++i) {
    const int hour = h.HourOf(i);
    sum2[hour] += (series[i] - raw[hour]) * (series[i] - raw[hour]);
  }
  for (int hour = 0; hour < 24; ++hour) {
    sd[hour] = count[hour] > 1 ? std::sqrt(sum2[hour] / (count[hour] - 1)) : 0;
    // Below rounding noise the hour is constant.
    if (sd[hour] <= 1e-9 * (1 + std::fabs(mean[hour]))) sd[hour] = 0;
  }
  std::vector<double> z;
  for (int64_t i = begin; i < end; ++i) {
    const int hour = h.HourOf(i);
    if (sd[hour] > 0) z.push_back((series[i] - mean[hour]) / sd[hour]);
  }
  const DemandQuantiles zq = Summarize(std::move(z));
  std::vector<DemandQuantiles> out(24);
  for (int hour = 0; hour < 24; ++hour) {
    DemandQuantiles& q = out[hour];
    q.mean = mean[hour];
    // The demand is never negative: a low quantile of a skewed hour is clamped at 0.
    q.p50 = std::max(0.0, mean[hour] + sd[hour] * zq.p50);
    q.p95 = std::max(0.0, mean[hour] + sd[hour] * zq.p95);
    q.p99 = std::max(0.0, mean[hour] + sd[hour] * zq.p99);
    q.max = std::max(0.0, mean[hour] + sd[hour] * zq.max);
  }
  return out;
}

bool InWindow(int hour, const ForecastSpec& spec) {
  return (hour - spec.window_start_hour + 24) % 24 < spec.window_hours;
}

}  // namespace

int DemandHistory::HourOf(int64_t i) const {
  double t = std::fmod(start_s + static_cast<double>(i) * bucket_s + day_offset_s, kDayS);
  if (t < 0) t += kDayS;
  return std::clamp(static_cast<int>(t / kHourS), 0, 23);
}

double ClassBacktest::exceeded_pct() const {
  return buckets > 0 ? 100.0 * static_cast<double>(exceeded) / static_cast<double>(buckets) : 0;
}

double Backtest::exceeded_pct() const {
  return buckets > 0 ? 100.0 * static_cast<double>(exceeded) / static_cast<double>(buckets) : 0;
}

Result<DemandHistory> AnalyzeDemand(const Timeline& timeline, const ForecastOptions& options) {
  const double w = options.bucket_s;
  if (!std::isfinite(w) || w <= 0) return Error{"bucket width " + Num(w) + " s must be > 0"};
  if (!std::isfinite(options.warmup_s) || options.warmup_s < 0) {
    return Error{"warm-up " + Num(options.warmup_s) + " s must be >= 0"};
  }
  if (!std::isfinite(options.day_offset_s)) return Error{"day offset must be finite"};
  if (options.classes.classes.empty()) return Error{"no classes of service"};
  if (timeline.pods.empty()) {
    std::string msg = "demand history: no pods with usable times";
    if (!timeline.skipped.empty()) {
      const SkippedPod& s = timeline.skipped.front();
      msg += " (" + std::to_string(timeline.skipped.size()) + " skipped; the first at " + s.where +
             ": " + s.reason + ")";
    }
    return Error{msg};
  }

  DemandHistory h;
  h.bucket_s = w;
  h.day_offset_s = options.day_offset_s;
  h.start_s = std::ceil(options.warmup_s / w) * w;
  double last = 0;
  for (const TimedPod& p : timeline.pods) last = std::max(last, p.arrival_s);
  const double whole = last > h.start_s ? std::floor((last - h.start_s) / w) : 0;
  if (whole < 2) {
    return Error{"demand history: " + Num(whole) + " whole bucket" + (whole == 1 ? "" : "s") +
                 " of " + Num(w) + " s between " + Num(h.start_s) + " s and the last arrival at " +
                 Num(last) + " s; need at least 2"};
  }
  if (whole > kMaxBuckets) {
    return Error{"demand history: " + Num(whole) + " buckets of " + Num(w) + " s; more than " +
                 std::to_string(kMaxBuckets) + " (a wider bucket)"};
  }
  h.buckets = static_cast<int64_t>(whole);
  const int64_t n = h.buckets;
  const double end = h.end_s();
  h.no_by_hour = NoByHour(end - h.start_s, w);
  h.by_hour = h.no_by_hour.empty();

  const size_t classes = options.classes.classes.size();
  // Per class: whole buckets a pod covers as a difference array of milli-GPUs (exact
  // integers, so an idle stretch sums to exactly 0), partial buckets as fractions.
  std::vector<std::vector<int64_t>> diff(classes, std::vector<int64_t>(n + 1, 0));
  std::vector<std::vector<double>> partial(classes, std::vector<double>(n, 0.0));
  std::vector<std::vector<int64_t>> arrivals(classes, std::vector<int64_t>(n, 0));
  std::vector<std::vector<double>> durations(classes);
  h.classes.resize(classes);
  for (size_t c = 0; c < classes; ++c) h.classes[c].name = options.classes.classes[c].name;

  for (const TimedPod& p : timeline.pods) {
    const size_t c = static_cast<size_t>(options.classes.Find(p.spec.qos));
    ClassDemand& cd = h.classes[c];
    const int64_t milli = p.spec.gpu_count > 0 && p.spec.gpu_milli > 0 ? p.spec.TotalGpuMilli() : 0;
    if (milli == 0) {
      ++cd.cpu_only_pods;
      continue;
    }
    ++cd.pods;
    durations[c].push_back(p.duration_s);
    if (p.arrival_s >= h.start_s && p.arrival_s < end) {
      ++arrivals[c][static_cast<size_t>((p.arrival_s - h.start_s) / w)];
    }
    const double lo = std::max(p.arrival_s, h.start_s);
    const double hi = std::min(p.arrival_s + p.duration_s, end);
    if (hi <= lo) continue;
    const double x0 = (lo - h.start_s) / w;
    const double x1 = (hi - h.start_s) / w;
    const int64_t b0 = std::min<int64_t>(static_cast<int64_t>(x0), n - 1);
    const int64_t b1 = std::min<int64_t>(static_cast<int64_t>(x1), n);
    const double g = static_cast<double>(milli) / kMilliPerGpu;
    if (b0 == b1) {
      partial[c][b0] += g * (x1 - x0);
      continue;
    }
    partial[c][b0] += g * (static_cast<double>(b0 + 1) - x0);
    diff[c][b0 + 1] += milli;
    diff[c][b1] -= milli;
    if (b1 < n) partial[c][b1] += g * (x1 - static_cast<double>(b1));
  }

  for (size_t c = 0; c < classes; ++c) {
    ClassDemand& cd = h.classes[c];
    cd.series.resize(n);
    int64_t running = 0;
    int64_t total_arrivals = 0, peak_arrivals = 0;
    for (int64_t i = 0; i < n; ++i) {
      running += diff[c][i];
      cd.series[i] = static_cast<double>(running) / kMilliPerGpu + partial[c][i];
      total_arrivals += arrivals[c][i];
      peak_arrivals = std::max(peak_arrivals, arrivals[c][i]);
    }
    cd.gpus = Summarize(cd.series);
    if (h.by_hour) cd.gpus_by_hour = ByHour(h, cd.series, 0, n);
    cd.arrivals_per_hour_mean = static_cast<double>(total_arrivals) / ((end - h.start_s) / kHourS);
    cd.arrivals_per_hour_peak = static_cast<double>(peak_arrivals) * kHourS / w;
    cd.duration_s = Summarize(std::move(durations[c]));
  }
  return h;
}

Result<Forecast> ForecastDemand(const DemandHistory& history, const ForecastSpec& spec) {
  if (!std::isfinite(spec.growth) || spec.growth <= 0) {
    return Error{"growth factor " + Num(spec.growth) + " must be > 0"};
  }
  if (spec.window_start_hour < 0 || spec.window_start_hour > 23) {
    return Error{"window start hour " + std::to_string(spec.window_start_hour) +
                 " must be in 0..23"};
  }
  if (spec.window_hours < 1 || spec.window_hours > 24) {
    return Error{"window length " + std::to_string(spec.window_hours) + " hours must be in 1..24"};
  }
  const int64_t n = history.buckets;
  const double w = history.bucket_s;
  Forecast f;
  f.spec = spec;
  int64_t begin = 0, end = n;
  f.basis = "all " + std::to_string(n) + " buckets of " + Num(w) + " s";
  f.by_hour = history.by_hour;
  f.no_by_hour = history.no_by_hour;
  if (spec.busiest_day) {
    // Whole days [d·86400 − offset, (d+1)·86400 − offset) inside the sampled window; the one
    // with the most demand summed over its buckets and the classes.
    const double first_day = std::ceil((history.start_s + history.day_offset_s) / kDayS);
    const double last_day = std::floor((history.end_s() + history.day_offset_s) / kDayS);
    double best = -1;
    for (double d = first_day; d + 1 <= last_day; d += 1) {
      const double from = d * kDayS - history.day_offset_s;
      const int64_t b = static_cast<int64_t>(std::llround((from - history.start_s) / w));
      const int64_t e = std::min<int64_t>(
          n, static_cast<int64_t>(std::llround((from + kDayS - history.start_s) / w)));
      double sum = 0;
      for (const ClassDemand& c : history.classes) {
        for (int64_t i = b; i < e; ++i) sum += c.series[i];
      }
      if (sum > best) {
        best = sum;
        begin = b;
        end = e;
      }
    }
    if (best < 0) {
      f.basis = "no whole day in the history: " + f.basis;
    } else {
      f.basis = "the busiest day: buckets " + std::to_string(begin) + ".." +
                std::to_string(end - 1) + " (from " + Num(history.start_s + begin * w) + " s), " +
                Fixed(best * w / kHourS, 2) + " GPU-hours";
      f.no_by_hour = w > kHourS ? NoByHour(kDayS, w) : "";
      f.by_hour = f.no_by_hour.empty();
    }
  }
  if (spec.window_hours < 24) {
    f.basis += ", hours " + std::to_string(spec.window_start_hour) + "-" +
               std::to_string((spec.window_start_hour + spec.window_hours) % 24);
  }
  std::vector<int64_t> picked;
  for (int64_t i = begin; i < end; ++i) {
    if (InWindow(history.HourOf(i), spec)) picked.push_back(i);
  }
  if (picked.empty()) {
    return Error{"no bucket of the history starts in hours " +
                 std::to_string(spec.window_start_hour) + ".." +
                 std::to_string((spec.window_start_hour + spec.window_hours - 1) % 24)};
  }
  for (const ClassDemand& c : history.classes) {
    ClassForecast cf;
    cf.name = c.name;
    std::vector<double> v;
    v.reserve(picked.size());
    for (int64_t i : picked) v.push_back(c.series[i]);
    cf.gpus = Scaled(Summarize(std::move(v)), spec.growth);
    if (f.by_hour) {
      for (const DemandQuantiles& q : SeasonalByHour(history, c.series, begin, end)) {
        cf.gpus_by_hour.push_back(Scaled(q, spec.growth));
      }
    }
    f.classes.push_back(std::move(cf));
  }
  return f;
}

Result<Backtest> BacktestDemand(const DemandHistory& history, double holdout_fraction) {
  if (!(holdout_fraction > 0 && holdout_fraction < 1)) {
    return Error{"held-out fraction " + Num(holdout_fraction) + " must be in (0, 1)"};
  }
  const int64_t n = history.buckets;
  const int64_t test =
      std::max<int64_t>(1, std::llround(static_cast<double>(n) * holdout_fraction));
  if (test >= n) {
    return Error{"backtest: holding out " + Num(holdout_fraction) + " of " + std::to_string(n) +
                 " buckets leaves none to forecast from"};
  }
  Backtest bt;
  bt.holdout_fraction = holdout_fraction;
  bt.train_buckets = n - test;
  bt.test_buckets = test;
  bt.split_s = history.start_s + static_cast<double>(bt.train_buckets) * history.bucket_s;
  bt.no_by_hour =
      NoByHour(static_cast<double>(bt.train_buckets) * history.bucket_s, history.bucket_s);
  bt.by_hour = bt.no_by_hour.empty();
  for (const ClassDemand& c : history.classes) {
    ClassBacktest cb;
    cb.name = c.name;
    const std::vector<double> train(c.series.begin(), c.series.begin() + bt.train_buckets);
    const double p95 = Summarize(train).p95;
    std::vector<DemandQuantiles> hourly;
    if (bt.by_hour) hourly = SeasonalByHour(history, c.series, 0, bt.train_buckets);
    double sum_forecast = 0, sum_actual = 0;
    for (int64_t i = bt.train_buckets; i < n; ++i) {
      const double forecast = bt.by_hour ? hourly[history.HourOf(i)].p95 : p95;
      const double actual = c.series[i];
      ++cb.buckets;
      // The tolerance keeps equal demands (a constant one, summed in another order) apart
      // from a real exceedance.
      if (actual > forecast + 1e-9 * (1 + forecast)) ++cb.exceeded;
      sum_forecast += forecast;
      sum_actual += actual;
    }
    cb.mean_forecast_p95 = sum_forecast / static_cast<double>(cb.buckets);
    cb.mean_actual = sum_actual / static_cast<double>(cb.buckets);
    if (c.pods > 0) {
      bt.buckets += cb.buckets;
      bt.exceeded += cb.exceeded;
    }
    bt.classes.push_back(std::move(cb));
  }
  return bt;
}

Result<DemandForecast> BuildDemandForecast(const Timeline& timeline, const ForecastOptions& options,
                                           const ForecastSpec& spec) {
  DemandForecast out;
  TESSERA_ASSIGN_OR_RETURN(out.history, AnalyzeDemand(timeline, options));
  TESSERA_ASSIGN_OR_RETURN(out.forecast, ForecastDemand(out.history, spec));
  TESSERA_ASSIGN_OR_RETURN(out.backtest, BacktestDemand(out.history, options.holdout_fraction));
  return out;
}

Result<std::vector<int64_t>> BaselineGpusPerClass(const Forecast& forecast, double utilization) {
  if (!(utilization > 0 && utilization <= 1)) {
    return Error{"target utilization " + Num(utilization) + " must be in (0, 1]"};
  }
  std::vector<int64_t> out;
  for (const ClassForecast& c : forecast.classes) {
    out.push_back(static_cast<int64_t>(std::ceil(c.gpus.p95 / utilization - 1e-9)));
  }
  return out;
}

Result<int64_t> BaselineGpus(const Forecast& forecast, double utilization) {
  if (!(utilization > 0 && utilization <= 1)) {
    return Error{"target utilization " + Num(utilization) + " must be in (0, 1]"};
  }
  double sum = 0;
  for (const ClassForecast& c : forecast.classes) sum += c.gpus.p95;
  return static_cast<int64_t>(std::ceil(sum / utilization - 1e-9));
}

namespace {

using Json = nlohmann::ordered_json;

// Rounded to 3 decimals, without a negative zero, so that the text is stable.
double R(double x) {
  const double r = std::round(x * 1000) / 1000;
  return r == 0 ? 0.0 : r;
}

Json QuantilesJson(const DemandQuantiles& q) {
  Json j;
  j["p50"] = R(q.p50);
  j["p95"] = R(q.p95);
  j["p99"] = R(q.p99);
  j["mean"] = R(q.mean);
  j["max"] = R(q.max);
  return j;
}

// {"p50": [24], "p95": [24], "p99": [24]}, or null without a profile.
Json ByHourJson(const std::vector<DemandQuantiles>& hours) {
  if (hours.empty()) return nullptr;
  Json j;
  for (const char* key : {"p50", "p95", "p99"}) {
    Json a = Json::array();
    for (const DemandQuantiles& q : hours) {
      const std::string k = key;
      a.push_back(R(k == "p50" ? q.p50 : k == "p95" ? q.p95 : q.p99));
    }
    j[key] = std::move(a);
  }
  return j;
}

}  // namespace

nlohmann::ordered_json ToJson(const DemandForecast& f) {
  const DemandHistory& h = f.history;
  Json history;
  history["bucket_s"] = R(h.bucket_s);
  history["day_offset_s"] = R(h.day_offset_s);
  history["start_s"] = R(h.start_s);
  history["end_s"] = R(h.end_s());
  history["buckets"] = h.buckets;
  history["by_hour"] = h.by_hour;
  history["no_by_hour"] = h.no_by_hour;
  Json classes = Json::array();
  for (const ClassDemand& c : h.classes) {
    Json j;
    j["class"] = c.name;
    j["pods"] = c.pods;
    j["cpu_only_pods"] = c.cpu_only_pods;
    j["arrivals_per_hour"] = {{"mean", R(c.arrivals_per_hour_mean)},
                              {"peak", R(c.arrivals_per_hour_peak)}};
    j["duration_s"] = QuantilesJson(c.duration_s);
    j["gpus"] = QuantilesJson(c.gpus);
    j["gpus_by_hour"] = ByHourJson(c.gpus_by_hour);
    classes.push_back(std::move(j));
  }
  history["classes"] = std::move(classes);

  const Forecast& fc = f.forecast;
  Json forecast;
  forecast["growth"] = R(fc.spec.growth);
  forecast["busiest_day"] = fc.spec.busiest_day;
  forecast["window"] = {{"start_hour", fc.spec.window_start_hour}, {"hours", fc.spec.window_hours}};
  forecast["basis"] = fc.basis;
  forecast["by_hour"] = fc.by_hour;
  forecast["no_by_hour"] = fc.no_by_hour;
  Json fclasses = Json::array();
  for (const ClassForecast& c : fc.classes) {
    Json j;
    j["class"] = c.name;
    j["gpus"] = QuantilesJson(c.gpus);
    j["gpus_by_hour"] = ByHourJson(c.gpus_by_hour);
    fclasses.push_back(std::move(j));
  }
  forecast["classes"] = std::move(fclasses);

  const Backtest& b = f.backtest;
  Json backtest;
  backtest["holdout_fraction"] = R(b.holdout_fraction);
  backtest["split_s"] = R(b.split_s);
  backtest["train_buckets"] = b.train_buckets;
  backtest["test_buckets"] = b.test_buckets;
  backtest["by_hour"] = b.by_hour;
  backtest["no_by_hour"] = b.no_by_hour;
  Json bclasses = Json::array();
  for (const ClassBacktest& c : b.classes) {
    Json j;
    j["class"] = c.name;
    j["buckets"] = c.buckets;
    j["exceeded"] = c.exceeded;
    j["exceeded_pct"] = R(c.exceeded_pct());
    j["mean_forecast_p95"] = R(c.mean_forecast_p95);
    j["mean_actual"] = R(c.mean_actual);
    bclasses.push_back(std::move(j));
  }
  backtest["classes"] = std::move(bclasses);
  backtest["buckets"] = b.buckets;
  backtest["exceeded"] = b.exceeded;
  backtest["exceeded_pct"] = R(b.exceeded_pct());

  Json out;
  out["history"] = std::move(history);
  out["forecast"] = std::move(forecast);
  out["backtest"] = std::move(backtest);
  return out;
}

std::string FormatForecastTable(const DemandForecast& f) {
  const DemandHistory& h = f.history;
  std::string out =
      "demand history: " + std::to_string(h.buckets) + " buckets of " + Num(h.bucket_s) +
      " s from " + Num(h.start_s) + " s (" + Fixed((h.end_s() - h.start_s) / kDayS, 2) +
      " days); " + (h.by_hour ? "by hour of day" : "no hour-of-day profile: " + h.no_by_hour) +
      "\nforecast: " + f.forecast.basis + " x " + Fixed(f.forecast.spec.growth, 2) + "\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-12s %7s %8s %8s %9s %9s %8s %8s %8s %9s %7s\n", "class",
                "pods", "arr/h", "peak/h", "dur p50", "dur p95", "GPU p50", "GPU p95", "GPU p99",
                "fcst p95", ">p95 %");
  out += line;
  for (size_t c = 0; c < h.classes.size(); ++c) {
    const ClassDemand& d = h.classes[c];
    const double fcst = c < f.forecast.classes.size() ? f.forecast.classes[c].gpus.p95 : 0;
    const double exceeded =
        c < f.backtest.classes.size() ? f.backtest.classes[c].exceeded_pct() : 0;
    std::snprintf(line, sizeof line,
                  "%-12s %7lld %8.2f %8.2f %9.0f %9.0f %8.2f %8.2f %8.2f %9.2f %7.2f\n",
                  d.name.c_str(), static_cast<long long>(d.pods), d.arrivals_per_hour_mean,
                  d.arrivals_per_hour_peak, d.duration_s.p50, d.duration_s.p95, d.gpus.p50,
                  d.gpus.p95, d.gpus.p99, fcst, exceeded);
    out += line;
  }
  const Backtest& b = f.backtest;
  out += "backtest: the last " + Fixed(100 * b.holdout_fraction, 0) + " % (" +
         std::to_string(b.test_buckets) + " buckets from " + Num(b.split_s) + " s) forecast " +
         (b.by_hour ? "by hour of day" : "overall (" + b.no_by_hour + ")") +
         "; actual demand above the forecast p95 in " + Fixed(b.exceeded_pct(), 2) + " % of " +
         std::to_string(b.buckets) + " class-buckets\n";
  return out;
}

}  // namespace tessera
