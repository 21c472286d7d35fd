#include "model/gpu_catalog.h"

namespace tessera {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

/// Whether `name` is `family` alone or `family` followed by '-' and more ("V100", "V100-SXM2").
bool IsFamily(std::string_view name, std::string_view family) {
  return name.starts_with(family) && (name.size() == family.size() || name[family.size()] == '-');
}

/// The last '-'-separated part of `name` ("16GB" of "V100-SXM2-16GB").
std::string_view LastPart(std::string_view name) {
  const size_t dash = name.rfind('-');
  return dash == std::string_view::npos ? name : name.substr(dash + 1);
}

}  // namespace

int64_t KnownGpuMemoryMib(std::string_view model) {
  if (model == "V100M16") return 16384;
  if (model == "V100M32") return 32768;
  if (model == "P100") return 16384;
  if (model == "T4") return 15360;
  if (model == "A10") return 24576;
  return 0;
}

std::string CanonicalGpuModel(std::string_view name) {
  // 1. Trimmed, inner blanks as one '-'.
  while (!name.empty() && IsBlank(name.front())) name.remove_prefix(1);
  while (!name.empty() && IsBlank(name.back())) name.remove_suffix(1);
  std::string dashed;
  dashed.reserve(name.size());
  for (size_t i = 0; i < name.size(); ++i) {
    if (!IsBlank(name[i])) {
      dashed.push_back(name[i]);
    } else if (!IsBlank(name[i - 1])) {  // name[0] is not blank
      dashed.push_back('-');
    }
  }
  // 2. Vendor prefixes.
  std::string_view rest = dashed;
  for (bool again = true; again;) {
    again = false;
    for (std::string_view prefix : {"NVIDIA-", "Tesla-"}) {
      if (rest.size() > prefix.size() && rest.starts_with(prefix)) {
        rest.remove_prefix(prefix.size());
        again = true;
      }
    }
  }
  // 3. The trace's names of the models it has.
  const std::string_view memory = LastPart(rest);
  if (IsFamily(rest, "V100") && rest != "V100") {
    if (memory == "16GB") return "V100M16";
    if (memory == "32GB") return "V100M32";
  }
  if (IsFamily(rest, "P100") && memory == "16GB") return "P100";
  return std::string(rest);
}

std::string CanonicalGpuModels(std::string_view spec) {
  std::string out;
  while (true) {
    const size_t bar = spec.find('|');
    const std::string model = CanonicalGpuModel(spec.substr(0, bar));
    if (!model.empty()) {
      // Repeats dropped: compare with each entry already written.
      bool seen = false;
      std::string_view written = out;
      while (!written.empty() && !seen) {
        const size_t end = written.find('|');
        seen = written.substr(0, end) == model;
        written = end == std::string_view::npos ? std::string_view() : written.substr(end + 1);
      }
      if (!seen) {
        if (!out.empty()) out.push_back('|');
        out.append(model);
      }
    }
    if (bar == std::string_view::npos) break;
    spec.remove_prefix(bar + 1);
  }
  return out;
}

}  // namespace tessera
