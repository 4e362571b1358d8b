// The device taint eviction controller's decisions (device_taint_eviction_logic.h):
// which pods go when, and what a DeviceTaintRule's status says.
#include "controllers/device_taint_eviction_logic.h"

#include <gtest/gtest.h>

#include "common/rfc3339.h"

namespace draplane::controllers {
namespace {

constexpr const char* kT0 = "2026-12-01T10:00:00Z";
WallTime t0() { return *common::parse_rfc3339_time(kT0); }

api::DeviceTaint taint(const std::string& key, const std::string& effect = "NoExecute", const char* added = kT0) {
  return api::DeviceTaint{key, "", effect, added};
}

api::ResourceSlice slice(std::vector<std::pair<std::string, std::vector<api::DeviceTaint>>> devices,
                         int64_t generation = 1, const std::string& name = "s") {
  api::ResourceSlice s;
  s.metadata.name = name;
  s.spec.driver = "gpu.nvidia.com";
  s.spec.pool = api::ResourcePool{"node-1", generation, 1};
  for (auto& [n, taints] : devices) {
    api::Device d;
    d.name = n;
    d.taints = std::move(taints);
    s.spec.devices.push_back(std::move(d));
  }
  return s;
}

api::DeviceTaintRule rule(const std::string& name, std::optional<std::string> device, const std::string& effect = "NoExecute") {
  api::DeviceTaintRule r;
  r.metadata.name = name;
  r.metadata.uid = name + "-uid";
  r.metadata.generation = 1;
  r.spec.deviceSelector = api::DeviceTaintSelector{std::nullopt, std::nullopt, std::move(device)};
  r.spec.taint = api::DeviceTaint{"maint", name, effect, kT0};
  return r;
}

api::DeviceToleration toleration(const std::string& key, std::optional<int64_t> seconds,
                                 const std::string& effect = "NoExecute") {
  return api::DeviceToleration{key, "Exists", "", effect, seconds};
}

// Claim "default/<name>" allocated `device` with `tolerations`, reserved for `pods` (name, uid).
api::ResourceClaim claim(const std::string& name, const std::string& device,
                         std::vector<api::DeviceToleration> tolerations = {},
                         std::vector<std::pair<std::string, std::string>> pods = {{"p", "p-uid"}}) {
  api::ResourceClaim c;
  c.metadata.name = name;
  c.metadata.namespace_ = "default";
  c.status.allocation = api::AllocationResult{};
  api::DeviceRequestAllocationResult r;
  r.request = "gpu";
  r.driver = "gpu.nvidia.com";
  r.pool = "node-1";
  r.device = device;
  r.tolerations = std::move(tolerations);
  c.status.allocation->devices.results.push_back(r);
  for (auto& [n, uid] : pods) c.status.reservedFor.push_back({"", "pods", n, uid});
  return c;
}

api::Pod pod(const std::string& name, std::vector<std::string> claims) {
  api::Pod p;
  p.metadata.name = name;
  p.metadata.namespace_ = "default";
  p.metadata.uid = name + "-uid";
  p.spec.nodeName = "node-1";
  p.status.phase = "Running";
  for (const auto& c : claims) p.spec.resourceClaims.push_back({c, c, std::nullopt});
  return p;
}

std::map<std::string, api::ResourceClaim> by_key(std::vector<api::ResourceClaim> cs) {
  std::map<std::string, api::ResourceClaim> out;
  for (auto& c : cs) out.emplace("default/" + c.metadata.name, std::move(c));
  return out;
}

std::map<std::string, api::Pod> pods_by_key(std::vector<api::Pod> ps) {
  std::map<std::string, api::Pod> out;
  for (auto& p : ps) out.emplace("default/" + p.metadata.name, std::move(p));
  return out;
}

// Seconds after t0 at which the pod is evicted; -1 when never.
int64_t due(const api::Pod& p, const std::map<std::string, api::ResourceClaim>& claims, const TaintInventory& inv) {
  auto e = pod_eviction(p, claims, inv);
  if (!e) return -1;
  return std::chrono::duration_cast<std::chrono::seconds>(e->when - t0()).count();
}

TEST(DeviceTaintEviction, SliceTaintEvictsAtTimeAdded) {
  auto inv = taint_inventory({slice({{"gpu-0", {taint("xid")}}, {"gpu-1", {}}})}, {});
  EXPECT_EQ(due(pod("p", {"c"}), by_key({claim("c", "gpu-0")}), inv), 0);
  EXPECT_EQ(due(pod("p", {"c"}), by_key({claim("c", "gpu-1")}), inv), -1);
  // NoSchedule and None never evict.
  auto soft = taint_inventory({slice({{"gpu-0", {taint("a", "NoSchedule"), taint("b", "None")}}})}, {});
  EXPECT_EQ(due(pod("p", {"c"}), by_key({claim("c", "gpu-0")}), soft), -1);
  // Only the pool's newest generation counts.
  auto stale = taint_inventory({slice({{"gpu-0", {taint("xid")}}}, 1, "old"), slice({{"gpu-0", {}}}, 2, "new")}, {});
  EXPECT_EQ(due(pod("p", {"c"}), by_key({claim("c", "gpu-0")}), stale), -1);
}

TEST(DeviceTaintEviction, TolerationSeconds) {
  auto inv = taint_inventory({slice({{"gpu-0", {taint("xid")}}})}, {});
  auto p = pod("p", {"c"});
  EXPECT_EQ(due(p, by_key({claim("c", "gpu-0", {toleration("xid", std::nullopt)})}), inv), -1) << "for ever";
  EXPECT_EQ(due(p, by_key({claim("c", "gpu-0", {toleration("xid", 30)})}), inv), 30);
  EXPECT_EQ(due(p, by_key({claim("c", "gpu-0", {toleration("xid", 30), toleration("", 10)})}), inv), 10)
      << "the smallest matching tolerationSeconds";
  EXPECT_EQ(due(p, by_key({claim("c", "gpu-0", {toleration("xid", -5)})}), inv), 0) << "negative counts as 0";
  EXPECT_EQ(due(p, by_key({claim("c", "gpu-0", {toleration("other", std::nullopt)})}), inv), 0) << "other key";
  // Upstream counts only tolerations with effect NoExecute.
  EXPECT_EQ(due(p, by_key({claim("c", "gpu-0", {toleration("xid", std::nullopt, "")})}), inv), 0);
  // A later timeAdded moves the eviction with it.
  auto later = taint_inventory({slice({{"gpu-0", {taint("xid", "NoExecute", "2026-12-01T10:01:00Z")}}})}, {});
  EXPECT_EQ(due(p, by_key({claim("c", "gpu-0", {toleration("xid", 30)})}), later), 90);
}

TEST(DeviceTaintEviction, SeveralClaimsPerPod) {
  auto inv = taint_inventory({slice({{"gpu-0", {}}, {"gpu-1", {taint("xid")}}, {"gpu-2", {taint("ecc")}}})}, {});
  auto p = pod("p", {"a", "b", "c"});
  // One untolerated taint in any claim evicts; the earliest claim decides.
  EXPECT_EQ(due(p, by_key({claim("a", "gpu-0"), claim("b", "gpu-1", {toleration("xid", 60)}), claim("c", "gpu-2", {toleration("ecc", 20)})}), inv), 20);
  EXPECT_EQ(due(p, by_key({claim("a", "gpu-0"), claim("b", "gpu-1", {toleration("xid", std::nullopt)}), claim("c", "gpu-2")}), inv), 0);
  EXPECT_EQ(due(p, by_key({claim("a", "gpu-0"), claim("b", "gpu-1", {toleration("", std::nullopt)}), claim("c", "gpu-2", {toleration("", std::nullopt)})}), inv), -1);
  auto e = pod_eviction(p, by_key({claim("a", "gpu-0"), claim("b", "gpu-1"), claim("c", "gpu-2")}), inv);
  ASSERT_TRUE(e);
  ASSERT_EQ(e->reasons.size(), 2u);
  EXPECT_EQ(describe(e->reasons[0]), "gpu.nvidia.com/node-1/gpu-1 xid:NoExecute");
  EXPECT_EQ(describe(e->reasons[1]), "gpu.nvidia.com/node-1/gpu-2 ecc:NoExecute");
}

TEST(DeviceTaintEviction, OnlyScheduledPodsTheClaimIsReservedFor) {
  auto inv = taint_inventory({slice({{"gpu-0", {taint("xid")}}})}, {});
  auto claims = by_key({claim("c", "gpu-0")});
  auto unscheduled = pod("p", {"c"});
  unscheduled.spec.nodeName = "";
  EXPECT_EQ(due(unscheduled, claims, inv), -1);
  auto deleting = pod("p", {"c"});
  deleting.metadata.deletionTimestamp = kT0;
  EXPECT_EQ(due(deleting, claims, inv), -1);
  auto replaced = pod("p", {"c"});
  replaced.metadata.uid = "other-uid";
  EXPECT_EQ(due(replaced, claims, inv), -1) << "not the pod the claim is reserved for";
  auto done = pod("p", {"c"});
  done.status.phase = "Succeeded";
  EXPECT_EQ(due(done, claims, inv), -1);
  // A claim from a template counts through pod.status.resourceClaimStatuses and its owner.
  auto templated = pod("p", {});
  templated.spec.resourceClaims.push_back({"gpu", std::nullopt, "tmpl"});
  EXPECT_EQ(due(templated, claims, inv), -1) << "not created yet";
  templated.status.resourceClaimStatuses.push_back({"gpu", "c"});
  EXPECT_EQ(due(templated, claims, inv), -1) << "not owned by the pod";
  auto owned = claims;
  owned.at("default/c").metadata.ownerReferences.push_back({"v1", "Pod", "p", "p-uid", true, true});
  EXPECT_EQ(due(templated, owned, inv), 0);
}

TEST(DeviceTaintEviction, RuleTaintsAndTheirRemoval) {
  std::vector<api::ResourceSlice> slices = {slice({{"gpu-0", {}}, {"gpu-1", {}}})};
  auto pods = pods_by_key({pod("p", {"c"}), pod("q", {"d"})});
  auto claims = by_key({claim("c", "gpu-0"), claim("d", "gpu-1", {toleration("maint", std::nullopt)}, {{"q", "q-uid"}})});
  // The rule evicts the untolerating pod and spares the tolerating one.
  auto plan = plan_evictions(pods, claims, taint_inventory(slices, {rule("drain", std::nullopt)}));
  ASSERT_EQ(plan.size(), 1u);
  ASSERT_TRUE(plan.count("default/p"));
  EXPECT_EQ(plan.at("default/p").when, t0());
  ASSERT_EQ(plan.at("default/p").reasons.size(), 1u);
  EXPECT_EQ(describe(plan.at("default/p").reasons[0]),
            "gpu.nvidia.com/node-1/gpu-0 maint=drain:NoExecute (DeviceTaintRule drain)");
  EXPECT_EQ(plan.at("default/p").reasons[0].rule_uid, "drain-uid");
  // A rule for another device, a NoSchedule rule, a deleted rule: nothing to do
  // (a pending eviction is cancelled when the next plan lacks the pod).
  EXPECT_TRUE(plan_evictions(pods, claims, taint_inventory(slices, {rule("drain", "gpu-9")})).empty());
  EXPECT_TRUE(plan_evictions(pods, claims, taint_inventory(slices, {rule("drain", std::nullopt, "NoSchedule")})).empty());
  EXPECT_TRUE(plan_evictions(pods, claims, taint_inventory(slices, {})).empty());
}

TEST(DeviceTaintEviction, TaintRemovedBeforeTheDeadlineCancels) {
  auto p = pod("p", {"c"});
  auto claims = by_key({claim("c", "gpu-0", {toleration("xid", 300)})});
  auto pods = pods_by_key({p});
  auto tainted = plan_evictions(pods, claims, taint_inventory({slice({{"gpu-0", {taint("xid")}}}, 1)}, {}));
  ASSERT_EQ(tainted.size(), 1u);
  EXPECT_EQ(tainted.at("default/p").when, t0() + std::chrono::seconds(300));
  // The driver publishes generation 2 without the taint: the plan drops the pod.
  auto healed = plan_evictions(pods, claims, taint_inventory({slice({{"gpu-0", {}}}, 2)}, {}));
  EXPECT_TRUE(healed.empty());
}

TEST(DeviceTaintEviction, RuleStatusCondition) {
  std::vector<api::ResourceSlice> slices = {slice({{"gpu-0", {}}, {"gpu-1", {}}})};
  auto pods = pods_by_key({pod("p", {"c"}), pod("q", {"d"})});
  auto claims = by_key({claim("c", "gpu-0"), claim("d", "gpu-1", {}, {{"q", "q-uid"}})});
  auto r = rule("drain", "gpu-0");

  auto counts = rule_counts(r, pods, claims, slices, {r}, 0);
  EXPECT_EQ(counts.pending_pods, 1);
  auto c = rule_condition(r, counts);
  EXPECT_EQ(c.type, "EvictionInProgress");
  EXPECT_EQ(c.status, "True");
  EXPECT_EQ(c.reason, "PodsPendingEviction");
  EXPECT_EQ(c.message, "1 pod needs to be evicted in 1 namespace.");
  EXPECT_EQ(c.observedGeneration, 1);

  // Once evicted (the pod gone): Completed, with the count.
  pods.erase("default/p");
  c = rule_condition(r, rule_counts(r, pods, claims, slices, {r}, 1));
  EXPECT_EQ(c.status, "False");
  EXPECT_EQ(c.reason, "Completed");
  EXPECT_EQ(c.message, "1 pod evicted since starting the controller.");
  EXPECT_EQ(rule_condition(r, RuleCounts{2, 2, 3, 0, 0}).message,
            "2 pods need to be evicted in 2 different namespaces. 3 pods evicted since starting the controller.");
  EXPECT_EQ(rule_condition(r, RuleCounts{}).reason, "NotStarted");

  auto soft = rule("drain", "gpu-0", "NoSchedule");
  c = rule_condition(soft, rule_counts(soft, pods, claims, slices, {soft}, 0));
  EXPECT_EQ(c.reason, "OtherEffect");
  EXPECT_EQ(c.message, "Eviction only happens for the NoExecute effect.");

  // Effect None: what NoExecute would do.
  pods = pods_by_key({pod("p", {"c"}), pod("q", {"d"})});
  auto preview = rule("drain", std::nullopt, "None");
  c = rule_condition(preview, rule_counts(preview, pods, claims, slices, {preview}, 0));
  EXPECT_EQ(c.reason, "NoEffect");
  EXPECT_EQ(c.status, "False");
  EXPECT_EQ(c.message,
            "2 published devices selected. 2 allocated devices selected. 2 pods would be evicted in 1 namespace if the "
            "effect was NoExecute. This information will not be updated again. Recreate the DeviceTaintRule to trigger "
            "an update.");
}

TEST(DeviceTaintEviction, RuleStatusUpdate) {
  auto r = rule("drain", "gpu-0");
  auto c = rule_condition(r, RuleCounts{1, 1, 0, 0, 0});
  auto first = updated_rule_status(r, c, "2026-12-01T10:00:05Z");
  ASSERT_TRUE(first);
  ASSERT_EQ(first->conditions.size(), 1u);
  EXPECT_EQ(first->conditions[0].lastTransitionTime, "2026-12-01T10:00:05Z");
  r.status = *first;
  EXPECT_FALSE(updated_rule_status(r, c, "2026-12-01T10:00:09Z")) << "nothing changed";
  auto done = updated_rule_status(r, rule_condition(r, RuleCounts{0, 0, 1, 0, 0}), "2026-12-01T10:00:20Z");
  ASSERT_TRUE(done);
  ASSERT_EQ(done->conditions.size(), 1u);
  EXPECT_EQ(done->conditions[0].reason, "Completed");
  EXPECT_EQ(done->conditions[0].lastTransitionTime, "2026-12-01T10:00:20Z");
}

TEST(DeviceTaintEviction, DisruptionTargetCondition) {
  api::PodStatus st;
  st.conditions.push_back({"Ready", "True", "", "2026-12-01T09:00:00Z", "", ""});
  auto out = with_disruption_target(st, kT0);
  ASSERT_TRUE(out);
  ASSERT_EQ(out->conditions.size(), 2u);
  EXPECT_EQ(out->conditions[1],
            (api::PodCondition{"DisruptionTarget", "True", "", kT0, "DeletionByDeviceTaintManager",
                               "Device Taint manager: deleting due to NoExecute taint"}));
  EXPECT_FALSE(with_disruption_target(*out, "2026-12-01T11:00:00Z")) << "already there";
}

}  // namespace
}  // namespace draplane::controllers
