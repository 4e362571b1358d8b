#include "controllers/claim_logic.h"

#include <gtest/gtest.h>

#include <map>

namespace draplane::controllers {
namespace {

api::Pod make_pod(const std::string& name, const std::string& uid, const std::string& phase = "Running") {
  api::Pod p;
  p.metadata.name = name;
  p.metadata.namespace_ = "default";
  p.metadata.uid = uid;
  p.status.phase = phase;
  p.spec.nodeName = "node-1";
  return p;
}

api::ResourceClaim make_claim(std::vector<std::pair<std::string, std::string>> reserved, bool finalizer = true) {
  api::ResourceClaim c;
  c.metadata.name = "claim";
  c.metadata.namespace_ = "default";
  c.metadata.uid = "claim-uid";
  if (finalizer) c.metadata.finalizers = {kDeleteProtectionFinalizer};
  c.status.allocation = api::AllocationResult{};
  api::DeviceRequestAllocationResult r;
  r.request = "gpu";
  r.driver = "gpu.nvidia.com";
  r.pool = "node-1";
  r.device = "gpu-0";
  c.status.allocation->devices.results.push_back(r);
  for (auto& [name, uid] : reserved) c.status.reservedFor.push_back({"", "pods", name, uid});
  return c;
}

TEST(ClaimLogic, GenerateNameIsCutTo57) {
  struct Case {
    std::string pod, claim, want;
  };
  const std::string long_pod(60, 'p');
  std::vector<Case> cases = {
      {"train", "gpu", "train-gpu-"},
      // Longer than 57: both cut in proportion (upstream's rule), no trailing '-'.
      {long_pod, "gpu", std::string(52, 'p') + "-gp"},
      {std::string(50, 'a'), "abcdefgh", std::string(47, 'a') + "-abcdefg"},
      {std::string(27, 'a'), std::string(28, 'b'), std::string(27, 'a') + "-" + std::string(28, 'b') + "-"},
      {std::string(28, 'a'), std::string(28, 'b'), std::string(27, 'a') + "-" + std::string(27, 'b')},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.pod + "/" + c.claim);
    EXPECT_EQ(claim_generate_name(c.pod, c.claim), c.want);
    EXPECT_LE(claim_generate_name(c.pod, c.claim).size(), 57u);
  }
}

TEST(ClaimLogic, ClaimFromTemplateCopiesSpecAndMetadata) {
  api::Pod pod = make_pod("train", "pod-uid");
  api::PodResourceClaim pc{"gpus", std::nullopt, std::string("two-gpus")};
  api::ResourceClaimTemplate t;
  t.metadata.name = "two-gpus";
  t.spec.metadata.labels = {{"team", "a"}};
  t.spec.metadata.annotations = {{"note", "x"}};
  api::DeviceRequest r;
  r.name = "gpu";
  r.exactly = api::ExactDeviceRequest{};
  r.exactly->deviceClassName = "gpu.nvidia.com";
  r.exactly->count = 2;
  t.spec.spec.devices.requests.push_back(r);

  api::ResourceClaim c = claim_from_template(pod, pc, t);
  EXPECT_EQ(c.typeMeta.apiVersion, "resource.k8s.io/v1");
  EXPECT_EQ(c.typeMeta.kind, "ResourceClaim");
  EXPECT_EQ(c.metadata.name, "");
  EXPECT_EQ(c.metadata.generateName, "train-gpus-");
  EXPECT_EQ(c.metadata.namespace_, "default");
  EXPECT_EQ(c.metadata.labels, (std::map<std::string, std::string>{{"team", "a"}}));
  EXPECT_EQ(c.metadata.annotations,
            (std::map<std::string, std::string>{{"note", "x"}, {"resource.kubernetes.io/pod-claim-name", "gpus"}}));
  ASSERT_EQ(c.metadata.ownerReferences.size(), 1u);
  const auto& o = c.metadata.ownerReferences[0];
  EXPECT_EQ(o.apiVersion, "v1");
  EXPECT_EQ(o.kind, "Pod");
  EXPECT_EQ(o.name, "train");
  EXPECT_EQ(o.uid, "pod-uid");
  EXPECT_EQ(o.controller, std::optional<bool>(true));
  EXPECT_EQ(o.blockOwnerDeletion, std::optional<bool>(true));
  EXPECT_EQ(c.spec, t.spec.spec);
  EXPECT_FALSE(c.status.allocation.has_value());
}

TEST(ClaimLogic, ClaimNames) {
  api::Pod pod = make_pod("p", "u");
  pod.spec.resourceClaims = {{"a", std::string("shared"), std::nullopt},
                             {"b", std::nullopt, std::string("tmpl")},
                             {"c", std::nullopt, std::string("tmpl")}};
  pod.status.resourceClaimStatuses = {{"b", std::string("p-b-xyz12")}, {"c", std::nullopt}};
  EXPECT_EQ(claim_name_for(pod, pod.spec.resourceClaims[0]), std::optional<std::string>("shared"));
  EXPECT_EQ(claim_name_for(pod, pod.spec.resourceClaims[1]), std::optional<std::string>("p-b-xyz12"));
  EXPECT_EQ(claim_name_for(pod, pod.spec.resourceClaims[2]), std::nullopt);
  pod.status.extendedResourceClaimStatus = api::PodExtendedResourceClaimStatus{{}, "p-extended-resources-abcde"};
  EXPECT_EQ(claim_names_of(pod), (std::vector<std::string>{"shared", "p-b-xyz12", "p-extended-resources-abcde"}));
}

TEST(ClaimLogic, PodDone) {
  struct Case {
    std::string name, phase;
    bool deleting, scheduled, terminal, done;
  };
  std::vector<Case> cases = {
      {"running", "Running", false, true, false, false},
      {"succeeded", "Succeeded", false, true, true, true},
      {"failed", "Failed", false, true, true, true},
      {"deleting-scheduled", "Running", true, true, false, false},
      {"deleting-unscheduled", "Pending", true, false, false, true},
      {"pending", "Pending", false, false, false, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    api::Pod p = make_pod("p", "u", c.phase);
    if (c.deleting) p.metadata.deletionTimestamp = "2026-01-01T00:00:00Z";
    if (!c.scheduled) p.spec.nodeName = "";
    EXPECT_EQ(is_pod_terminal(p), c.terminal);
    EXPECT_EQ(is_pod_done(p), c.done);
  }
}

TEST(ClaimLogic, DecideClaimReservedForCleanup) {
  std::map<std::string, api::Pod> pods = {
      {"live", make_pod("live", "uid-live")},
      {"done", make_pod("done", "uid-done", "Succeeded")},
      {"replaced", make_pod("replaced", "uid-new")},
  };
  PodLookup lookup = [&](const std::string& ns, const std::string& name, const std::string&) -> std::optional<api::Pod> {
    EXPECT_EQ(ns, "default");
    auto it = pods.find(name);
    if (it == pods.end()) return std::nullopt;
    return it->second;
  };
  struct Case {
    std::string name;
    std::vector<std::pair<std::string, std::string>> reserved;
    bool finalizer;
    bool update_status, deallocated, remove_finalizer;
    std::vector<std::string> kept, dropped;
  };
  std::vector<Case> cases = {
      {"all-live", {{"live", "uid-live"}}, true, false, false, false, {"live"}, {}},
      {"one-stale", {{"live", "uid-live"}, {"gone", "uid-gone"}}, true, true, false, false, {"live"},
       {"pod gone (deleted)"}},
      {"all-stale-deallocates",
       {{"gone", "uid-gone"}, {"done", "uid-done"}, {"replaced", "uid-old"}},
       true,
       true,
       true,
       true,
       {},
       {"pod gone (deleted)", "pod done (done)", "pod replaced (replaced)"}},
      {"no-finalizer-keeps-allocation", {{"gone", "uid-gone"}}, false, true, false, false, {}, {"pod gone (deleted)"}},
      {"nothing-reserved", {}, true, false, false, false, {}, {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    ClaimDecision d = decide_claim(make_claim(c.reserved, c.finalizer), lookup);
    EXPECT_EQ(d.update_status, c.update_status);
    EXPECT_EQ(d.remove_finalizer, c.remove_finalizer);
    EXPECT_EQ(!d.status.allocation.has_value(), c.deallocated);
    std::vector<std::string> kept;
    for (const auto& r : d.status.reservedFor) kept.push_back(r.name);
    EXPECT_EQ(kept, c.kept);
    EXPECT_EQ(d.dropped, c.dropped);
    EXPECT_FALSE(d.delete_claim);  // not generated for a pod
  }
}

TEST(ClaimLogic, DecideClaimKeepsAPodGroupsReservationWhileTheGroupExists) {
  api::PodGroup train;
  train.metadata.name = "train";
  train.metadata.uid = "uid-train";
  std::optional<api::PodGroup> group = train;
  PodGroupLookup groups = [&](const std::string& ns, const std::string& name) -> std::optional<api::PodGroup> {
    EXPECT_EQ(ns, "default");
    return name == "train" ? group : std::nullopt;
  };
  PodLookup no_pods = [](const std::string&, const std::string&, const std::string&) -> std::optional<api::Pod> { return std::nullopt; };
  api::ResourceClaim c = make_claim({});
  c.status.reservedFor.push_back({"scheduling.k8s.io", "podgroups", "train", "uid-train"});
  // Its pods may all be gone: the group holds the claim.
  ClaimDecision d = decide_claim(c, no_pods, groups);
  EXPECT_FALSE(d.update_status);
  // Replaced by a group of the same name, then gone: dropped and deallocated.
  group->metadata.uid = "uid-new";
  d = decide_claim(c, no_pods, groups);
  EXPECT_TRUE(d.update_status);
  EXPECT_TRUE(d.status.reservedFor.empty());
  EXPECT_FALSE(d.status.allocation.has_value());
  EXPECT_TRUE(d.remove_finalizer);
  EXPECT_EQ(d.dropped, std::vector<std::string>{"podgroup train (replaced)"});
  group.reset();
  d = decide_claim(c, no_pods, groups);
  EXPECT_EQ(d.dropped, std::vector<std::string>{"podgroup train (deleted)"});
  EXPECT_FALSE(d.delete_claim) << "a group's claim goes with the group (ownerReferences), not here";
  // Without a way to look groups up, such entries are kept as unknown consumers.
  EXPECT_FALSE(decide_claim(c, no_pods).update_status);
}

TEST(ClaimLogic, ClaimFromGroupTemplate) {
  api::PodGroup g;
  g.metadata.name = "train";
  g.metadata.namespace_ = "ml";
  g.metadata.uid = "uid-train";
  api::ResourceClaimTemplate t;
  t.spec.metadata.labels["team"] = "a";
  t.spec.spec.devices.requests.push_back(api::DeviceRequest{});
  api::ResourceClaim c = claim_from_group_template(g, api::PodGroupResourceClaim{"domain", std::nullopt, "t"}, t);
  EXPECT_EQ(c.metadata.generateName, "train-domain-");
  EXPECT_EQ(c.metadata.namespace_, "ml");
  EXPECT_EQ(c.metadata.labels.at("team"), "a");
  EXPECT_EQ(c.metadata.annotations.at(kPodClaimNameAnnotation), "domain");
  EXPECT_EQ(c.metadata.ownerReferences,
            (std::vector<api::OwnerReference>{
                {"scheduling.k8s.io/v1beta1", "PodGroup", "train", "uid-train", true, std::nullopt}}));
  EXPECT_EQ(c.spec.devices.requests.size(), 1u);
}

TEST(ClaimLogic, DecideClaimKeepsNonPodConsumers) {
  api::ResourceClaim c = make_claim({});
  c.status.reservedFor.push_back({"example.com", "widgets", "w", "uid-w"});
  ClaimDecision d = decide_claim(c, [](const std::string&, const std::string&, const std::string&) { return std::nullopt; });
  EXPECT_FALSE(d.update_status);
  EXPECT_EQ(d.status.reservedFor.size(), 1u);
}

TEST(ClaimLogic, DecideClaimDeletesGeneratedClaimOfFinishedPod) {
  struct Case {
    std::string name;
    std::optional<api::Pod> owner;
    bool deleting;
    bool want_delete;
  };
  std::vector<Case> cases = {
      {"owner-running", make_pod("p", "uid-p"), false, false},
      {"owner-succeeded", make_pod("p", "uid-p", "Succeeded"), false, true},
      {"owner-replaced", make_pod("p", "uid-other"), false, true},
      {"owner-gone", std::nullopt, false, true},
      {"already-deleting", make_pod("p", "uid-p", "Failed"), true, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    api::ResourceClaim claim = make_claim({});
    claim.status.allocation.reset();
    claim.metadata.ownerReferences.push_back({"v1", "Pod", "p", "uid-p", true, true});
    if (c.deleting) claim.metadata.deletionTimestamp = "2026-01-01T00:00:00Z";
    ClaimDecision d = decide_claim(claim, [&](const std::string&, const std::string&, const std::string&) { return c.owner; });
    EXPECT_EQ(d.delete_claim, c.want_delete);
  }
}

TEST(ClaimLogic, DeletingUnreservedClaimDropsFinalizer) {
  api::ResourceClaim claim = make_claim({});
  claim.metadata.deletionTimestamp = "2026-01-01T00:00:00Z";
  ClaimDecision d = decide_claim(claim, [](const std::string&, const std::string&, const std::string&) { return std::nullopt; });
  EXPECT_TRUE(d.update_status);
  EXPECT_FALSE(d.status.allocation.has_value());
  EXPECT_TRUE(d.remove_finalizer);
  // Live and unreserved: the scheduler may be between finalizer and allocation.
  api::ResourceClaim live = make_claim({});
  live.status.allocation.reset();
  ClaimDecision d2 = decide_claim(live, [](const std::string&, const std::string&, const std::string&) { return std::nullopt; });
  EXPECT_FALSE(d2.remove_finalizer);
  EXPECT_FALSE(d2.update_status);
}

TEST(ClaimLogic, OwningPodNeedsController) {
  api::ResourceClaim c;
  c.metadata.ownerReferences.push_back({"v1", "Pod", "a", "uid-a", false, true});
  EXPECT_FALSE(owning_pod(c).has_value());
  c.metadata.ownerReferences.push_back({"apps/v1", "ReplicaSet", "r", "uid-r", true, true});
  EXPECT_FALSE(owning_pod(c).has_value());
  c.metadata.ownerReferences.push_back({"v1", "Pod", "b", "uid-b", true, true});
  ASSERT_TRUE(owning_pod(c).has_value());
  EXPECT_EQ(owning_pod(c)->name, "b");
}

}  // namespace
}  // namespace draplane::controllers
