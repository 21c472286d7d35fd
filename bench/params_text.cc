#include "params_text.h"

#include <cstdlib>
#include <sstream>

namespace tessera {
namespace {

// Sets one field; false if `name` is none.
bool Set(TesseraParams& p, const std::string& name, double v) {
  const bool b = v != 0;
  struct Real {
    const char* name;
    double TesseraParams::*field;
  };
  struct Flag {
    const char* name;
    bool TesseraParams::*field;
  };
  static const Real reals[] = {
      {"multi_gpu_weight", &TesseraParams::multi_gpu_weight},
      {"scarcity", &TesseraParams::scarcity},
      {"sharing_open_cost", &TesseraParams::sharing_open_cost},
      {"open_reserve", &TesseraParams::open_reserve},
      {"project_opening", &TesseraParams::project_opening},
      {"plentiful_open_cost", &TesseraParams::plentiful_open_cost},
      {"model_pressure", &TesseraParams::model_pressure},
      {"pressure_step", &TesseraParams::pressure_step},
      {"hole_fill", &TesseraParams::hole_fill},
      {"hole_fill_primary", &TesseraParams::hole_fill_primary},
      {"hole_min_share", &TesseraParams::hole_min_share},
      {"memory_weight", &TesseraParams::memory_weight},
      {"memory_hole_fill", &TesseraParams::memory_hole_fill},
      {"count_weight", &TesseraParams::count_weight},
      {"primary_levels", &TesseraParams::primary_levels},
      {"demand_weight", &TesseraParams::demand_weight},
      {"demand_coverage", &TesseraParams::demand_coverage},
  };
  static const Flag flags[] = {
      {"cpu_stranding", &TesseraParams::cpu_stranding},
      {"multi_gpu_classes", &TesseraParams::multi_gpu_classes},
      {"adaptive_open", &TesseraParams::adaptive_open},
      {"plentiful_drop_multi_gpu", &TesseraParams::plentiful_drop_multi_gpu},
      {"hole_relative", &TesseraParams::hole_relative},
      {"memory_best_fit", &TesseraParams::memory_best_fit},
      {"memory_bound_mode", &TesseraParams::memory_bound_mode},
      {"count_shares_only", &TesseraParams::count_shares_only},
      {"count_needs_multi", &TesseraParams::count_needs_multi},
  };
  for (const Real& r : reals) {
    if (name == r.name) {
      p.*r.field = v;
      return true;
    }
  }
  for (const Flag& f : flags) {
    if (name == f.name) {
      p.*f.field = b;
      return true;
    }
  }
  return false;
}

}  // namespace

std::string ApplyTesseraParams(const std::string& spec, TesseraParams* params) {
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const size_t eq = item.find('=');
    char* end = nullptr;
    const double v = eq == std::string::npos ? 0 : std::strtod(item.c_str() + eq + 1, &end);
    if (eq == std::string::npos || end == item.c_str() + eq + 1 || *end != '\0') {
      return "expected NAME=NUMBER, got '" + item + "'";
    }
    if (!Set(*params, item.substr(0, eq), v)) {
      return "unknown parameter '" + item.substr(0, eq) + "'";
    }
  }
  return {};
}

}  // namespace tessera
