#pragma once

#include <cstdint>
#include <string_view>

namespace tessera {

/// Per-GPU memory in MiB of a known GPU model (V100M16 16384, V100M32 32768, P100 16384,
/// T4 15360, A10 24576), or 0 for a model not in the table (memory then not enforced).
/// Used where an input names a model but not its memory (trace CSVs, scenarios, node labels).
int64_t KnownGpuMemoryMib(std::string_view model);

}  // namespace tessera
