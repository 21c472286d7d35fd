#include "plan/planner.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <limits>
#include <thread>

#include "model/cluster.h"
#include "plan/demand.h"
#include "util/percentile.h"

namespace tessera {
namespace {

constexpr int kSamples = 100;  // time-series points per replay: allocation, stranding, headroom

// Runs f(i) for i in [0, n) on `threads` threads.
void ParallelFor(int n, int threads, const std::function<void(int)>& f) {
  threads = std::max(1, std::min(threads, n));
  std::atomic<int> next{0};
  auto work = [&] {
    for (int i = next++; i < n; i = next++) f(i);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

double Quantile(const ClassStats& c, int q) {
  return q == 50 ? c.wait_p50_s : q == 95 ? c.wait_p95_s : c.wait_p99_s;
}
double Quantile(const ClassOutcome& c, int q) {
  return q == 50 ? c.p50_s : q == 95 ? c.p95_s : c.p99_s;
}

// Sort key of mixes: cost, then GPUs, then the counts.
bool Cheaper(const Evaluation& a, const Evaluation& b) {
  if (a.cost != b.cost) return a.cost < b.cost;
  if (a.gpus != b.gpus) return a.gpus < b.gpus;
  return a.counts < b.counts;
}

// Why policy `policy` has no plan: the first SLO missed by the largest mix its search replayed
// (every unit replays its largest mix first; a mix replayed twice counts with its last replay,
// the one on every seed).
std::string NoPlanReason(const PlanSpec& spec, const std::vector<UnitResult>& units, int policy) {
  const std::vector<SearchUnit> all = Units(spec);
  const Evaluation* largest = nullptr;
  for (const UnitResult& u : units) {
    if (all[static_cast<size_t>(u.index)].policy != policy) continue;
    for (const Evaluation& e : u.evaluated) {
      if (!e.meets && (!largest || e.gpus >= largest->gpus)) largest = &e;
    }
  }
  std::string why = "no mix up to the catalog's maximum meets every SLO";
  if (largest) {
    why += ": at " + MixName(spec.catalog, largest->counts) + " (" + std::to_string(largest->gpus) +
           " GPUs) " + largest->missed;
  }
  return why;
}

}  // namespace

int PlanSpec::ClassIndex(const std::string& name) const {
  const auto& cs = replay.qos.classes;
  for (size_t i = 0; i < cs.size(); ++i) {
    if (cs[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

const Timeline& DemandDraws::Get(uint64_t seed, double factor) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find({seed, factor});
    if (it != cache_.end()) return *it->second;
  }
  auto t = std::make_unique<Timeline>(draw_(seed, factor));
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = cache_.emplace(std::make_pair(seed, factor), std::move(t));
  return *it->second;
}

std::vector<double> DemandDraws::Served(const std::vector<int>& counts, uint64_t seed,
                                        double factor,
                                        const std::function<std::vector<double>()>& compute) const {
  const auto key = std::make_tuple(counts, seed, factor);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = served_.find(key);
    if (it != served_.end()) return it->second;
  }
  std::vector<double> v = compute();  // outside the lock: a replay
  std::lock_guard<std::mutex> lock(mu_);
  return served_.emplace(key, std::move(v)).first->second;
}

std::vector<SearchUnit> Units(const PlanSpec& spec) {
  std::vector<SearchUnit> units;
  for (size_t p = 0; p < spec.policies.size(); ++p) {
    if (spec.catalog.types.size() < 2) {
      units.push_back({static_cast<int>(p), -1});
      continue;
    }
    for (int c : CountsOf(spec.catalog.types[0])) units.push_back({static_cast<int>(p), c});
  }
  return units;
}

Evaluation Evaluate(const PlanSpec& spec, const DemandDraws& demand, int policy,
                    const std::vector<int>& counts, const std::vector<uint64_t>& seeds,
                    double factor, bool all_seeds) {
  Evaluation e;
  e.counts = counts;
  e.gpus = MixGpus(spec.catalog, counts);
  e.cost = MixCost(spec.catalog, counts);
  e.meets = true;
  const std::vector<QosClass>& qos = spec.replay.qos.classes;
  for (const QosClass& c : qos) {
    ClassOutcome o;
    o.name = c.name;
    o.gpu_hours = std::numeric_limits<double>::infinity();
    e.classes.push_back(o);
  }
  const std::vector<NodeSpec> nodes = MixNodes(spec.catalog, counts);
  const Cluster one_of_each(MixNodes(spec.catalog, std::vector<int>(spec.catalog.types.size(), 1)));
  std::vector<double> headroom;
  double alloc = 0, stranded = 0;
  // The classes the served floor applies to: those without an SLO, unless this is the floor's
  // own policy.
  std::vector<bool> has_slo(qos.size(), false);
  for (const ClassSlo& slo : spec.slos) {
    const int c = spec.ClassIndex(slo.qos_class);
    if (c >= 0) has_slo[static_cast<size_t>(c)] = true;
  }
  const bool floored = spec.served_floor > 0 && spec.floor_policy &&
                       spec.floor_policy->name != spec.policies[policy].name &&
                       std::find(has_slo.begin(), has_slo.end(), false) != has_slo.end();
  for (uint64_t seed : seeds) {
    ReplayOptions options = spec.replay;
    options.seed = seed;
    options.samples = kSamples;
    options.record_events = false;
    const ReplayResult r =
        RunReplayPolicy(nodes, demand.Get(seed, factor), spec.policies[policy], options);
    ++e.seeds_run;
    for (size_t c = 0; c < qos.size() && c < r.classes.size(); ++c) {
      ClassOutcome& o = e.classes[c];
      const ClassStats& s = r.classes[c];
      o.p50_s = std::max(o.p50_s, s.wait_p50_s);
      o.p95_s = std::max(o.p95_s, s.wait_p95_s);
      o.p99_s = std::max(o.p99_s, s.wait_p99_s);
      o.slo_pct = std::min(o.slo_pct, s.slo_pct);
      o.gpu_hours = std::min(o.gpu_hours, s.gpu_hours);
    }
    alloc += r.mean_alloc_pct;
    double s_sum = 0;
    for (const TimePoint& p : r.series) {
      s_sum += p.frag_ratio * static_cast<double>(r.capacity_milli - p.allocated_milli) / 1000.0;
      headroom.push_back(static_cast<double>(p.headroom_gpus));
    }
    if (!r.series.empty()) stranded += s_sum / static_cast<double>(r.series.size());
    e.preemptions = std::max(e.preemptions, r.preemptions);
    if (e.missed.empty()) {
      for (const ClassSlo& slo : spec.slos) {
        const int c = spec.ClassIndex(slo.qos_class);
        if (c < 0 || static_cast<size_t>(c) >= r.classes.size()) continue;
        const ClassStats& s = r.classes[static_cast<size_t>(c)];
        char buf[160];
        // The replay leaves pods that fit no node of the mix out of the waits. Those that some
        // type of the catalog could host miss the SLO here (the mix lacks that type); those
        // that no type can host are left out of every mix alike.
        if (s.rejected > 0) {
          int hostable = 0;
          const Timeline& t = demand.Get(seed, factor);
          for (size_t i = 0; i < r.pods.size() && i < t.pods.size(); ++i) {
            if (r.pods[i].status != PodOutcome::Status::kRejected || r.pods[i].qos_class != c) {
              continue;
            }
            const PodRequest req = one_of_each.MakeRequest(t.pods[i].spec);
            for (int n = 0; n < one_of_each.size(); ++n) {
              if (one_of_each.Check(n, req) == FitReason::kFits) {
                ++hostable;
                break;
              }
            }
          }
          if (hostable > 0) {
            std::snprintf(buf, sizeof buf, "%s: %d pods fit no node of the mix (seed %llu)",
                          slo.qos_class.c_str(), hostable, static_cast<unsigned long long>(seed));
            e.missed = buf;
            break;
          }
        }
        if (slo.kind == ClassSlo::Kind::kWait && Quantile(s, slo.quantile) > slo.wait_s) {
          std::snprintf(buf, sizeof buf, "%s p%d wait %s > %s (seed %llu)", slo.qos_class.c_str(),
                        slo.quantile, FormatSeconds(Quantile(s, slo.quantile)).c_str(),
                        FormatSeconds(slo.wait_s).c_str(), static_cast<unsigned long long>(seed));
          e.missed = buf;
          break;
        }
        if (slo.kind == ClassSlo::Kind::kGpuHours && s.gpu_hours < slo.min_gpu_hours) {
          std::snprintf(buf, sizeof buf, "%s GPU-hours %.1f < %.1f (seed %llu)",
                        slo.qos_class.c_str(), s.gpu_hours, slo.min_gpu_hours,
                        static_cast<unsigned long long>(seed));
          e.missed = buf;
          break;
        }
      }
    }
    if (e.missed.empty() && floored) {
      // The served floor: what the reference policy serves each class without an SLO on this
      // mix and seed.
      const std::vector<double> ref = demand.Served(counts, seed, factor, [&] {
        const ReplayResult b =
            RunReplayPolicy(nodes, demand.Get(seed, factor), *spec.floor_policy, options);
        std::vector<double> served;
        for (const ClassStats& s : b.classes) served.push_back(s.gpu_hours);
        return served;
      });
      for (size_t c = 0; c < qos.size() && c < r.classes.size() && c < ref.size(); ++c) {
        if (has_slo[c] || ref[c] <= 0) continue;
        if (r.classes[c].gpu_hours < spec.served_floor * ref[c]) {
          char buf[200];
          std::snprintf(
              buf, sizeof buf, "%s GPU-hours %.1f < %g %% of the %.1f %s serves (seed %llu)",
              qos[c].name.c_str(), r.classes[c].gpu_hours, spec.served_floor * 100, ref[c],
              spec.floor_policy->name.c_str(), static_cast<unsigned long long>(seed));
          e.missed = buf;
          break;
        }
      }
    }
    if (!e.missed.empty()) {
      e.meets = false;
      if (!all_seeds) break;
    }
  }
  for (ClassOutcome& o : e.classes) {
    if (std::isinf(o.gpu_hours)) o.gpu_hours = 0;
  }
  if (e.seeds_run > 0) {
    e.alloc_pct = alloc / e.seeds_run;
    e.stranded_gpus = stranded / e.seeds_run;
  }
  std::sort(headroom.begin(), headroom.end());
  e.headroom_p50 = Percentile(headroom, 50);
  e.headroom_p95 = Percentile(headroom, 95);
  e.headroom_max = headroom.empty() ? 0 : headroom.back();
  return e;
}

UnitResult RunUnit(const PlanSpec& spec, const DemandDraws& demand, int index) {
  const SearchUnit unit = Units(spec)[static_cast<size_t>(index)];
  UnitResult result;
  result.index = index;
  const NodeCatalog& catalog = spec.catalog;
  // Every mix of the unit, cheapest first.
  std::vector<Evaluation> mixes;
  std::vector<int> counts(catalog.types.size(), 0);
  std::vector<std::vector<int>> choices;
  for (size_t t = 0; t < catalog.types.size(); ++t) {
    choices.push_back(t == 0 && unit.first_count >= 0 ? std::vector<int>{unit.first_count}
                                                      : CountsOf(catalog.types[t]));
  }
  std::function<void(size_t)> build = [&](size_t t) {
    if (t == choices.size()) {
      Evaluation e;
      e.counts = counts;
      e.gpus = MixGpus(catalog, counts);
      e.cost = MixCost(catalog, counts);
      if (e.gpus > 0) mixes.push_back(std::move(e));
      return;
    }
    for (int c : choices[t]) {
      counts[t] = c;
      build(t + 1);
    }
  };
  build(0);
  std::sort(mixes.begin(), mixes.end(), Cheaper);
  const size_t n = mixes.size();
  if (n == 0) return result;
  // What is known of each mix: nothing yet, closed without a replay (under the lower bound),
  // missed (on some seed), met on the first seed, met on every seed.
  enum class Known { kUnknown, kClosed, kMissed, kMetFirst, kMet };
  std::vector<Known> known(n, Known::kUnknown);
  std::vector<int> evaluation(n, -1);  // into result.evaluated, the latest
  for (size_t i = 0; i < n; ++i) {
    if (static_cast<double>(mixes[i].gpus) < spec.lower_bound_gpus) known[i] = Known::kClosed;
  }
  std::vector<size_t> missed;
  const std::vector<uint64_t> first_seed = {spec.seeds.front()};
  auto evaluate = [&](size_t i, bool every_seed) {
    Evaluation e = Evaluate(spec, demand, unit.policy, mixes[i].counts,
                            every_seed ? spec.seeds : first_seed, 1.0, false);
    known[i] = !e.meets ? Known::kMissed : every_seed ? Known::kMet : Known::kMetFirst;
    if (!e.meets) missed.push_back(i);
    evaluation[i] = static_cast<int>(result.evaluated.size());
    result.evaluated.push_back(std::move(e));
  };
  auto below_a_miss = [&](size_t j) {
    for (size_t m : missed) {
      bool below = true;
      for (size_t t = 0; t < counts.size() && below; ++t) {
        below = mixes[j].counts[t] <= mixes[m].counts[t];
      }
      if (below) return true;
    }
    return false;
  };
  // The most of every type first (replayed even under the lower bound, for the error
  // message): if it misses, nothing smaller meets.
  size_t top = 0;
  for (size_t i = 0; i < n; ++i) {
    if (mixes[i].gpus > mixes[top].gpus) top = i;
  }
  evaluate(top, false);
  bool guessed = false;
  for (;;) {
    // The cheapest mix that met (on the first seed or on all), and the mixes still open:
    // cheaper than it, not replayed, not under a mix that missed.
    size_t cheapest = n;
    for (size_t i = 0; i < n && cheapest == n; ++i) {
      if (known[i] == Known::kMetFirst || known[i] == Known::kMet) cheapest = i;
    }
    std::vector<size_t> open;
    for (size_t i = 0; i < cheapest; ++i) {
      if (known[i] == Known::kUnknown && !below_a_miss(i)) open.push_back(i);
    }
    if (open.empty()) {
      if (cheapest == n) break;  // nothing meets
      if (known[cheapest] == Known::kMet) {
        result.best = evaluation[cheapest];
        break;
      }
      evaluate(cheapest, true);  // it met on the first seed: now on every seed
      continue;
    }
    size_t probe = open[open.size() / 2];
    if (!guessed) {  // the first guess: the cheapest open mix with the Erlang C GPUs
      guessed = true;
      for (size_t i : open) {
        if (static_cast<double>(mixes[i].gpus) >= spec.first_guess_gpus) {
          probe = i;
          break;
        }
      }
    }
    evaluate(probe, false);
  }
  return result;
}

std::vector<UnitResult> RunUnits(const PlanSpec& spec, const DemandDraws& demand,
                                 const std::vector<int>& indices, int threads,
                                 const std::function<void(int, int)>& progress) {
  std::vector<UnitResult> out(indices.size());
  std::mutex mu;
  int done = 0;
  ParallelFor(static_cast<int>(indices.size()), threads, [&](int i) {
    out[static_cast<size_t>(i)] = RunUnit(spec, demand, indices[static_cast<size_t>(i)]);
    std::lock_guard<std::mutex> lock(mu);
    ++done;
    if (progress) progress(done, static_cast<int>(indices.size()));
  });
  return out;
}

std::vector<int> MixForGpus(const NodeCatalog& catalog, int64_t gpus) {
  std::vector<int> counts;
  for (const NodeType& t : catalog.types) counts.push_back(t.min_count);
  std::vector<size_t> order(catalog.types.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return catalog.types[a].cost_per_hour / catalog.types[a].gpus <
           catalog.types[b].cost_per_hour / catalog.types[b].gpus;
  });
  for (size_t t : order) {
    while (MixGpus(catalog, counts) < gpus && counts[t] < catalog.types[t].max_count) ++counts[t];
  }
  return counts;
}

std::vector<int> FirstFitDecreasing(const NodeCatalog& catalog, const Timeline& timeline) {
  struct Open {
    size_t type;
    int64_t cpu, mem;
    std::vector<int32_t> free;  // milli per GPU
  };
  std::vector<int> pods = PodsAtPeak(timeline);
  std::stable_sort(pods.begin(), pods.end(), [&](int a, int b) {
    const PodSpec& x = timeline.pods[static_cast<size_t>(a)].spec;
    const PodSpec& y = timeline.pods[static_cast<size_t>(b)].spec;
    if (x.TotalGpuMilli() != y.TotalGpuMilli()) return x.TotalGpuMilli() > y.TotalGpuMilli();
    return x.cpu_milli > y.cpu_milli;
  });
  auto allows = [](const PodSpec& p, const std::string& model) {
    if (p.gpu_spec.empty()) return true;
    size_t from = 0;
    for (;;) {
      const size_t bar = p.gpu_spec.find('|', from);
      if (p.gpu_spec.substr(from, bar - from) == model) return true;
      if (bar == std::string::npos) return false;
      from = bar + 1;
    }
  };
  // Places p on o if it fits; returns whether it did.
  auto place = [&](const PodSpec& p, Open& o) {
    if (o.cpu < p.cpu_milli || o.mem < p.memory_mib) return false;
    if (p.gpu_count > 0 && !allows(p, catalog.types[o.type].model)) return false;
    if (p.gpu_count == 1 && p.gpu_milli < 1000) {
      int best = -1;
      for (size_t g = 0; g < o.free.size(); ++g) {
        if (o.free[g] >= p.gpu_milli &&
            (best < 0 || o.free[g] < o.free[static_cast<size_t>(best)])) {
          best = static_cast<int>(g);
        }
      }
      if (best < 0) return false;
      o.free[static_cast<size_t>(best)] -= p.gpu_milli;
    } else if (p.gpu_count > 0) {
      int idle = 0;
      for (int32_t f : o.free) idle += f == 1000;
      if (idle < p.gpu_count) return false;
      int left = p.gpu_count;
      for (int32_t& f : o.free) {
        if (left > 0 && f == 1000) {
          f = 0;
          --left;
        }
      }
    }
    o.cpu -= p.cpu_milli;
    o.mem -= p.memory_mib;
    return true;
  };
  std::vector<size_t> by_price(catalog.types.size());
  for (size_t i = 0; i < by_price.size(); ++i) by_price[i] = i;
  std::stable_sort(by_price.begin(), by_price.end(), [&](size_t a, size_t b) {
    return catalog.types[a].cost_per_hour / catalog.types[a].gpus <
           catalog.types[b].cost_per_hour / catalog.types[b].gpus;
  });
  std::vector<Open> nodes;
  std::vector<int> counts(catalog.types.size(), 0);
  for (int i : pods) {
    const PodSpec& p = timeline.pods[static_cast<size_t>(i)].spec;
    bool placed = false;
    for (Open& o : nodes) {
      if (place(p, o)) {
        placed = true;
        break;
      }
    }
    for (size_t k = 0; !placed && k < by_price.size(); ++k) {
      const size_t t = by_price[k];
      const NodeType& type = catalog.types[t];
      if (counts[t] >= type.max_count) continue;
      Open o{t, type.cpu_milli, type.memory_mib, std::vector<int32_t>(type.gpus, 1000)};
      if (place(p, o)) {
        nodes.push_back(std::move(o));
        ++counts[t];
        placed = true;
      }
    }
  }
  for (size_t t = 0; t < counts.size(); ++t) {
    counts[t] = std::max(counts[t], catalog.types[t].min_count);
  }
  return counts;
}

Result<PlanResult> FinishPlan(const PlanSpec& spec, const DemandDraws& demand,
                              std::vector<UnitResult> units, int threads) {
  PlanResult plan;
  std::sort(units.begin(), units.end(),
            [](const UnitResult& a, const UnitResult& b) { return a.index < b.index; });
  const std::vector<SearchUnit> all = Units(spec);
  const size_t np = spec.policies.size();
  std::vector<const Evaluation*> best(np, nullptr);
  for (const UnitResult& u : units) {
    if (u.best < 0) continue;
    const int p = all[static_cast<size_t>(u.index)].policy;
    const Evaluation* e = &u.evaluated[static_cast<size_t>(u.best)];
    if (!best[static_cast<size_t>(p)] || Cheaper(*e, *best[static_cast<size_t>(p)])) {
      best[static_cast<size_t>(p)] = e;
    }
  }
  for (size_t p = 0; p < np; ++p) {
    if (best[p] && (plan.chosen_policy < 0 ||
                    Cheaper(*best[p], *best[static_cast<size_t>(plan.chosen_policy)]))) {
      plan.chosen_policy = static_cast<int>(p);
    }
    plan.policy_gpus.push_back(best[p] ? best[p]->gpus : -1);
  }
  if (plan.chosen_policy < 0) {
    // Name the first SLO that no replayed mix met, with the best figure reached and where.
    for (const ClassSlo& slo : spec.slos) {
      const int c = spec.ClassIndex(slo.qos_class);
      if (c < 0) continue;
      const Evaluation* where = nullptr;
      int where_policy = 0;
      double reached = 0;
      for (const UnitResult& u : units) {
        for (const Evaluation& e : u.evaluated) {
          const ClassOutcome& o = e.classes[static_cast<size_t>(c)];
          const double v =
              slo.kind == ClassSlo::Kind::kWait ? Quantile(o, slo.quantile) : -o.gpu_hours;
          if (!where || v < reached) {
            where = &e;
            reached = v;
            where_policy = all[static_cast<size_t>(u.index)].policy;
          }
        }
      }
      if (!where) continue;
      const bool met =
          slo.kind == ClassSlo::Kind::kWait ? reached <= slo.wait_s : -reached >= slo.min_gpu_hours;
      if (met) continue;
      char figure[96];
      if (slo.kind == ClassSlo::Kind::kWait) {
        std::snprintf(figure, sizeof figure, "the best p%d wait reached is %s", slo.quantile,
                      FormatSeconds(reached).c_str());
      } else {
        std::snprintf(figure, sizeof figure, "the most GPU-hours reached is %.1f", -reached);
      }
      return Error{"class " + slo.qos_class + ": no mix up to the catalog's maximum meets '" +
                   slo.text + "': " + figure + ", by " +
                   spec.policies[static_cast<size_t>(where_policy)].name + " on " +
                   MixName(spec.catalog, where->counts) + " (" + std::to_string(where->gpus) +
                   " GPUs)"};
    }
    return Error{
        "no mix up to the catalog's maximum meets every SLO at once (each alone is met "
        "somewhere); see the SLOs given with --slo"};
  }
  plan.chosen_counts = best[static_cast<size_t>(plan.chosen_policy)]->counts;
  // The rows, then the replays they need, in parallel.
  struct Job {
    int policy;
    std::vector<int> counts;
    std::vector<uint64_t> seeds;
    double factor;
  };
  std::vector<Job> jobs;
  for (size_t p = 0; p < np; ++p) {
    PlanRow row;
    row.kind = "plan";
    row.label = spec.policies[p].name;
    row.policy = spec.policies[p].name;
    row.chosen = static_cast<int>(p) == plan.chosen_policy;
    if (best[p]) {
      row.eval = *best[p];
      plan.rows.push_back(row);
      if (!spec.check_seeds.empty()) {
        row.kind = "held-out";
        row.label = spec.policies[p].name + " on held-out seeds";
        row.chosen = false;
        plan.rows.push_back(row);
        jobs.push_back({static_cast<int>(p), best[p]->counts, spec.check_seeds, 1.0});
      }
    } else {
      row.no_plan = NoPlanReason(spec, units, static_cast<int>(p));
      plan.rows.push_back(row);
    }
  }
  const int cp = plan.chosen_policy;
  const std::string cname = spec.policies[static_cast<size_t>(cp)].name;
  for (double f : spec.sensitivity) {
    PlanRow row;
    row.kind = "sensitivity";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%+.0f %% demand", (f - 1) * 100);
    row.label = buf;
    row.policy = cname;
    plan.rows.push_back(row);
    jobs.push_back({cp, plan.chosen_counts, spec.seeds, f});
  }
  const Timeline& base = demand.Get(spec.seeds.front(), 1.0);
  auto baseline = [&](const std::string& label, std::vector<int> counts) {
    PlanRow row;
    row.kind = "baseline";
    row.label = label;
    row.policy = cname;
    plan.rows.push_back(row);
    jobs.push_back({cp, std::move(counts), spec.seeds, 1.0});
  };
  bool today = false;
  for (const NodeType& t : spec.catalog.types) today = today || t.count_today > 0;
  if (today) {
    std::vector<int> counts;
    for (const NodeType& t : spec.catalog.types) counts.push_back(t.count_today);
    baseline("today", counts);
  }
  if (spec.quota_gpus > 0) {
    baseline("quota " + std::to_string(spec.quota_gpus) + " GPUs",
             MixForGpus(spec.catalog, spec.quota_gpus));
  }
  ForecastOptions fo;
  fo.classes = spec.replay.qos;
  Result<DemandForecast> forecast = BuildDemandForecast(base, fo, ForecastSpec{});
  if (forecast) {
    plan.forecast = std::move(forecast).value();
    Result<int64_t> want = BaselineGpus(plan.forecast.forecast, spec.target_util);
    if (want) {
      double p95 = 0;
      for (const ClassForecast& c : plan.forecast.forecast.classes) p95 += c.gpus.p95;
      char buf[96];
      std::snprintf(buf, sizeof buf, "forecast p95 %.1f GPUs / %.0f %% utilization", p95,
                    spec.target_util * 100);
      baseline(buf, MixForGpus(spec.catalog, *want));
    } else {
      plan.forecast_error = want.error().message;
    }
  } else {
    plan.forecast_error = forecast.error().message;
  }
  baseline("cluster-autoscaler FFD at the peak", FirstFitDecreasing(spec.catalog, base));
  // Fill the rows that need replays, in order.
  std::vector<Evaluation> results(jobs.size());
  ParallelFor(static_cast<int>(jobs.size()), threads, [&](int i) {
    const Job& j = jobs[static_cast<size_t>(i)];
    results[static_cast<size_t>(i)] =
        Evaluate(spec, demand, j.policy, j.counts, j.seeds, j.factor, /*all_seeds=*/true);
  });
  size_t k = 0;
  for (PlanRow& row : plan.rows) {
    if (row.kind == "plan") continue;
    row.eval = results[k++];
  }
  // The headroom snippet.
  const ReplayPolicy& chosen = spec.policies[static_cast<size_t>(cp)];
  const Evaluation& ce = *best[static_cast<size_t>(cp)];
  std::string protected_classes;
  for (const QosClass& c : spec.replay.qos.classes) {
    if (c.priority >= chosen.headroom.min_priority) {
      protected_classes += (protected_classes.empty() ? "" : ", ") + c.name;
    }
  }
  std::string models;
  for (size_t t = 0; t < spec.catalog.types.size(); ++t) {
    if (ce.counts[t] == 0) continue;
    const std::string& m = spec.catalog.types[t].model;
    if (models.find(m) == std::string::npos) models += (models.empty() ? "" : ", ") + m;
  }
  // Names (of any length) are joined as strings; only the numbers go through snprintf.
  using Mode = HeadroomOptions::Mode;
  const HeadroomOptions& h = chosen.headroom;
  const std::string head =
      "# tessera plan: " + MixName(spec.catalog, ce.counts) + " with policy " + chosen.name;
  if (h.mode == Mode::kNone) {
    plan.headroom_yaml = head + " met every SLO keeping no headroom.\nheadroom:\n  mode: none\n";
  } else {
    const char* mode = h.mode == Mode::kStatic     ? "static"
                       : h.mode == Mode::kForecast ? "forecast"
                                                   : "backlog";
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "# p50 %.0f, p95 %.0f, at most %.0f. The settings replayed:\n"
                  "headroom:\n  mode: %s\n  gpus: %lld\n  windowSeconds: %g\n"
                  "  bucketSeconds: %g\n  quantile: %g\n  factor: %g\n"
                  "# A fixed alternative: mode: static, gpus: %.0f (the p95 above).\n",
                  ce.headroom_p50, ce.headroom_p95, ce.headroom_max, mode,
                  static_cast<long long>(h.gpus), h.window_s, h.bucket_s, h.quantile, h.factor,
                  ce.headroom_p95);
    plan.headroom_yaml = head + ". The replays kept for " + protected_classes + " idle GPUs (" +
                         models + "):\n" + buf;
  }
  plan.units = std::move(units);
  return plan;
}

}  // namespace tessera
