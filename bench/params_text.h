#pragma once

// "NAME=VALUE[,NAME=VALUE...]" for TesseraParams, shared by the benchmarks that put `tessera`
// variants beside the registered policies (policy_compare, gpu_memory_variants, robustness).

#include <string>

#include "policy/tessera_policy.h"

namespace tessera {

/// Applies `spec` to `params`. Returns an empty string, or what is wrong with the first item
/// that is not NAME=NUMBER or names no parameter. Names: the TesseraParams fields (booleans
/// as 0/1), e.g. "sharing_open_cost=0,scarcity=3".
std::string ApplyTesseraParams(const std::string& spec, TesseraParams* params);

}  // namespace tessera
