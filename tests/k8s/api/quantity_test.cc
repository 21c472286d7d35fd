#include "k8s/api/quantity.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace tessera::k8s {
namespace {

int64_t Milli(const std::string& s) {
  Result<int64_t> r = QuantityToMilli(s);
  EXPECT_TRUE(r.ok()) << s << ": " << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : -12345;
}

int64_t MiB(const std::string& s) {
  Result<int64_t> r = QuantityToMiB(s);
  EXPECT_TRUE(r.ok()) << s << ": " << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : -12345;
}

int64_t Int(const std::string& s) {
  Result<int64_t> r = QuantityToInt(s);
  EXPECT_TRUE(r.ok()) << s << ": " << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : -12345;
}

std::string ParseError(const std::string& s) {
  Result<Quantity> r = ParseQuantity(s);
  EXPECT_FALSE(r.ok()) << s << " parsed";
  return r.ok() ? "" : r.error().message;
}

TEST(K8sQuantity, MilliFromCpuAndCounts) {
  EXPECT_EQ(Milli("2"), 2000);
  EXPECT_EQ(Milli("500m"), 500);
  EXPECT_EQ(Milli("1e3"), 1000000);
  EXPECT_EQ(Milli("1E3"), 1000000);
  EXPECT_EQ(Milli("0.5"), 500);
  EXPECT_EQ(Milli(".5"), 500);
  EXPECT_EQ(Milli("1."), 1000);
  EXPECT_EQ(Milli("0"), 0);
  EXPECT_EQ(Milli("+1.25"), 1250);
  EXPECT_EQ(Milli("100k"), 100000000);
  EXPECT_EQ(Milli("1M"), 1000000000);
  EXPECT_EQ(Milli("1G"), 1000000000000);
  EXPECT_EQ(Milli("1T"), 1000000000000000);
  EXPECT_EQ(Milli("1P"), 1000000000000000000);
  EXPECT_EQ(Milli("1Ki"), 1024000);
  EXPECT_EQ(Milli("2e-3"), 2);
  EXPECT_EQ(Milli("1e+2"), 100000);
  EXPECT_EQ(Milli("15e-1"), 1500);
  EXPECT_EQ(Milli("0.0005"), 1);  // 0.5m rounds up, as MilliValue() does
  EXPECT_EQ(Milli("1u"), 1);
  EXPECT_EQ(Milli("1000u"), 1);
  EXPECT_EQ(Milli("1001u"), 2);
  EXPECT_EQ(Milli("1000000n"), 1);
  EXPECT_EQ(Milli("1n"), 1);
  EXPECT_EQ(Milli("1e-10"), 1);  // below 1n: rounded up to 1n, then to 1m
  EXPECT_EQ(Milli("-500m"), -500);
  EXPECT_EQ(Milli("-0.0005"), 0);  // rounding toward +infinity
  EXPECT_EQ(Milli("  250m \t"), 250);
  EXPECT_EQ(Milli("007"), 7000);
  EXPECT_EQ(Milli("3.14159265358979323846264338327950288"), 3142);
}

TEST(K8sQuantity, MiBFromMemory) {
  EXPECT_EQ(MiB("20Gi"), 20480);
  EXPECT_EQ(MiB("1G"), 953);  // floor(1e9 / 2^20)
  EXPECT_EQ(MiB("512Mi"), 512);
  EXPECT_EQ(MiB("1048576"), 1);
  EXPECT_EQ(MiB("1048575"), 0);
  EXPECT_EQ(MiB("1e9"), 953);
  EXPECT_EQ(MiB("1Ti"), 1048576);
  EXPECT_EQ(MiB("1.5Gi"), 1536);
  EXPECT_EQ(MiB("0.5Mi"), 0);
  EXPECT_EQ(MiB("1024Ki"), 1);
  EXPECT_EQ(MiB("261878068Ki"), 255740);  // 261878068 / 1024 = 255740.3
  EXPECT_EQ(MiB("16G"), 15258);
  EXPECT_EQ(MiB("128974848"), 123);
  EXPECT_EQ(MiB("129e6"), 123);
  EXPECT_EQ(MiB("123Mi"), 123);
  EXPECT_EQ(MiB("1Pi"), 1073741824);
  EXPECT_EQ(MiB("1Ei"), int64_t{1} << 40);
  EXPECT_EQ(MiB("8Ei"), int64_t{1} << 43);
  EXPECT_EQ(MiB("1E"), 953674316406);
  EXPECT_EQ(MiB("-1"), -1);  // floor
}

TEST(K8sQuantity, IntFromCounts) {
  EXPECT_EQ(Int("1"), 1);
  EXPECT_EQ(Int("100"), 100);
  EXPECT_EQ(Int("2k"), 2000);
  EXPECT_EQ(Int("1e2"), 100);
  EXPECT_EQ(Int("1000m"), 1);
  EXPECT_EQ(Int("1.0"), 1);
  EXPECT_EQ(Int("8"), 8);
  EXPECT_EQ(Int("9223372036854775807"), INT64_MAX);
  Result<int64_t> half = QuantityToInt("500m");
  ASSERT_FALSE(half.ok());
  EXPECT_EQ(half.error().message, "bad quantity \"500m\" (not a whole number)");
  EXPECT_FALSE(QuantityToInt("1.5").ok());
  EXPECT_FALSE(QuantityToInt("1n").ok());
}

TEST(K8sQuantity, ExactNanoValues) {
  EXPECT_EQ(ParseQuantity("1n")->nano, 1);
  EXPECT_EQ(ParseQuantity("1")->nano, 1'000'000'000);
  EXPECT_EQ(ParseQuantity("1Ki")->nano, 1'024'000'000'000);
  EXPECT_EQ(ParseQuantity("-2u")->nano, -2000);
  EXPECT_EQ(ParseQuantity("0.1n")->nano, 1);  // rounded away from zero
  EXPECT_EQ(ParseQuantity("-0.1n")->nano, -1);
  EXPECT_EQ(ParseQuantity("1e-9")->nano, 1);
  EXPECT_EQ(ParseQuantity("1e-99999999999999999999")->nano, 1);  // huge exponent, clamped
  EXPECT_EQ(ParseQuantity("0e99999999999999999999")->nano, 0);
  EXPECT_EQ(ParseQuantity("0.000000000000000000000000000000000000000000000000001")->nano, 1);
  EXPECT_EQ(ParseQuantity("1e27")->nano, Quantity::kMaxNano);
  EXPECT_EQ(*ParseQuantity("1.5"), *ParseQuantity("1500m"));
  EXPECT_EQ(*ParseQuantity("1Gi"), *ParseQuantity("1073741824"));
  EXPECT_LT(*ParseQuantity("999m"), *ParseQuantity("1"));
}

TEST(K8sQuantity, Sums) {
  Result<Quantity> s = AddQuantities(*ParseQuantity("1G"), *ParseQuantity("1G"));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*ToMiB(*s), 1907);  // exact sum first, then floor (not 953 + 953)
  Result<Quantity> big = AddQuantities(*ParseQuantity("1e27"), *ParseQuantity("1n"));
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.error().message.find("out of range"), std::string::npos);
}

