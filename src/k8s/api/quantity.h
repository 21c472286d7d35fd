#pragma once

#include <cstdint>
#include <string_view>

#include "util/result.h"

namespace tessera::k8s {

/// An exact Kubernetes `resource.Quantity`, held as a signed count of nano-units (1e-9 of the
/// base unit: cores for "cpu", bytes for "memory", one item for counts such as
/// "nvidia.com/gpu"). Every value the grammar can express down to 1n is held exactly; finer
/// fractions are rounded away from zero to the next nano-unit, as Kubernetes does. Magnitudes
/// above kMaxNano (1e27 base units) are rejected where they are parsed or summed. Plain value;
/// thread-compatible.
struct Quantity {
  /// Largest magnitude of `nano`: 1e36 nano-units = 1e27 base units. Two in-range values
  /// always sum without overflowing __int128 (about 1.7e38).
  static constexpr __int128 kMaxNano =
      static_cast<__int128>(1'000'000'000'000'000'000) * 1'000'000'000'000'000'000;

  __int128 nano = 0;

  bool operator==(const Quantity&) const = default;
  auto operator<=>(const Quantity&) const = default;
};

/// Parses a Kubernetes quantity string:
///   quantity ::= [sign] number [suffix]
///   number   ::= digits | digits "." [digits] | "." digits
///   suffix   ::= "n" | "u" | "m" | "k" | "M" | "G" | "T" | "P" | "E"     (powers of 1000)
///              | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei"               (powers of 1024)
///              | ("e" | "E") [sign] digits                             (power of ten)
/// Surrounding ASCII whitespace is ignored (Quantity.UnmarshalJSON trims it). "1E" is 1e18
/// (exa); "1E3" is 1000. Errors read `bad quantity "<text>" (<why>)`: empty, no digits,
/// unknown suffix, or out of range (beyond kMaxNano). Pure; thread-safe.
Result<Quantity> ParseQuantity(std::string_view text);

/// a + b, or an "out of range" error when the sum exceeds kMaxNano.
Result<Quantity> AddQuantities(Quantity a, Quantity b);

/// The value in milli-units, rounded up (toward +infinity) as Kubernetes' MilliValue() does:
/// "2" -> 2000, "500m" -> 500, "0.5" -> 500, "1e3" -> 1000000, "1u" -> 1. Error when the result
/// does not fit int64.
Result<int64_t> ToMilli(Quantity q);
/// The value of a byte quantity in MiB (2^20 bytes), rounded down: "20Gi" -> 20480,
/// "1G" -> 953, "1048576" -> 1, "1048575" -> 0. Error when it does not fit int64.
Result<int64_t> ToMiB(Quantity q);
/// The value as a whole number of base units: "1" -> 1, "2k" -> 2000. A fractional value
/// ("500m", "1.5") is an error, as Kubernetes rejects fractional extended resources.
Result<int64_t> ToInt(Quantity q);

/// Parse-and-convert shortcuts; the error names the text. For CPU and counts in milli.
Result<int64_t> QuantityToMilli(std::string_view text);
/// For memory: bytes -> MiB, rounded down.
Result<int64_t> QuantityToMiB(std::string_view text);
/// For plain counts ("1", "100", "1k"); fractions are errors.
Result<int64_t> QuantityToInt(std::string_view text);

/// Whether the quantity text ends in a unit suffix (n, u, m, k, M, G, T, P, E, Ki ... Ei), as
/// opposed to a bare number ("9216", "1.5", "1e3"). Pure.
bool HasUnitSuffix(std::string_view text);
/// Tessera's rule for GPU memory written as a quantity (tessera.io/gpu-memory on pods and
/// nodes): with a unit suffix the value is bytes, rounded up to whole MiB ("9Gi" -> 9216,
/// "7208Mi" -> 7208, "9G" -> 8584); a bare number is MiB and must be whole ("9216" -> 9216,
/// "1e3" -> 1000, "1.5" is an error). A user types "9Gi"; older manifests and HAMi write MiB.
Result<int64_t> GpuMemoryToMiB(std::string_view text);

}  // namespace tessera::k8s
