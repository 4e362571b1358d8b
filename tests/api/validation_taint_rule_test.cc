// DeviceTaintRule validation: create, spec update and status update.
#include <gtest/gtest.h>

#include <functional>

#include "api/validation.h"
#include "field_error_lines.h"

namespace draplane::api {
namespace {

// The message up to and including the bad value: the format messages after it are
// the shared name validators' (tested with the kinds that own them).
Lines heads(const FieldErrorList& errs) {
  Lines out;
  for (const auto& e : errs) {
    std::string s = e.to_string();
    size_t quote = s.find("\": ");
    out.push_back(quote == std::string::npos ? s : s.substr(0, quote + 1));
  }
  return out;
}

DeviceTaintRule rule() {
  DeviceTaintRule r;
  r.metadata.name = "gpu-maintenance";
  r.spec.deviceSelector = DeviceTaintSelector{"gpu.nvidia.com", "node-1", "gpu-0"};
  r.spec.taint = DeviceTaint{"example.com/maintenance", "planned", "NoExecute", ""};
  return r;
}

Condition condition(std::string type) {
  return Condition{std::move(type), "True", 1, "2026-12-06T10:00:00Z", "PodsPendingEviction", "1 pod"};
}

TEST(ValidateDeviceTaintRule, Create) {
  struct Case {
    const char* name;
    std::function<void(DeviceTaintRule&)> mutate;
    Lines want;
  } cases[] = {
      {"valid", [](DeviceTaintRule&) {}, {}},
      {"no selector (matches nothing)", [](DeviceTaintRule& r) { r.spec.deviceSelector.reset(); }, {}},
      {"empty selector (matches all)", [](DeviceTaintRule& r) { r.spec.deviceSelector = DeviceTaintSelector{}; }, {}},
      {"effect None", [](DeviceTaintRule& r) { r.spec.taint.effect = "None"; }, {}},
      {"namespace forbidden", [](DeviceTaintRule& r) { r.metadata.namespace_ = "default"; },
       {"metadata.namespace: Forbidden: not allowed on this type"}},
      {"name required", [](DeviceTaintRule& r) { r.metadata.name.clear(); },
       {"metadata.name: Required value: name or generateName is required"}},
      {"effect required", [](DeviceTaintRule& r) { r.spec.taint.effect.clear(); },
       {"spec.taint.effect: Required value"}},
      {"effect unsupported", [](DeviceTaintRule& r) { r.spec.taint.effect = "PreferNoSchedule"; },
       {"spec.taint.effect: Unsupported value: \"PreferNoSchedule\": supported values: \"NoExecute\", "
        "\"NoSchedule\", \"None\""}},
  };
  for (const auto& c : cases) {
    DeviceTaintRule r = rule();
    c.mutate(r);
    EXPECT_EQ(lines(validate_device_taint_rule(r)), c.want) << c.name;
  }
}

TEST(ValidateDeviceTaintRule, SelectorAndTaintNames) {
  DeviceTaintRule r = rule();
  r.spec.deviceSelector = DeviceTaintSelector{"GPU_", "Pool_1", "Dev!"};
  r.spec.taint.key = "bad key";
  r.spec.taint.value = "not a value!";
  EXPECT_EQ(heads(validate_device_taint_rule(r)),
            (Lines{"spec.deviceSelector.driver: Invalid value: \"GPU_\"",
                   "spec.deviceSelector.pool: Invalid value: \"Pool_1\"",
                   "spec.deviceSelector.device: Invalid value: \"Dev!\"", "spec.taint.key: Invalid value: \"bad key\"",
                   "spec.taint.value: Invalid value: \"not a value!\""}));
}

TEST(ValidateDeviceTaintRule, UpdateChecksTheEffectOnlyWhenItChanges) {
  DeviceTaintRule old = rule();
  old.metadata.resourceVersion = "5";
  old.spec.taint.effect = "Retired";  // stored before the effect was restricted
  DeviceTaintRule now = old;
  now.spec.taint.value = "extended";
  EXPECT_EQ(lines(validate_device_taint_rule_update(now, old)), Lines{});
  now.spec.taint.effect = "Sometimes";
  EXPECT_EQ(lines(validate_device_taint_rule_update(now, old)),
            (Lines{"spec.taint.effect: Unsupported value: \"Sometimes\": supported values: \"NoExecute\", "
                   "\"NoSchedule\", \"None\""}));
  now.spec.taint.effect = "NoSchedule";
  now.metadata.name = "renamed";
  EXPECT_EQ(lines(validate_device_taint_rule_update(now, old)),
            (Lines{"metadata.name: Invalid value: \"renamed\": field is immutable"}));
}

TEST(ValidateDeviceTaintRule, StatusUpdate) {
  DeviceTaintRule old = rule();
  old.metadata.resourceVersion = "5";
  DeviceTaintRule now = old;
  now.status.conditions = {condition("EvictionInProgress")};
  EXPECT_EQ(lines(validate_device_taint_rule_status_update(now, old)), Lines{});

  now.status.conditions.push_back(condition("EvictionInProgress"));
  now.status.conditions[0].status = "Maybe";
  EXPECT_EQ(lines(validate_device_taint_rule_status_update(now, old)),
            (Lines{"status.conditions[0].status: Unsupported value: \"Maybe\": supported values: \"False\", "
                   "\"True\", \"Unknown\"",
                   "status.conditions[1].type: Duplicate value: \"EvictionInProgress\""}));

  now.status.conditions.clear();
  for (int i = 0; i < 9; ++i) now.status.conditions.push_back(condition("example.com/c" + std::to_string(i)));
  EXPECT_EQ(lines(validate_device_taint_rule_status_update(now, old)),
            (Lines{"status.conditions: Too many: 9: must have at most 8 items"}));
}

}  // namespace
}  // namespace draplane::api
