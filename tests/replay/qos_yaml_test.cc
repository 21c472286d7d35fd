#include "replay/qos_yaml.h"

#include <gtest/gtest.h>

#include <cctype>
#include <limits>
#include <ostream>
#include <string>

namespace tessera {
namespace {

TEST(QosYaml, ReadsClassesAndFallback) {
  Result<QosClasses> q = ParseQosClasses(
      "classes:\n"
      "  - {name: LS, priority: 1000, slo_wait_s: 0.5, preemptible: false, grace_s: 10}\n"
      "  - {name: BE, priority: -5}\n"
      "  - {name: batch, priority: 0}\n"
      "fallback: BE\n",
      "c.yaml");
  ASSERT_TRUE(q.ok()) << q.error().message;
  ASSERT_EQ(q->classes.size(), 3u);
  EXPECT_EQ(q->classes[0].priority, 1000);
  EXPECT_DOUBLE_EQ(q->classes[0].slo_wait_s, 0.5);
  EXPECT_FALSE(q->classes[0].preemptible);
  EXPECT_DOUBLE_EQ(q->classes[0].grace_s, 10);
  EXPECT_TRUE(q->classes[1].preemptible);
  EXPECT_DOUBLE_EQ(q->classes[1].slo_wait_s, -1);  // no SLO
  EXPECT_DOUBLE_EQ(q->classes[1].grace_s, 30);
  EXPECT_EQ(q->fallback, 1);
  EXPECT_EQ(q->Find("nope"), 1);
  EXPECT_EQ(q->Find("batch"), 2);
  // No class names use_headroom: the highest-priority class is the one the headroom serves.
  EXPECT_TRUE(q->classes[0].use_headroom);
  EXPECT_FALSE(q->classes[1].use_headroom);
  EXPECT_EQ(HeadroomProtectedPriority(*q), 1000);
}

// use_headroom as the extender's config has it: the headroom protects from the lowest priority
// among the classes that may use it, and holds the others.
TEST(QosYaml, UseHeadroomSetsTheProtectedPriority) {
  Result<QosClasses> q = ParseQosClasses(
      "classes:\n"
      "  - {name: LS, priority: 1000, use_headroom: true}\n"
      "  - {name: Burstable, priority: 500, use_headroom: true}\n"
      "  - {name: BE, priority: 0}\n",
      "c.yaml");
  ASSERT_TRUE(q.ok()) << q.error().message;
  EXPECT_TRUE(q->classes[1].use_headroom);
  EXPECT_FALSE(q->classes[2].use_headroom);
  EXPECT_EQ(HeadroomProtectedPriority(*q), 500);
  // Set on none (false everywhere): no class may use it.
  q = ParseQosClasses("classes:\n  - {name: LS, priority: 1000, use_headroom: false}\n", "c.yaml");
  ASSERT_TRUE(q.ok()) << q.error().message;
  EXPECT_FALSE(q->classes[0].use_headroom);
  EXPECT_EQ(HeadroomProtectedPriority(*q), std::numeric_limits<int>::max());
  EXPECT_EQ(HeadroomProtectedPriority(DefaultQosClasses()), 1000);
}

struct Bad {
  std::string yaml;
  std::string want;
};

// A stable, readable test name (ctest lists parameterised tests by their printed value).
void PrintTo(const Bad& c, std::ostream* os) {
  for (char ch : c.want) *os << (std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_');
}

class QosYamlBad : public ::testing::TestWithParam<Bad> {};

TEST_P(QosYamlBad, NamesFileLineAndField) {
  Result<QosClasses> q = ParseQosClasses(GetParam().yaml, "c.yaml");
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.error().message.find(GetParam().want), std::string::npos) << q.error().message;
}

INSTANTIATE_TEST_SUITE_P(
    All, QosYamlBad,
    ::testing::Values(Bad{"", "c.yaml:1: field 'classes': missing"},
                      Bad{"classes: []\n", "c.yaml:1: field 'classes': expected a non-empty list"},
                      Bad{"classes:\n  - {name: LS}\n",
                          "c.yaml:2: field 'classes[0].priority': missing"},
                      Bad{"classes:\n  - {name: LS, priority: high}\n",
                          "c.yaml:2: field 'classes[0].priority': expected a number, got 'high'"},
                      Bad{"classes:\n  - {name: LS, priority: 1.5}\n",
                          "field 'classes[0].priority': must be an integer"},
                      Bad{"classes:\n  - {name: LS, priority: 1e12}\n",
                          "field 'classes[0].priority': must be in"},
                      Bad{"classes:\n  - {name: LS, priority: 1, slo_wait_s: -1}\n",
                          "field 'classes[0].slo_wait_s': must be in [0, 1000000000], got -1"},
                      Bad{"classes:\n  - {name: LS, priority: 1, grace_s: 1e99}\n",
                          "field 'classes[0].grace_s': must be in"},
                      Bad{"classes:\n  - {name: LS, priority: 1, preemptible: maybe}\n",
                          "field 'classes[0].preemptible': expected true or false"},
                      Bad{"classes:\n  - {name: LS, priority: 1, use_headroom: 1}\n",
                          "c.yaml:2: field 'classes[0].use_headroom': expected true or false"},
                      Bad{"classes:\n  - {name: LS, priority: 1, color: red}\n",
                          "c.yaml:2: field 'classes[0].color': unknown key"},
                      Bad{"classes:\n  - {name: LS, priority: 1}\n  - {name: LS, priority: 2}\n",
                          "c.yaml:3: field 'classes[1].name': duplicate class 'LS'"},
                      Bad{"classes:\n  - {name: LS, priority: 1}\nfallback: BE\n",
                          "c.yaml:3: field 'fallback': names no class: 'BE'"},
                      Bad{"classes:\n  - {name: LS, priority: [1\n", "c.yaml:3: yaml syntax error"},
                      Bad{"- 1\n- 2\n", "field '(top level)': expected a mapping"}));

}  // namespace
}  // namespace tessera
