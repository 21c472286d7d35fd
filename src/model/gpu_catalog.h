#pragma once

// The GPU models the engine knows by name: their memory, and the engine's name of a model that
// an input spells as a device plugin, NVIDIA's GPU feature discovery or HAMi spells it. Pure
// functions; thread-safe.

#include <cstdint>
#include <string>
#include <string_view>

namespace tessera {

/// Per-GPU memory in MiB of a known GPU model (V100M16 16384, V100M32 32768, P100 16384,
/// T4 15360, A10 24576), or 0 for a model not in the table (memory then not enforced).
/// Used where an input names a model but not its memory (trace CSVs, scenarios, node labels).
/// `model` is the engine's name (CanonicalGpuModel).
int64_t KnownGpuMemoryMib(std::string_view model);

/// The engine's name of a GPU model. Device plugins and NVIDIA's GPU feature discovery (node
/// label nvidia.com/gpu.product) write the driver's product name with '-' for blanks
/// ("Tesla-T4", "NVIDIA-A10", "Tesla-V100-SXM2-16GB"); HAMi's register writes "NVIDIA-" and the
/// product name ("NVIDIA-Tesla V100-PCIE-32GB"). Rules, in order:
///  1. blanks at either end are dropped, and each run of blanks inside becomes one '-';
///  2. the vendor prefixes "NVIDIA-" and "Tesla-" are dropped, as often as they lead
///     ("NVIDIA-Tesla-T4" -> "T4", "NVIDIA-NVIDIA-A10" -> "A10");
///  3. a V100 of 16 or 32 GB ("V100-SXM2-16GB", "V100-PCIE-32GB", "V100-32GB") becomes
///     "V100M16" or "V100M32", a P100 of 16 GB ("P100-PCIE-16GB") "P100": the trace's names.
/// Any other name keeps what rules 1 and 2 leave ("A100-SXM4-80GB", "L4", "A10G"), so the
/// engine's own names (V100M16, V100M32, P100, T4, A10, G2, G3) come back unchanged. Case is
/// kept. A name that rules 1 and 2 would leave empty ("NVIDIA") is kept as it is.
std::string CanonicalGpuModel(std::string_view name);

/// A list of allowed models, "A|B": each entry CanonicalGpuModel, empty entries and repeats
/// dropped, order kept ("A10 | Tesla-T4||T4" -> "A10|T4"; "" -> "" = any model).
std::string CanonicalGpuModels(std::string_view spec);

}  // namespace tessera
