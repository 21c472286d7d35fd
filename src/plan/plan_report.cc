#include "plan/plan_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "report/report.h"
#include "util/format.h"

namespace tessera {
namespace {

using Json = nlohmann::ordered_json;

Json EvalJson(const NodeCatalog& catalog, const Evaluation& e) {
  Json classes = Json::array();
  for (const ClassOutcome& c : e.classes) {
    classes.push_back({{"name", c.name},
                       {"wait_p50_s", c.p50_s},
                       {"wait_p95_s", c.p95_s},
                       {"wait_p99_s", c.p99_s},
                       {"slo_pct", c.slo_pct},
                       {"gpu_hours", c.gpu_hours}});
  }
  return Json{{"mix", MixName(catalog, e.counts)},
              {"counts", e.counts},
              {"gpus", e.gpus},
              {"cost_per_hour", e.cost},
              {"meets", e.meets},
              {"replayed", e.replayed},
              {"seeds_run", e.seeds_run},
              {"missed", e.missed},
              {"alloc_pct", e.alloc_pct},
              {"stranded_gpus", e.stranded_gpus},
              {"headroom_gpus",
               {{"p50", e.headroom_p50}, {"p95", e.headroom_p95}, {"max", e.headroom_max}}},
              {"preemptions", e.preemptions},
              {"classes", classes}};
}

Evaluation EvalFromJson(const Json& j) {
  Evaluation e;
  e.counts = j.at("counts").get<std::vector<int>>();
  e.gpus = j.at("gpus").get<int64_t>();
  e.cost = j.at("cost_per_hour").get<double>();
  e.meets = j.at("meets").get<bool>();
  e.replayed = j.at("replayed").get<bool>();
  e.seeds_run = j.at("seeds_run").get<int>();
  e.missed = j.at("missed").get<std::string>();
  e.alloc_pct = j.at("alloc_pct").get<double>();
  e.stranded_gpus = j.at("stranded_gpus").get<double>();
  e.headroom_p50 = j.at("headroom_gpus").at("p50").get<double>();
  e.headroom_p95 = j.at("headroom_gpus").at("p95").get<double>();
  e.headroom_max = j.at("headroom_gpus").at("max").get<double>();
  e.preemptions = j.at("preemptions").get<int>();
  for (const Json& c : j.at("classes")) {
    ClassOutcome o;
    o.name = c.at("name").get<std::string>();
    o.p50_s = c.at("wait_p50_s").get<double>();
    o.p95_s = c.at("wait_p95_s").get<double>();
    o.p99_s = c.at("wait_p99_s").get<double>();
    o.slo_pct = c.at("slo_pct").get<double>();
    o.gpu_hours = c.at("gpu_hours").get<double>();
    e.classes.push_back(o);
  }
  return e;
}

// The classes the table shows: those with an SLO, in class order.
std::vector<int> SloClasses(const PlanSpec& spec) {
  std::vector<int> out;
  for (size_t c = 0; c < spec.replay.qos.classes.size(); ++c) {
    for (const ClassSlo& s : spec.slos) {
      if (s.qos_class == spec.replay.qos.classes[c].name) {
        out.push_back(static_cast<int>(c));
        break;
      }
    }
  }
  return out;
}

std::string Verdict(const PlanRow& row) {
  if (!row.eval.replayed && row.eval.seeds_run == 0) return "no plan";
  return row.eval.meets ? "meets" : "MISSES: " + row.eval.missed;
}

}  // namespace

std::string PlanJson(const PlanInfo& info, const PlanSpec& spec, const PlanResult& plan) {
  Json j;
  j["format"] = "tessera-plan/1";
  Json in;
  in["demand"] = info.demand;
  in["pods"] = info.pods;
  in["growth"] = info.growth;
  in["peak_window_h"] = info.peak_window_h;
  Json types = Json::array();
  for (const NodeType& t : spec.catalog.types) {
    types.push_back({{"name", t.name},
                     {"model", t.model},
                     {"gpus", t.gpus},
                     {"cpu_milli", t.cpu_milli},
                     {"memory_mib", t.memory_mib},
                     {"gpu_memory_mib", t.gpu_memory_mib},
                     {"cost_per_hour", t.cost_per_hour},
                     {"min_count", t.min_count},
                     {"max_count", t.max_count},
                     {"step", t.step},
                     {"count_today", t.count_today}});
  }
  in["node_types"] = types;
  Json slos = Json::array();
  for (const ClassSlo& s : spec.slos) slos.push_back(s.text);
  in["slos"] = slos;
  Json policies = Json::array();
  for (const ReplayPolicy& p : spec.policies) policies.push_back(p.name);
  in["policies"] = policies;
  in["seeds"] = spec.seeds;
  in["check_seeds"] = spec.check_seeds;
  in["quota_gpus"] = spec.quota_gpus;
  in["target_util"] = spec.target_util;
  j["inputs"] = in;
  Json load = Json::array();
  for (const ClassLoad& l : info.load) {
    load.push_back({{"class", l.qos},
                    {"pods", l.pods},
                    {"offered_gpus", l.gpus},
                    {"arrival_per_h", l.arrival_per_s * 3600},
                    {"mean_duration_s", l.mean_duration_s}});
  }
  Json analytic;
  analytic["offered_load"] = load;
  Json erl = Json::object();
  for (const auto& [c, g] : info.erlang_gpus) erl[c] = g;
  analytic["erlang_c_gpus"] = erl;
  analytic["lower_bound_gpus"] = spec.lower_bound_gpus;
  analytic["first_guess_gpus"] = spec.first_guess_gpus;
  j["analytic"] = analytic;
  if (plan.forecast_error.empty()) {
    j["forecast"] = ToJson(plan.forecast);
  } else {
    j["forecast"] = {{"error", plan.forecast_error}};
  }
  const int cp = plan.chosen_policy;
  j["chosen"] = {{"policy", spec.policies[static_cast<size_t>(cp)].name},
                 {"mix", MixName(spec.catalog, plan.chosen_counts)},
                 {"counts", plan.chosen_counts},
                 {"gpus", MixGpus(spec.catalog, plan.chosen_counts)},
                 {"cost_per_hour", MixCost(spec.catalog, plan.chosen_counts)},
                 {"headroom_yaml", plan.headroom_yaml}};
  Json gpus = Json::object();
  for (size_t p = 0; p < spec.policies.size(); ++p) {
    gpus[spec.policies[p].name] =
        plan.policy_gpus[p] < 0 ? Json(nullptr) : Json(plan.policy_gpus[p]);
  }
  j["gpus_needed_by_policy"] = gpus;
  Json rows = Json::array();
  for (const PlanRow& r : plan.rows) {
    Json row = {{"kind", r.kind}, {"label", r.label}, {"policy", r.policy}, {"chosen", r.chosen}};
    row["result"] = EvalJson(spec.catalog, r.eval);
    rows.push_back(row);
  }
  j["rows"] = rows;
  const std::vector<SearchUnit> units = Units(spec);
  Json search = Json::array();
  for (const UnitResult& u : plan.units) {
    const SearchUnit& su = units[static_cast<size_t>(u.index)];
    Json ev = Json::array();
    for (const Evaluation& e : u.evaluated) ev.push_back(EvalJson(spec.catalog, e));
    search.push_back({{"unit", u.index},
                      {"policy", spec.policies[static_cast<size_t>(su.policy)].name},
                      {"first_type_count", su.first_count},
                      {"best", u.best},
                      {"evaluated", ev}});
  }
  j["search"] = search;
  return j.dump(2) + "\n";
}

std::string PlanCsv(const PlanSpec& spec, const PlanResult& plan) {
  std::string out =
      "kind,label,policy,chosen,mix,gpus,cost_per_hour,meets,seeds,class,wait_p50_s,wait_p95_s,"
      "wait_p99_s,slo_pct,gpu_hours,alloc_pct,stranded_gpus,headroom_p95_gpus,preemptions\n";
  for (const PlanRow& r : plan.rows) {
    for (const ClassOutcome& c : r.eval.classes) {
      char buf[512];
      std::snprintf(
          buf, sizeof buf,
          "%s,%s,%s,%d,%s,%lld,%.4f,%d,%d,%s,%.3f,%.3f,%.3f,%.3f,%.2f,%.2f,%.2f,%.1f,%d\n",
          r.kind.c_str(), r.label.c_str(), r.policy.c_str(), r.chosen ? 1 : 0,
          MixName(spec.catalog, r.eval.counts).c_str(), static_cast<long long>(r.eval.gpus),
          r.eval.cost, r.eval.meets ? 1 : 0, r.eval.seeds_run, c.name.c_str(), c.p50_s, c.p95_s,
          c.p99_s, c.slo_pct, c.gpu_hours, r.eval.alloc_pct, r.eval.stranded_gpus,
          r.eval.headroom_p95, r.eval.preemptions);
      out += buf;
    }
  }
  return out;
}

std::string PlanTable(const PlanInfo& info, const PlanSpec& spec, const PlanResult& plan) {
  const std::vector<int> cls = SloClasses(spec);
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = {"", "row", "policy", "node mix", "GPUs", "cost/h"};
  for (int c : cls) {
    const std::string& n = spec.replay.qos.classes[static_cast<size_t>(c)].name;
    head.push_back(n + " p50/p95/p99 wait");
    head.push_back(n + " in SLO");
  }
  for (const char* h : {"alloc", "stranded", "headroom p95", "SLOs"}) head.push_back(h);
  rows.push_back(head);
  for (const PlanRow& r : plan.rows) {
    std::vector<std::string> row = {r.chosen ? "*" : "", r.kind == "plan" ? "plan" : r.label,
                                    r.policy};
    const bool none = !r.eval.replayed && r.eval.seeds_run == 0;
    row.push_back(none ? "-" : MixName(spec.catalog, r.eval.counts));
    row.push_back(none ? "-" : std::to_string(r.eval.gpus));
    row.push_back(none ? "-" : Fixed(r.eval.cost, 2));
    for (int c : cls) {
      if (none) {
        row.push_back("-");
        row.push_back("-");
        continue;
      }
      const ClassOutcome& o = r.eval.classes[static_cast<size_t>(c)];
      row.push_back(FormatSeconds(o.p50_s) + " / " + FormatSeconds(o.p95_s) + " / " +
                    FormatSeconds(o.p99_s));
      row.push_back(Fixed(o.slo_pct, 2) + " %");
    }
    row.push_back(none ? "-" : Fixed(r.eval.alloc_pct, 1) + " %");
    row.push_back(none ? "-" : Fixed(r.eval.stranded_gpus, 1));
    row.push_back(none ? "-" : Fixed(r.eval.headroom_p95, 0));
    row.push_back(Verdict(r));
    rows.push_back(row);
  }
  std::string out = "tessera plan: " + info.demand;
  if (info.growth != 1) out += ", demand x" + Fixed(info.growth, 2);
  if (info.peak_window_h > 0) out += ", busiest " + Fixed(info.peak_window_h, 0) + " h";
  out += "; SLOs:";
  for (const ClassSlo& s : spec.slos) out += " '" + s.text + "'";
  out += "\n" + AlignedTable(rows);
  out += "* chosen: the cheapest mix meeting every SLO on seeds";
  for (uint64_t s : spec.seeds) out += " " + std::to_string(s);
  out += " (waits: the worst seed; in SLO: the least share within the class's wait bound)\n";
  out += "GPUs needed for the same SLOs:";
  for (size_t p = 0; p < spec.policies.size(); ++p) {
    out += " " + spec.policies[p].name + " " +
           (plan.policy_gpus[p] < 0 ? std::string("none") : std::to_string(plan.policy_gpus[p]));
  }
  out += plan.forecast_error.empty() ? "\n" + FormatForecastTable(plan.forecast)
                                     : "\nForecast: none (" + plan.forecast_error + ")\n";
  out += "\n" + plan.headroom_yaml;
  return out;
}

namespace {

// One SVG chart: y against GPUs, one polyline per series.
std::string Chart(
    const std::string& title, const std::string& y_label,
    const std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>>& series) {
  double x0 = 1e300, x1 = -1e300, y0 = 0, y1 = 1e-9;
  for (const auto& [name, pts] : series) {
    for (const auto& [x, y] : pts) {
      x0 = std::min(x0, x);
      x1 = std::max(x1, x);
      y1 = std::max(y1, y);
    }
  }
  if (x0 > x1) return "";
  if (x1 == x0) x1 = x0 + 1;
  const double w = 640, h = 300, l = 60, r = 20, t = 30, b = 40;
  auto X = [&](double x) { return l + (x - x0) / (x1 - x0) * (w - l - r); };
  auto Y = [&](double y) { return h - b - (y - y0) / (y1 - y0) * (h - t - b); };
  std::string s = "<figure><figcaption>" + HtmlEscape(title) + "</figcaption><svg viewBox=\"0 0 " +
                  Fixed(w, 0) + " " + Fixed(h, 0) + "\" width=\"" + Fixed(w, 0) + "\" height=\"" +
                  Fixed(h, 0) + "\" xmlns=\"http://www.w3.org/2000/svg\">";
  s += "<line x1=\"" + Fixed(l, 0) + "\" y1=\"" + Fixed(h - b, 0) + "\" x2=\"" + Fixed(w - r, 0) +
       "\" y2=\"" + Fixed(h - b, 0) + "\" stroke=\"#444\"/>";
  s += "<line x1=\"" + Fixed(l, 0) + "\" y1=\"" + Fixed(t, 0) + "\" x2=\"" + Fixed(l, 0) +
       "\" y2=\"" + Fixed(h - b, 0) + "\" stroke=\"#444\"/>";
  for (int i = 0; i <= 4; ++i) {
    const double xv = x0 + (x1 - x0) * i / 4, yv = y0 + (y1 - y0) * i / 4;
    s += "<text x=\"" + Fixed(X(xv), 1) + "\" y=\"" + Fixed(h - b + 16, 0) +
         "\" font-size=\"11\" text-anchor=\"middle\">" + Fixed(xv, 0) + "</text>";
    s += "<text x=\"" + Fixed(l - 6, 0) + "\" y=\"" + Fixed(Y(yv) + 4, 1) +
         "\" font-size=\"11\" text-anchor=\"end\">" + Fixed(yv, yv < 10 ? 2 : 0) + "</text>";
  }
  s += "<text x=\"" + Fixed((l + w - r) / 2, 0) + "\" y=\"" + Fixed(h - 6, 0) +
       "\" font-size=\"12\" text-anchor=\"middle\">GPUs</text>";
  s += "<text x=\"14\" y=\"" + Fixed(t - 10, 0) + "\" font-size=\"12\">" + HtmlEscape(y_label) +
       "</text>";
  for (size_t i = 0; i < series.size(); ++i) {
    const auto& [name, pts] = series[i];
    const std::string color(PolicyColor(i));
    std::string p;
    for (const auto& [x, y] : pts) p += Fixed(X(x), 1) + "," + Fixed(Y(y), 1) + " ";
    s += "<polyline class=\"series\" data-policy=\"" + HtmlEscape(name) +
         "\" fill=\"none\" stroke=\"" + color + "\" stroke-width=\"2\" points=\"" + p + "\"/>";
    for (const auto& [x, y] : pts) {
      s += "<circle cx=\"" + Fixed(X(x), 1) + "\" cy=\"" + Fixed(Y(y), 1) + "\" r=\"3\" fill=\"" +
           color + "\"/>";
    }
    s += "<text x=\"" + Fixed(w - r - 4, 0) + "\" y=\"" + Fixed(t + 14 * i, 0) +
         "\" font-size=\"12\" text-anchor=\"end\" fill=\"" + color + "\">" + HtmlEscape(name) +
         "</text>";
  }
  return s + "</svg></figure>\n";
}

}  // namespace

std::string PlanHtml(const PlanInfo& info, const PlanSpec& spec, const PlanResult& plan,
                     const std::string& generated_by) {
  std::string h =
      "<!doctype html><html><head><meta charset=\"utf-8\"><title>Plan: " + HtmlEscape(info.demand) +
      "</title><style>" + std::string(ReportCss()) +
      "</style></head><body><h1>Plan: " + HtmlEscape(info.demand) + "</h1>\n";
  h += "<p>SLOs:";
  for (const ClassSlo& s : spec.slos) h += " <code>" + HtmlEscape(s.text) + "</code>";
  h += ". Chosen: <b>" + HtmlEscape(MixName(spec.catalog, plan.chosen_counts)) + "</b> with " +
       HtmlEscape(spec.policies[static_cast<size_t>(plan.chosen_policy)].name) + ", " +
       std::to_string(MixGpus(spec.catalog, plan.chosen_counts)) + " GPUs, " +
       Fixed(MixCost(spec.catalog, plan.chosen_counts), 2) + " per hour.</p>\n";
  const std::vector<int> cls = SloClasses(spec);
  h += "<section id=\"table\"><h2>Plans, checks and baselines</h2><table><tr><th></th><th>row</th>"
       "<th>policy</th><th>node mix</th><th>GPUs</th><th>cost/h</th>";
  for (int c : cls) {
    const std::string& n = spec.replay.qos.classes[static_cast<size_t>(c)].name;
    h += "<th>" + HtmlEscape(n) + " p50 / p95 / p99 wait</th><th>" + HtmlEscape(n) + " in SLO</th>";
  }
  h += "<th>alloc</th><th>stranded GPUs</th><th>headroom p95</th><th>SLOs</th></tr>\n";
  for (const PlanRow& r : plan.rows) {
    const bool none = !r.eval.replayed && r.eval.seeds_run == 0;
    h += std::string("<tr") + (r.chosen ? " class=\"chosen\" style=\"font-weight:bold\"" : "") +
         "><td>" + (r.chosen ? "&#9733;" : "") + "</td><td>" + HtmlEscape(r.label) + "</td><td>" +
         HtmlEscape(r.policy) + "</td><td>" +
         (none ? "-" : HtmlEscape(MixName(spec.catalog, r.eval.counts))) + "</td><td>" +
         (none ? "-" : std::to_string(r.eval.gpus)) + "</td><td>" +
         (none ? "-" : Fixed(r.eval.cost, 2)) + "</td>";
    for (int c : cls) {
      const ClassOutcome& o =
          r.eval.classes.empty() ? ClassOutcome{} : r.eval.classes[static_cast<size_t>(c)];
      h += none ? "<td>-</td><td>-</td>"
                : "<td>" + FormatSeconds(o.p50_s) + " / " + FormatSeconds(o.p95_s) + " / " +
                      FormatSeconds(o.p99_s) + "</td><td>" + Fixed(o.slo_pct, 2) + " %</td>";
    }
    h += "<td>" + (none ? "-" : Fixed(r.eval.alloc_pct, 1) + " %") + "</td><td>" +
         (none ? "-" : Fixed(r.eval.stranded_gpus, 1)) + "</td><td>" +
         (none ? "-" : Fixed(r.eval.headroom_p95, 0)) + "</td><td>" + HtmlEscape(Verdict(r)) +
         "</td></tr>\n";
  }
  h += "</table></section>\n";
  // Charts: per policy, through its replayed mixes (the best figure at each GPU count).
  int wait_slo = -1;
  for (const ClassSlo& s : spec.slos) {
    if (s.kind == ClassSlo::Kind::kWait) {
      wait_slo = spec.ClassIndex(s.qos_class);
      break;
    }
  }
  if (wait_slo >= 0) {
    const std::vector<SearchUnit> units = Units(spec);
    std::vector<std::map<int64_t, std::pair<double, double>>> by(spec.policies.size());
    for (const UnitResult& u : plan.units) {
      const int p = units[static_cast<size_t>(u.index)].policy;
      for (const Evaluation& e : u.evaluated) {
        const ClassOutcome& o = e.classes[static_cast<size_t>(wait_slo)];
        auto [it, fresh] =
            by[static_cast<size_t>(p)].emplace(e.gpus, std::make_pair(o.slo_pct, o.p99_s));
        if (!fresh) {
          it->second.first = std::max(it->second.first, o.slo_pct);
          it->second.second = std::min(it->second.second, o.p99_s);
        }
      }
    }
    std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>> att, p99;
    for (size_t p = 0; p < spec.policies.size(); ++p) {
      att.push_back({spec.policies[p].name, {}});
      p99.push_back({spec.policies[p].name, {}});
      for (const auto& [g, v] : by[p]) {
        att.back().second.push_back({static_cast<double>(g), v.first});
        p99.back().second.push_back({static_cast<double>(g), v.second});
      }
    }
    const std::string& n = spec.replay.qos.classes[static_cast<size_t>(wait_slo)].name;
    h += "<section id=\"charts\"><h2>Latency against GPUs</h2>";
    h +=
        Chart(n + " within its wait SLO (% of pods, the worst seed) against GPUs", "% in SLO", att);
    h += Chart(n + " p99 wait (s, the worst seed) against GPUs", "p99 wait, s", p99);
    h += "</section>\n";
  }
  h += "<section id=\"headroom\"><h2>Headroom for tessera.yaml</h2><pre>" +
       HtmlEscape(plan.headroom_yaml) + "</pre></section>\n";
  h += "<section id=\"forecast\"><h2>Demand forecast</h2><pre>" +
       HtmlEscape(plan.forecast_error.empty() ? FormatForecastTable(plan.forecast)
                                              : "none: " + plan.forecast_error) +
       "</pre></section>\n";
  h += "<p class=\"footer\">Generated by <code>" + HtmlEscape(generated_by) + "</code></p>";
  return h + "</body></html>\n";
}

std::string ShardJson(const std::string& fingerprint, int k, int n, const std::string& options_json,
                      const std::vector<UnitResult>& units) {
  Json j;
  j["format"] = "tessera-plan-shard/1";
  j["fingerprint"] = fingerprint;
  j["shard"] = k;
  j["of"] = n;
  j["options"] = Json::parse(options_json);
  Json us = Json::array();
  for (const UnitResult& u : units) {
    Json ev = Json::array();
    NodeCatalog none;
    for (const Evaluation& e : u.evaluated) {
      Json x = EvalJson(none, e);
      x.erase("mix");
      ev.push_back(x);
    }
    us.push_back({{"unit", u.index}, {"best", u.best}, {"evaluated", ev}});
  }
  j["units"] = us;
  return j.dump(1) + "\n";
}

Result<Shard> ParseShard(std::string_view text, const std::string& file) {
  Shard s;
  try {
    const Json j = Json::parse(text);
    if (j.value("format", "") != "tessera-plan-shard/1") {
      return Error{file + ": not a shard file of tessera plan (format 'tessera-plan-shard/1')"};
    }
    s.fingerprint = j.at("fingerprint").get<std::string>();
    s.k = j.at("shard").get<int>();
    s.n = j.at("of").get<int>();
    s.options_json = j.at("options").dump();
    for (const Json& u : j.at("units")) {
      UnitResult r;
      r.index = u.at("unit").get<int>();
      r.best = u.at("best").get<int>();
      for (const Json& e : u.at("evaluated")) r.evaluated.push_back(EvalFromJson(e));
      s.units.push_back(std::move(r));
    }
  } catch (const nlohmann::json::exception& e) {
    return Error{file + ": " + e.what()};
  }
  return s;
}

}  // namespace tessera