TEST(K8sQuantity, RejectsGarbage) {
  EXPECT_EQ(ParseError(""), "bad quantity \"\" (empty)");
  EXPECT_EQ(ParseError("   "), "bad quantity \"   \" (empty)");
  EXPECT_EQ(ParseError("12Zi"), "bad quantity \"12Zi\" (unknown suffix \"Zi\")");
  EXPECT_EQ(ParseError("abc"), "bad quantity \"abc\" (no digits)");
  EXPECT_EQ(ParseError("."), "bad quantity \".\" (no digits)");
  EXPECT_EQ(ParseError("-"), "bad quantity \"-\" (no digits)");
  EXPECT_EQ(ParseError("+-1"), "bad quantity \"+-1\" (no digits)");
  EXPECT_EQ(ParseError("Mi"), "bad quantity \"Mi\" (no digits)");
  for (const char* bad :
       {"1ki",  "1K",   "1mi",  "1 Mi", "1e",  "1e+",  "1e1.5", "1ee3", "1Gib", "1.2.3",
        "1,5",  "0x10", "1e-",  "1Mi ", "1i",  "1b",   "1E-",   "--1",  "1m1",  "1 000",
        "\x01", "1\n2", "1Ei1", "inf",  "NaN", "1e3m", "1mm",   "١",    "1µ"}) {
    const std::string text = bad;
    if (text == "1Mi ") {
      EXPECT_TRUE(ParseQuantity(text).ok());  // trailing blanks are trimmed
      continue;
    }
    EXPECT_FALSE(ParseQuantity(text).ok()) << "accepted " << text;
  }
  // Control bytes are escaped and long text is cut in messages.
  EXPECT_EQ(ParseError("1\x01"), "bad quantity \"1\\x01\" (unknown suffix \"\\x01\")");
  const std::string huge(1000, 'x');
  EXPECT_LT(ParseError(huge).size(), 200u);
}

TEST(K8sQuantity, RejectsOverflow) {
  EXPECT_EQ(ParseError("1e28"), "bad quantity \"1e28\" (out of range)");
  EXPECT_EQ(ParseError("1e1000000"), "bad quantity \"1e1000000\" (out of range)");
  EXPECT_EQ(ParseError("99999999999999999999999999999999999999999"),
            "bad quantity \"99999999999999999999999999999999999999999\" (out of range)");
  EXPECT_FALSE(ParseQuantity("1000000000Ei").ok());
  EXPECT_FALSE(ParseQuantity("-1e28").ok());
  // In range as a quantity, but not as int64 after scaling.
  Result<int64_t> milli = QuantityToMilli("1E");
  ASSERT_FALSE(milli.ok());
  EXPECT_EQ(milli.error().message, "bad quantity \"1E\" (out of range: milli value beyond int64)");
  EXPECT_FALSE(QuantityToMilli("9223372036854775808m").ok());
  EXPECT_EQ(*QuantityToMilli("9223372036854775807m"), INT64_MAX);
  EXPECT_FALSE(QuantityToInt("1e19").ok());
  EXPECT_FALSE(QuantityToMiB("1e27").ok());
  EXPECT_EQ(*QuantityToMiB("1e24"), 953674316406250000);
  EXPECT_FALSE(QuantityToMiB("1e25").ok());  // 9.5e18 MiB is beyond int64
}

}  // namespace
}  // namespace tessera::k8s
