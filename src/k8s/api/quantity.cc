#include "k8s/api/quantity.h"

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>

#include "k8s/api/json_util.h"

namespace tessera::k8s {
namespace {

constexpr __int128 kNanoPerUnit = 1'000'000'000;
constexpr __int128 kNanoPerMilli = 1'000'000;
// Exponents beyond this magnitude are clamped: any value is then either 0 (rounded up to 1n)
// or out of range, and clamping keeps the arithmetic on exponents free of overflow.
constexpr int64_t kExponentClamp = 1'000'000'000;

Error Bad(std::string_view text, std::string_view why) {
  std::string m = "bad quantity ";
  m += QuoteForError(text);
  m += " (";
  m += why;
  m += ")";
  return Error{std::move(m)};
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Parses an exponent "[+-]digits" into *out, clamped to +-kExponentClamp.
bool ParseExponent(std::string_view s, int64_t* out) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  int64_t v = 0;
  for (char c : s) {
    if (!IsDigit(c)) return false;
    if (v < kExponentClamp) v = v * 10 + (c - '0');
  }
  if (v > kExponentClamp) v = kExponentClamp;
  *out = negative ? -v : v;
  return true;
}

// Floor and ceiling division for a positive divisor.
__int128 FloorDiv(__int128 a, __int128 b) {
  __int128 q = a / b;
  if (a % b != 0 && a < 0) --q;
  return q;
}
__int128 CeilDiv(__int128 a, __int128 b) {
  __int128 q = a / b;
  if (a % b != 0 && a > 0) ++q;
  return q;
}

Result<int64_t> Narrow(__int128 v, std::string_view what) {
  if (v > std::numeric_limits<int64_t>::max() || v < std::numeric_limits<int64_t>::min()) {
    return Error{"out of range: " + std::string(what) + " beyond int64"};
  }
  return static_cast<int64_t>(v);
}

// Prefixes a conversion error with the quantity text.
template <typename T>
Result<T> WithText(Result<T> r, std::string_view text) {
  if (r.ok()) return r;
  return Error{"bad quantity " + QuoteForError(text) + " (" + r.error().message + ")"};
}

}  // namespace

Result<Quantity> ParseQuantity(std::string_view text) {
  std::string_view s = text;
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  if (s.empty()) return Bad(text, "empty");

  bool negative = false;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  // The number: integer digits, optional '.', fraction digits.
  size_t pos = 0;
  while (pos < s.size() && IsDigit(s[pos])) ++pos;
  const std::string_view int_digits = s.substr(0, pos);
  std::string_view frac_digits;
  if (pos < s.size() && s[pos] == '.') {
    const size_t start = ++pos;
    while (pos < s.size() && IsDigit(s[pos])) ++pos;
    frac_digits = s.substr(start, pos - start);
  }
  if (int_digits.empty() && frac_digits.empty()) return Bad(text, "no digits");
  const std::string_view suffix = s.substr(pos);

  // The suffix: a power of ten (exp10) and a power of two (exp2).
  int64_t exp10 = 0;
  int exp2 = 0;
  if (suffix.empty()) {
  } else if (suffix == "n") {
    exp10 = -9;
  } else if (suffix == "u") {
    exp10 = -6;
  } else if (suffix == "m") {
    exp10 = -3;
  } else if (suffix == "k") {
    exp10 = 3;
  } else if (suffix == "M") {
    exp10 = 6;
  } else if (suffix == "G") {
    exp10 = 9;
  } else if (suffix == "T") {
    exp10 = 12;
  } else if (suffix == "P") {
    exp10 = 15;
  } else if (suffix == "E") {
    exp10 = 18;
  } else if (suffix == "Ki") {
    exp2 = 10;
  } else if (suffix == "Mi") {
    exp2 = 20;
  } else if (suffix == "Gi") {
    exp2 = 30;
  } else if (suffix == "Ti") {
    exp2 = 40;
  } else if (suffix == "Pi") {
    exp2 = 50;
  } else if (suffix == "Ei") {
    exp2 = 60;
  } else if ((suffix[0] == 'e' || suffix[0] == 'E') && ParseExponent(suffix.substr(1), &exp10)) {
  } else {
    return Bad(text, "unknown suffix " + QuoteForError(suffix));
  }

  // value = digits * 10^(exp10 - |frac|) * 2^exp2, in nano-units: scale10 = exp10 - |frac| + 9.
  // Leading zeros do not count; digits below 1n are dropped and round the magnitude up.
  std::string digits;
  for (std::string_view part : {int_digits, frac_digits}) {
    for (char c : part) {
      if (digits.empty() && c == '0') continue;
      digits.push_back(c);
    }
  }
  int64_t scale10 = exp10 - static_cast<int64_t>(frac_digits.size()) + 9;
  bool sticky = false;  // a nonzero digit below 1n was dropped
  if (scale10 < 0) {
    const uint64_t drop = static_cast<uint64_t>(-scale10);
    const size_t keep = drop >= digits.size() ? 0 : digits.size() - static_cast<size_t>(drop);
    for (size_t i = keep; i < digits.size(); ++i) sticky = sticky || digits[i] != '0';
    digits.resize(keep);
    scale10 = 0;
  }
  // A mantissa with more than 37 significant digits and scale10 >= 0 is >= 1e37 > kMaxNano.
  if (digits.size() > 37) return Bad(text, "out of range");
  __int128 nano = 0;
  for (char c : digits) nano = nano * 10 + (c - '0');
  if (sticky) nano += 1;
  if (nano != 0) {
    for (int64_t i = 0; i < scale10; ++i) {
      nano *= 10;
      if (nano > Quantity::kMaxNano) return Bad(text, "out of range");
    }
    for (int i = 0; i < exp2; ++i) {
      nano *= 2;
      if (nano > Quantity::kMaxNano) return Bad(text, "out of range");
    }
  }
  if (nano > Quantity::kMaxNano) return Bad(text, "out of range");
  return Quantity{negative ? -nano : nano};
}

Result<Quantity> AddQuantities(Quantity a, Quantity b) {
  const __int128 sum = a.nano + b.nano;  // both within +-1e36: no overflow
  if (sum > Quantity::kMaxNano || sum < -Quantity::kMaxNano) {
    return Error{"out of range: sum beyond 1e27"};
  }
  return Quantity{sum};
}

Result<int64_t> ToMilli(Quantity q) {
  return Narrow(CeilDiv(q.nano, kNanoPerMilli), "milli value");
}

Result<int64_t> ToMiB(Quantity q) {
  return Narrow(FloorDiv(q.nano, kNanoPerUnit * (int64_t{1} << 20)), "MiB value");
}

Result<int64_t> ToInt(Quantity q) {
  if (q.nano % kNanoPerUnit != 0) return Error{"not a whole number"};
  return Narrow(q.nano / kNanoPerUnit, "value");
}

Result<int64_t> QuantityToMilli(std::string_view text) {
  Result<Quantity> q = ParseQuantity(text);
  if (!q.ok()) return q.error();
  return WithText(ToMilli(*q), text);
}

Result<int64_t> QuantityToMiB(std::string_view text) {
  Result<Quantity> q = ParseQuantity(text);
  if (!q.ok()) return q.error();
  return WithText(ToMiB(*q), text);
}

Result<int64_t> QuantityToInt(std::string_view text) {
  Result<Quantity> q = ParseQuantity(text);
  if (!q.ok()) return q.error();
  return WithText(ToInt(*q), text);
}

bool HasUnitSuffix(std::string_view text) {
  while (!text.empty() && IsSpace(text.back())) text.remove_suffix(1);
  if (text.empty()) return false;
  const char last = text.back();
  if (last == 'i') return true;                    // Ki, Mi, Gi, Ti, Pi, Ei
  if (IsDigit(last) || last == '.') return false;  // a bare number or an exponent ("1e3")
  return true;  // n, u, m, k, M, G, T, P, E (a bad suffix fails to parse anyway)
}

Result<int64_t> GpuMemoryToMiB(std::string_view text) {
  Result<Quantity> q = ParseQuantity(text);
  if (!q.ok()) return q.error();
  if (!HasUnitSuffix(text)) return WithText(ToInt(*q), text);
  return WithText(Narrow(CeilDiv(q->nano, kNanoPerUnit * (int64_t{1} << 20)), "MiB value"), text);
}

}  // namespace tessera::k8s
