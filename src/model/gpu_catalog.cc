#include "model/gpu_catalog.h"

namespace tessera {

int64_t KnownGpuMemoryMib(std::string_view model) {
  if (model == "V100M16") return 16384;
  if (model == "V100M32") return 32768;
  if (model == "P100") return 16384;
  if (model == "T4") return 15360;
  if (model == "A10") return 24576;
  return 0;
}

}  // namespace tessera
