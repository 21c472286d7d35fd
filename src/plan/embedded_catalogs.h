#pragma once

// Node catalogs compiled into the binary (plan/catalog.h for the format), so that `tessera
// plan` runs an example without any input file, as `tessera frag` and `tessera replay` run an
// embedded scenario. Each is named after the embedded scenario it is for. Pure; thread-safe.

#include <string>
#include <string_view>
#include <vector>

namespace tessera {

/// The YAML text of the embedded catalog `name` ("peak-sale"), or empty if there is none.
std::string_view EmbeddedCatalog(std::string_view name);
/// Names of the embedded catalogs.
std::vector<std::string> EmbeddedCatalogNames();

}  // namespace tessera
