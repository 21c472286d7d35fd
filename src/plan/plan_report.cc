#include "plan/plan_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "report/report.h"
#include "report/svg_chart.h"
#include "util/format.h"

namespace tessera {
namespace {

using Json = nlohmann::ordered_json;

// "classes without an SLO: >= 90 % of the GPU-hours k8s-default serves them", or "" without a
// served floor.
std::string ServedFloorText(const PlanSpec& spec) {
  if (!spec.floor_policy || spec.served_floor <= 0) return "";
  char buf[160];
  std::snprintf(buf, sizeof buf, "classes without an SLO: >= %g %% of the GPU-hours %s serves them",
                spec.served_floor * 100, spec.floor_policy->name.c_str());
  return buf;
}

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

// The other classes the table shows: those without an SLO that the demand has pods of, in
// class order (their waits and GPU-hours, so that an SLO bought by starving them shows).
std::vector<int> OtherClasses(const PlanInfo& info, const PlanSpec& spec) {
  const std::vector<int> slo = SloClasses(spec);
  std::vector<int> out;
  for (size_t c = 0; c < spec.replay.qos.classes.size(); ++c) {
    if (std::find(slo.begin(), slo.end(), static_cast<int>(c)) != slo.end()) continue;
    for (const ClassLoad& l : info.load) {
      if (l.qos == spec.replay.qos.classes[c].name && l.pods > 0) {
        out.push_back(static_cast<int>(c));
        break;
      }
    }
  }
  return out;
}

// The SLO column: "meets", "MISSES: <the first SLO missed>" or "no plan".
std::string Verdict(const PlanRow& row) {
  if (!row.eval) return "no plan";
  return row.eval->meets ? "meets" : "MISSES: " + row.eval->missed;
}

// Commas, quotes and line breaks would break a plan.csv row; names come from input files.
std::string CsvSafe(std::string s) {
  for (char& c : s) {
    if (c == ',' || c == '\n' || c == '\r' || c == '"') c = ' ';
  }
  return s;
}

// The lines under the table and in the report's warnings: the policies without a plan, then
// the warnings of the inputs.
std::vector<std::string> Warnings(const PlanInfo& info, const PlanResult& plan) {
  std::vector<std::string> out;
  for (const PlanRow& r : plan.rows) {
    if (!r.eval) out.push_back(r.policy + ": no plan: " + r.no_plan);
  }
  out.insert(out.end(), info.warnings.begin(), info.warnings.end());
  return out;
}

}  // namespace

std::string PlanJson(const PlanInfo& info, const PlanSpec& spec, const PlanResult& plan) {
  Json j;
  j["format"] = "tessera-plan/1";
  Json in;
  in["demand"] = info.demand;
  in["pods"] = info.pods;
  in["skipped_pods"] = info.skipped;
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
  in["served_floor"] = spec.floor_policy ? spec.served_floor : 0.0;
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
    if (r.eval) {
      row["result"] = EvalJson(spec.catalog, *r.eval);
    } else {
      row["result"] = nullptr;
      row["no_plan"] = r.no_plan;
    }
    rows.push_back(row);
  }
  j["rows"] = rows;
  j["warnings"] = Warnings(info, plan);
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
      "wait_p99_s,slo_pct,gpu_hours,alloc_pct,stranded_gpus,headroom_p95_gpus,preemptions,slos\n";
  for (const PlanRow& r : plan.rows) {
    const std::string head = CsvSafe(r.kind) + "," + CsvSafe(r.label) + "," + CsvSafe(r.policy) +
                             "," + (r.chosen ? "1" : "0") + ",";
    if (!r.eval) {  // a policy without a plan: one line, no figures
      out += head + ",,,0,0,,,,,,,,,,," + CsvSafe(Verdict(r) + ": " + r.no_plan) + "\n";
      continue;
    }
    const Evaluation& e = *r.eval;
    for (const ClassOutcome& c : e.classes) {
      char buf[512];
      std::snprintf(buf, sizeof buf,
                    "%lld,%.4f,%d,%d,%s,%.3f,%.3f,%.3f,%.3f,%.2f,%.2f,%.2f,%.1f,%d,",
                    static_cast<long long>(e.gpus), e.cost, e.meets ? 1 : 0, e.seeds_run,
                    CsvSafe(c.name).c_str(), c.p50_s, c.p95_s, c.p99_s, c.slo_pct, c.gpu_hours,
                    e.alloc_pct, e.stranded_gpus, e.headroom_p95, e.preemptions);
      out +=
          head + CsvSafe(MixName(spec.catalog, e.counts)) + "," + buf + CsvSafe(Verdict(r)) + "\n";
    }
  }
  return out;
}

