#include "plan/slo.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

namespace tessera {
namespace {

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) --e;
  return std::string(s.substr(b, e - b));
}

// Splits at runs of blanks.
std::vector<std::string> Words(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ' ' || c == '\t') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

bool Number(std::string_view s, double* out) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size() && std::isfinite(*out);
}

}  // namespace

std::string FormatSeconds(double s) {
  char buf[48];
  if (s > 0 && s < 1) {
    std::snprintf(buf, sizeof buf, "%g ms", s * 1000);
  } else if (s >= 7200) {
    std::snprintf(buf, sizeof buf, "%.3g h", s / 3600);
  } else {
    std::snprintf(buf, sizeof buf, "%.4g s", s);
  }
  return buf;
}

Result<ClassSlo> ParseSlo(std::string_view text) {
  const std::string quoted = "--slo '" + std::string(text) + "': ";
  const std::string expected =
      "expected 'CLASS: pNN wait <= TIME' or 'CLASS: gpu-hours >= N' (e.g. 'LS: p99 wait <= "
      "1s'; pNN is p50, p95 or p99; TIME in ms, s, m or h)";
  ClassSlo slo;
  slo.text = std::string(text);
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) return Error{quoted + expected};
  slo.qos_class = Trim(text.substr(0, colon));
  if (slo.qos_class.empty() || slo.qos_class.find(' ') != std::string::npos) {
    return Error{quoted + "no class before ':'; " + expected};
  }
  // Blanks do not matter after the class: "p99 wait <= 1 s" reads as "p99wait<=1s".
  std::string rest;
  for (const std::string& w : Words(text.substr(colon + 1))) rest += w;
  if (rest.starts_with("gpu-hours")) {
    rest = rest.substr(9);
    if (!rest.starts_with(">=")) return Error{quoted + "expected '>=' after gpu-hours"};
    double v = 0;
    if (!Number(rest.substr(2), &v) || v < 0) {
      return Error{quoted + "expected a number of GPU-hours >= 0 after '>=', got '" +
                   rest.substr(2) + "'"};
    }
    slo.kind = ClassSlo::Kind::kGpuHours;
    slo.min_gpu_hours = v;
    return slo;
  }
  if (!rest.starts_with("p") || rest.find("wait") == std::string::npos) {
    return Error{quoted + expected};
  }
  const std::string q = rest.substr(0, rest.find("wait"));
  if (q != "p50" && q != "p95" && q != "p99") {
    return Error{quoted + "the quantile must be p50, p95 or p99, got '" + q + "'"};
  }
  slo.quantile = std::stoi(q.substr(1));
  rest = rest.substr(q.size() + 4);
  if (!rest.starts_with("<=")) return Error{quoted + "expected '<=' after 'wait'"};
  std::string bound = rest.substr(2);
  double scale = 0;
  for (const auto& [unit, s] : std::vector<std::pair<std::string, double>>{
           {"ms", 1e-3}, {"s", 1}, {"m", 60}, {"h", 3600}}) {
    if (bound.size() > unit.size() && bound.ends_with(unit)) {
      double v = 0;
      if (Number(bound.substr(0, bound.size() - unit.size()), &v)) {
        scale = s;
        slo.wait_s = v * s;
        break;
      }
    }
  }
  if (scale == 0) {
    return Error{quoted + "expected a time with a unit (ms, s, m or h) after '<=', got '" + bound +
                 "'"};
  }
  if (slo.wait_s < 0) return Error{quoted + "the wait bound must not be negative"};
  return slo;
}

}  // namespace tessera