std::string PlanTable(const PlanInfo& info, const PlanSpec& spec, const PlanResult& plan) {
  const std::vector<int> cls = SloClasses(spec);
  const std::vector<int> other = OtherClasses(info, spec);
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = {"", "row", "policy", "node mix", "GPUs", "cost/h"};
  for (int c : cls) {
    const std::string& n = spec.replay.qos.classes[static_cast<size_t>(c)].name;
    head.push_back(n + " p50/p95/p99 wait");
    head.push_back(n + " in SLO");
  }
  for (int c : other) {
    const std::string& n = spec.replay.qos.classes[static_cast<size_t>(c)].name;
    head.push_back(n + " p50/p99 wait");
    head.push_back(n + " GPU-h");
  }
  for (const char* h : {"alloc", "stranded", "headroom p95", "SLOs"}) head.push_back(h);
  rows.push_back(head);
  for (const PlanRow& r : plan.rows) {
    std::vector<std::string> row = {r.chosen ? "*" : "", r.kind == "plan" ? "plan" : r.label,
                                    r.policy};
    if (!r.eval) {  // a policy without a plan
      row.resize(row.size() + 3 + 2 * cls.size() + 2 * other.size() + 3, "-");
      row.push_back(Verdict(r));
      rows.push_back(row);
      continue;
    }
    const Evaluation& e = *r.eval;
    row.push_back(MixName(spec.catalog, e.counts));
    row.push_back(std::to_string(e.gpus));
    row.push_back(Fixed(e.cost, 2));
    for (int c : cls) {
      const ClassOutcome& o = e.classes[static_cast<size_t>(c)];
      row.push_back(FormatSeconds(o.p50_s) + " / " + FormatSeconds(o.p95_s) + " / " +
                    FormatSeconds(o.p99_s));
      row.push_back(Fixed(o.slo_pct, 2) + " %");
    }
    for (int c : other) {
      const ClassOutcome& o = e.classes[static_cast<size_t>(c)];
      row.push_back(FormatSeconds(o.p50_s) + " / " + FormatSeconds(o.p99_s));
      row.push_back(Fixed(o.gpu_hours, 0));
    }
    row.push_back(Fixed(e.alloc_pct, 1) + " %");
    row.push_back(Fixed(e.stranded_gpus, 1));
    row.push_back(Fixed(e.headroom_p95, 0));
    row.push_back(Verdict(r));
    rows.push_back(row);
  }
  std::string out = "tessera plan: " + info.demand;
  if (info.growth != 1) out += ", demand x" + Fixed(info.growth, 2);
  if (info.peak_window_h > 0) out += ", busiest " + Fixed(info.peak_window_h, 0) + " h";
  out += "; " + std::to_string(info.pods) + " pods";
  if (info.skipped > 0) {
    out += " (" + std::to_string(info.skipped) +
           " skipped for missing or inconsistent times, listed in skipped.csv)";
  }
  out += "; SLOs:";
  for (const ClassSlo& s : spec.slos) out += " '" + s.text + "'";
  if (const std::string floor = ServedFloorText(spec); !floor.empty()) out += "; " + floor;
  out += "\n" + AlignedTable(rows);
  out += "* chosen: the cheapest mix meeting every SLO on seeds";
  for (uint64_t s : spec.seeds) out += " " + std::to_string(s);
  out += " (waits: the worst seed; in SLO: the least share within the class's wait bound;";
  out += " GPU-h of a class without an SLO: the least over the seeds)\n";
  out += "GPUs needed for the same SLOs:";
  for (size_t p = 0; p < spec.policies.size(); ++p) {
    out += " " + spec.policies[p].name + " " +
           (plan.policy_gpus[p] < 0 ? std::string("none") : std::to_string(plan.policy_gpus[p]));
  }
  out += "\n";
  for (const std::string& w : Warnings(info, plan)) out += "warning: " + w + "\n";
  out += plan.forecast_error.empty() ? FormatForecastTable(plan.forecast)
                                     : "Forecast: none (" + plan.forecast_error + ")\n";
  out += "\n" + plan.headroom_yaml;
  return out;
}

namespace {

// A wait tick of a log axis: "0", "100 ms", "10 s", "2.78 h".
std::string WaitTick(double s) {
  char buf[32];
  if (s <= 0) return "0";
  if (s < 1) {
    std::snprintf(buf, sizeof buf, "%g ms", s * 1000);
  } else if (s < 10000) {
    std::snprintf(buf, sizeof buf, "%g s", s);
  } else {
    std::snprintf(buf, sizeof buf, "%.3g h", s / 3600);
  }
  return buf;
}

constexpr std::string_view kPlanStyle = R"css(
table.summary tr.chosen td, table.summary tr.chosen th { font-weight: 700; }
table.summary td.verdict { text-align: left; white-space: normal; min-width: 15em; }
table.summary th.verdict { text-align: left; }
table.summary td.misses, table.summary td.none { color: #cf222e; }
table.summary th.label { text-align: left; font-weight: 400; }
svg .marker { stroke: #fff; stroke-width: 1.5; }
figure.chart { margin-top: 14px; }
pre { background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; padding: 10px 12px;
  overflow-x: auto; font-size: 12.5px; margin: 0; }
)css";

}  // namespace

std::string PlanHtml(const PlanInfo& info, const PlanSpec& spec, const PlanResult& plan,
                     const std::string& generated_by) {
  auto color = [&](const std::string& policy) {
    for (size_t p = 0; p < spec.policies.size(); ++p) {
      if (spec.policies[p].name == policy) return PolicyColor(p);
    }
    return PolicyColor(0);
  };
  const std::string title = "Plan: " + info.demand;
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  h += "<title>" + HtmlEscape(title) + " \u2014 Tessera plan report</title>\n";
  h += "<style>" + std::string(ReportCss()) + std::string(kPlanStyle) +
       "</style>\n</head>\n<body>\n<main>\n";

  // Header: what was planned, and the answer.
  h += "<header class=\"card\">\n<p class=\"eyebrow\">Tessera \u00B7 capacity plan (the cheapest "
       "node mix that meets every SLO, judged by replay)</p>\n<h1>" +
       HtmlEscape(title) + "</h1>\n<dl class=\"meta\">\n";
  auto meta = [&h](std::string_view name, const std::string& value_html) {
    h += "<dt>" + std::string(name) + "</dt><dd>" + value_html + "</dd>\n";
  };
  std::string demand = std::to_string(info.pods) + " pods";
  if (info.skipped > 0) {
    demand += ", " + std::to_string(info.skipped) +
              " skipped (missing or inconsistent times; skipped.csv)";
  }
  if (info.growth != 1) demand += "; demand \u00D7" + CompactNumber(info.growth);
  if (info.peak_window_h > 0) demand += "; its busiest " + CompactNumber(info.peak_window_h) + " h";
  meta("Demand", demand + " \u2014 <code>" + HtmlEscape(info.demand) + "</code>");
  std::string slos;
  for (const ClassSlo& s : spec.slos)
    slos += (slos.empty() ? "" : " ") + ("<code>" + HtmlEscape(s.text) + "</code>");
  if (const std::string floor = ServedFloorText(spec); !floor.empty()) {
    slos += "; " + HtmlEscape(floor);
  }
  meta("SLOs", slos);
  std::string types;
  for (const NodeType& t : spec.catalog.types) {
    types += (types.empty() ? "" : "; ") + HtmlEscape(t.name) + " (" + std::to_string(t.gpus) +
             " \u00D7 " + HtmlEscape(t.model) + ", " + std::to_string(t.min_count) + ".." +
             std::to_string(t.max_count) + (t.step > 1 ? " by " + std::to_string(t.step) : "") +
             ", " + Fixed(t.cost_per_hour, 2) + "/h)";
  }
  meta("Catalog", types + " \u2014 <code>" + HtmlEscape(spec.catalog.file) + "</code>");
  std::string seeds, check;
  for (uint64_t v : spec.seeds) seeds += (seeds.empty() ? "" : ", ") + std::to_string(v);
  for (uint64_t v : spec.check_seeds) check += (check.empty() ? "" : ", ") + std::to_string(v);
  meta("Seeds", "chosen on " + seeds + (check.empty() ? "" : "; checked on " + check));
  meta("Command", "<code>" + HtmlEscape(generated_by.empty() ? "-" : generated_by) + "</code>");
  h += "</dl>\n";
  const std::string& chosen_policy = spec.policies[static_cast<size_t>(plan.chosen_policy)].name;
  h += "<p class=\"highlight\">Chosen: <b>" +
       HtmlEscape(MixName(spec.catalog, plan.chosen_counts)) + "</b> with " +
       HtmlEscape(chosen_policy) + ": " +
       std::to_string(MixGpus(spec.catalog, plan.chosen_counts)) + " GPUs, " +
       Fixed(MixCost(spec.catalog, plan.chosen_counts), 2) +
       " per hour. GPUs needed for the same SLOs:";
  for (size_t p = 0; p < spec.policies.size(); ++p) {
    h += std::string(p ? "," : "") + " " + HtmlEscape(spec.policies[p].name) + " " +
         (plan.policy_gpus[p] < 0 ? std::string("none within the catalog")
                                  : std::to_string(plan.policy_gpus[p]));
  }
  h += ".</p>\n</header>\n";

  const std::vector<std::string> warnings = Warnings(info, plan);
  if (!warnings.empty()) {
    h += "<section class=\"card warnings\" id=\"warnings\">\n<h2>Warnings</h2>\n<ul>\n";
    for (const std::string& w : warnings) h += "<li>" + HtmlEscape(w) + "</li>\n";
    h += "</ul>\n</section>\n";
  }

  // The table: the verdict next to the mix, so that it is in view however wide the rest is.
  const std::vector<int> cls = SloClasses(spec);
  const std::vector<int> other = OtherClasses(info, spec);
  h += "<section class=\"card\" id=\"table\">\n<h2>Plans, checks and baselines</h2>\n<div "
       "class=\"table-wrap\"><table class=\"summary plan\">\n<thead><tr><th></th><th "
       "class=\"policy\">row</th><th>policy</th><th>node mix</th><th>GPUs</th><th>cost/h</th>"
       "<th class=\"verdict\">SLOs</th>";
  for (int c : cls) {
    const std::string& n = spec.replay.qos.classes[static_cast<size_t>(c)].name;
    h += "<th>" + HtmlEscape(n) + " p50 / p95 / p99 wait</th><th>" + HtmlEscape(n) + " in SLO</th>";
  }
  for (int c : other) {
    const std::string& n = spec.replay.qos.classes[static_cast<size_t>(c)].name;
    h += "<th>" + HtmlEscape(n) + " p50 / p99 wait (no SLO)</th><th>" + HtmlEscape(n) +
         " GPU-h served</th>";
  }
  h += "<th>alloc</th><th>stranded GPUs</th><th>headroom p95</th></tr></thead>\n<tbody>\n";
  for (const PlanRow& r : plan.rows) {
    h += "<tr data-kind=\"" + HtmlEscape(r.kind) + "\" data-policy=\"" + HtmlEscape(r.policy) +
         "\"" + (r.chosen ? " class=\"chosen\"" : "") + "><td>" + (r.chosen ? "&#9733;" : "") +
         "</td><th class=\"label\" scope=\"row\">" +
         HtmlEscape(r.kind == "plan" ? "plan" : r.label) +
         "</th><td><span class=\"swatch\" style=\"background:" + std::string(color(r.policy)) +
         "\"></span>" + HtmlEscape(r.policy) + "</td>";
    if (!r.eval) {  // the reason is in the cell's title and in the warnings above
      h += "<td>-</td><td>-</td><td>-</td><td class=\"verdict none\" title=\"" +
           HtmlEscape(r.no_plan) + "\">no plan</td>";
      for (size_t i = 0; i < cls.size() + other.size(); ++i) h += "<td>-</td><td>-</td>";
      h += "<td>-</td><td>-</td><td>-</td></tr>\n";
      continue;
    }
    const Evaluation& e = *r.eval;
    h += "<td>" + HtmlEscape(MixName(spec.catalog, e.counts)) + "</td><td>" +
         std::to_string(e.gpus) + "</td><td>" + Fixed(e.cost, 2) + "</td><td class=\"verdict" +
         (e.meets ? "" : " misses") + "\">" + HtmlEscape(Verdict(r)) + "</td>";
    for (int c : cls) {
      const ClassOutcome& o = e.classes[static_cast<size_t>(c)];
      h += "<td>" + FormatSeconds(o.p50_s) + " / " + FormatSeconds(o.p95_s) + " / " +
           FormatSeconds(o.p99_s) + "</td><td>" + Fixed(o.slo_pct, 2) + " %</td>";
    }
    for (int c : other) {
      const ClassOutcome& o = e.classes[static_cast<size_t>(c)];
      h += "<td>" + FormatSeconds(o.p50_s) + " / " + FormatSeconds(o.p99_s) + "</td><td>" +
           Fixed(o.gpu_hours, 0) + "</td>";
    }
    h += "<td>" + Fixed(e.alloc_pct, 1) + " %</td><td>" + Fixed(e.stranded_gpus, 1) + "</td><td>" +
         Fixed(e.headroom_p95, 0) + "</td></tr>\n";
  }
  h += "</tbody></table></div>\n<p class=\"note\">&#9733; the chosen plan: the cheapest mix "
       "meeting every SLO on every seed it was chosen on. Waits: the worst seed's; in SLO: the "
       "least share, over the seeds, of the class's pods whose wait was within its bound; "
       "classes without an SLO: their waits (the worst seed's) and GPU-hours served (the least "
       "over the seeds); "
       "alloc: time-average GPU allocation; stranded: idle GPUs stranded by fragmentation; "
       "headroom p95: idle GPUs the policy kept for the protected classes.</p>\n</section>\n";

  // Charts: per wait SLO, per policy through its replayed mixes (the best figure at each GPU
  // count: a probe counts its first seed, a plan every seed).
  const std::vector<SearchUnit> units = Units(spec);
  std::string charts;
  for (const ClassSlo& slo : spec.slos) {
    const int c = spec.ClassIndex(slo.qos_class);
    if (slo.kind != ClassSlo::Kind::kWait || c < 0) continue;
    std::vector<std::map<int64_t, std::pair<double, double>>> by(spec.policies.size());
    for (const UnitResult& u : plan.units) {
      const int p = units[static_cast<size_t>(u.index)].policy;
      for (const Evaluation& e : u.evaluated) {
        const ClassOutcome& o = e.classes[static_cast<size_t>(c)];
        const double wait = slo.quantile == 50 ? o.p50_s : slo.quantile == 95 ? o.p95_s : o.p99_s;
        auto [it, fresh] =
            by[static_cast<size_t>(p)].emplace(e.gpus, std::make_pair(o.slo_pct, wait));
        if (!fresh) {
          it->second.first = std::max(it->second.first, o.slo_pct);
          it->second.second = std::min(it->second.second, wait);
        }
      }
    }
    const std::string q = "p" + std::to_string(slo.quantile);
    std::vector<ChartSeries> att, waits;
    for (size_t p = 0; p < spec.policies.size(); ++p) {
      const std::string& name = spec.policies[p].name;
      att.emplace_back(name, PolicyColor(p));
      waits.emplace_back(name, PolicyColor(p));
      att.back().markers = waits.back().markers = true;
      for (const auto& [g, v] : by[p]) {
        const std::string where = name + ", " + std::to_string(g) + " GPUs: ";
        att.back().points.push_back(
            {static_cast<double>(g), v.first, where + Fixed(v.first, 2) + " % within the SLO"});
        waits.back().points.push_back(
            {static_cast<double>(g), v.second, where + q + " wait " + FormatSeconds(v.second)});
      }
    }
    const std::string& n = slo.qos_class;
    ChartSpec a("attainment-" + std::to_string(c) + "-" + q,
                n + " pods within " + FormatSeconds(slo.wait_s) + " against GPUs", "GPUs",
                "% of " + n + " pods (the worst seed)");
    a.marks.push_back(
        {static_cast<double>(slo.quantile), q + " \u2264 " + FormatSeconds(slo.wait_s) + " needs " +
                                                std::to_string(slo.quantile) + " %"});
    charts += SvgChart(a, att);
    ChartSpec w("wait-" + std::to_string(c) + "-" + q,
                n + " " + q + " wait against GPUs (log scale)", "GPUs",
                n + " " + q + " wait (the worst seed)");
    w.log_y = true;
    w.log_y_from = std::min(1.0, std::pow(10.0, std::floor(std::log10(slo.wait_s))));
    w.y_tick = WaitTick;
    w.marks.push_back({slo.wait_s, "SLO " + FormatSeconds(slo.wait_s)});
    charts += SvgChart(w, waits);
  }
  if (!charts.empty()) {
    h += "<section class=\"card\" id=\"charts\">\n<h2>Latency against GPUs</h2>\n" + charts +
         "<p class=\"note\">One marker per GPU count the search replayed (hover for the figure), "
         "the best figure at each count. Under the dashed line (wait) or above it (share within "
         "the SLO) a mix meets that SLO. The wait axis is logarithmic above its first tick, so "
         "that a wait of seconds stands apart from 0 however long the longest wait is.</p>\n"
         "</section>\n";
  }
  h += "<section class=\"card\" id=\"headroom\">\n<h2>Headroom for tessera.yaml</h2>\n<pre>" +
       HtmlEscape(plan.headroom_yaml) + "</pre>\n</section>\n";
  h += "<section class=\"card\" id=\"forecast\">\n<h2>Demand forecast</h2>\n<pre>" +
       HtmlEscape(plan.forecast_error.empty() ? FormatForecastTable(plan.forecast)
                                              : "none: " + plan.forecast_error) +
       "</pre>\n</section>\n";
  return h + "</main>\n</body>\n</html>\n";
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
