// ResourceClaims shared by a PodGroup (KEP-5729) through the scheduler: one
// allocation for the whole group, reserved for the group, never per member.
#include <gtest/gtest.h>

#include "api/pod_group_claims.h"
#include "api/workload.h"
#include "harness.h"

namespace draplane::sched::group_claims_test {
namespace {

using namespace ::draplane::sched::testing;  // NOLINT

const api::ResourceClaimConsumerReference kTrainGroup{"scheduling.k8s.io", "podgroups", "train", "uid-train"};

api::PodGroup gang(const std::string& name, int min_count, std::vector<api::PodGroupResourceClaim> claims) {
  api::PodGroup g = pod_group(name, min_count);
  g.spec.resourceClaims = std::move(claims);
  return g;
}

api::PodGroupResourceClaim named(const std::string& entry, const std::string& claim_name) {
  return api::PodGroupResourceClaim{entry, claim_name, std::nullopt};
}

// A member of `group` with the entries `shared`, and (`own`) its own one-GPU
// claim `name`.
api::Pod member(const std::string& group, const std::string& name, const std::vector<api::PodResourceClaim>& shared,
                bool own = true) {
  api::Pod p = group_member(group, name);
  if (!own) {
    p.spec.resourceClaims.clear();
    p.spec.containers[0].resources.claims.clear();
  }
  for (const auto& e : shared) {
    p.spec.resourceClaims.push_back(e);
    p.spec.containers[0].resources.claims.push_back(api::ResourceClaimRef{e.name, ""});
  }
  return p;
}

api::PodResourceClaim entry(const std::string& name, const std::string& claim_name) {
  api::PodResourceClaim e;
  e.name = name;
  e.resourceClaimName = claim_name;
  return e;
}

void two_nodes_of_four(Harness& h) {
  h.add(gpu_class());
  for (const char* n : {"n1", "n2"}) {
    h.add(node(n));
    h.add(gpu_slice(n, 4));
  }
}

TEST(GroupClaims, OneAllocationReservedForTheGroupAndMembersFollowIt) {
  Harness h;
  two_nodes_of_four(h);
  h.add(gang("train", 2, {named("domain", "domain")}));
  h.add(claim("domain", 2));
  for (const char* n : {"w0", "w1"}) {
    h.add(claim(n));
    h.add(member("train", n, {entry("domain", "domain")}));
  }
  h.run();
  const std::string node = h.pod("w0").spec.nodeName;
  ASSERT_FALSE(node.empty()) << h.condition_message("w0");
  // The group's claim pins every member to where its devices are.
  EXPECT_EQ(h.pod("w1").spec.nodeName, node);
  const api::ResourceClaim domain = h.claim("domain");
  ASSERT_TRUE(domain.status.allocation);
  EXPECT_EQ(domain.status.allocation->devices.results.size(), 2u);
  EXPECT_EQ(domain.status.reservedFor, std::vector<api::ResourceClaimConsumerReference>{kTrainGroup})
      << "reserved for the group, not for each member";
  // The members' own claims are theirs.
  EXPECT_EQ(h.claim("w0").status.reservedFor,
            (std::vector<api::ResourceClaimConsumerReference>{{"", "pods", "w0", "uid-w0"}}));
  EXPECT_EQ(h.sched.cache().free_devices(node), 0);
}

TEST(GroupClaims, TheGroupsClaimAndTheMembersOwnMustFitOnOneNode) {
  Harness h;
  two_nodes_of_four(h);
  h.add(gang("train", 3, {named("domain", "domain")}));
  h.add(claim("domain", 2));
  for (const char* n : {"w0", "w1", "w2"}) {
    h.add(claim(n));
    h.add(member("train", n, {entry("domain", "domain")}));
  }
  h.run();
  // 2 + 3 GPUs on one node of 4: the gang waits and holds nothing.
  for (const char* n : {"w0", "w1", "w2"}) EXPECT_EQ(h.pod(n).spec.nodeName, "") << n;
  EXPECT_FALSE(h.claim("domain").status.allocation);
  EXPECT_EQ(h.sched.cache().free_devices("n1") + h.sched.cache().free_devices("n2"), 8);
}

TEST(GroupClaims, AnEntryThatDiffersFromTheGroupsIsThePodsOwn) {
  Harness h;
  two_nodes_of_four(h);
  h.add(gang("train", 1, {named("domain", "domain")}));
  h.add(claim("domain"));
  h.add(claim("other"));
  h.add(claim("w0"));
  // Same entry name, another claim: not the group's (every field must be equal).
  h.add(member("train", "w0", {entry("domain", "other")}));
  h.run();
  ASSERT_FALSE(h.pod("w0").spec.nodeName.empty()) << h.condition_message("w0");
  EXPECT_EQ(h.claim("other").status.reservedFor,
            (std::vector<api::ResourceClaimConsumerReference>{{"", "pods", "w0", "uid-w0"}}));
  EXPECT_FALSE(h.claim("domain").status.allocation);
}

TEST(GroupClaims, ALaterMemberUsesTheGroupsReservationWithoutAWrite) {
  Harness h;
  two_nodes_of_four(h);
  h.add(gang("train", 1, {named("domain", "domain")}));
  h.add(claim("domain", 2));
  h.add(claim("w0"));
  h.add(member("train", "w0", {entry("domain", "domain")}));
  h.run();
  const std::string node = h.pod("w0").spec.nodeName;
  ASSERT_FALSE(node.empty());
  const std::string rv = h.claim("domain").metadata.resourceVersion;
  h.add(claim("w1"));
  h.add(member("train", "w1", {entry("domain", "domain")}));
  h.run();
  EXPECT_EQ(h.pod("w1").spec.nodeName, node);
  EXPECT_EQ(h.claim("domain").metadata.resourceVersion, rv) << "already the group's: nothing to write";
  EXPECT_EQ(h.claim("domain").status.reservedFor, std::vector<api::ResourceClaimConsumerReference>{kTrainGroup});
}

TEST(GroupClaims, GeneratedClaimMustBeTheGroupsOrThePods) {
  Harness h;
  two_nodes_of_four(h);
  api::PodGroupResourceClaim tmpl{"domain", std::nullopt, std::string("domain-tmpl")};
  h.add(gang("train", 1, {tmpl}));
  // Made by the claim controller for the group, named in the member's status.
  api::ResourceClaim made = claim("train-domain-abcde", 2);
  made.metadata.ownerReferences.push_back(
      api::OwnerReference{"scheduling.k8s.io/v1beta1", "PodGroup", "train", "uid-train", true, std::nullopt});
  h.add(made);
  api::ResourceClaim foreign = claim("eval-domain-fghij", 2);
  foreign.metadata.ownerReferences.push_back(
      api::OwnerReference{"scheduling.k8s.io/v1beta1", "PodGroup", "eval", "uid-eval", true, std::nullopt});
  h.add(foreign);
  api::PodResourceClaim e;
  e.name = "domain";
  e.resourceClaimTemplateName = "domain-tmpl";
  api::Pod w0 = member("train", "w0", {e}, /*own=*/false);  // only the group's claim
  w0.status.resourceClaimStatuses = {{"domain", std::string("train-domain-abcde")}};
  api::Pod w1 = w0;
  w1.metadata.name = "w1";
  w1.metadata.uid.clear();
  w1.status.resourceClaimStatuses = {{"domain", std::string("eval-domain-fghij")}};
  h.add(w0);
  h.add(w1);
  h.run();
  ASSERT_FALSE(h.pod("w0").spec.nodeName.empty()) << h.condition_message("w0");
  EXPECT_EQ(h.claim("train-domain-abcde").status.reservedFor,
            std::vector<api::ResourceClaimConsumerReference>{kTrainGroup});
  // Another group's claim is not this pod's to use.
  EXPECT_EQ(h.pod("w1").spec.nodeName, "");
  EXPECT_NE(h.condition_message("w1").find("ResourceClaim default/eval-domain-fghij was not created for pod "
                                           "default/w1 (neither pod nor PodGroup train is the owner)"),
            std::string::npos)
      << h.condition_message("w1");
}

// The use KEP-5729 exists for: one device standing for a topology domain (an
// NVLink domain across nodes, published with a node selector) is claimed once
// for the gang, and every member lands inside that domain, on any of its nodes.
// (Members are placed one by one, as upstream: the domain is where the first
// lands; docs/compat.md.)
TEST(GroupClaims, AGangSharesOneTopologyDomainAcrossNodes) {
  Harness h;
  h.add(gpu_class());
  api::DeviceClass domains;
  domains.metadata.name = "nvlink-domain";
  domains.spec.selectors.push_back(api::DeviceSelector{
      api::CELDeviceSelector{"device.attributes['gpu.nvidia.com'].type == 'domain'"}});
  h.add(domains);
  // n1 and n2 form domain "a", n3 and n4 domain "b"; n1, n2 and n3 are taken by others.
  for (const auto& [n, d] : std::vector<std::pair<std::string, std::string>>{
           {"n1", "a"}, {"n2", "a"}, {"n3", "b"}, {"n4", "b"}}) {
    h.add(node(n, {{"nvlink", d}}));
    h.add(gpu_slice(n, 4));
  }
  for (const std::string d : {"a", "b"}) {
    api::ResourceSlice s;
    s.metadata.name = "domain-" + d;
    s.spec.driver = kDriver;
    s.spec.pool = api::ResourcePool{"domain-" + d, 1, 1};
    s.spec.nodeSelector = api::NodeSelector{{api::NodeSelectorTerm{{{"nvlink", "In", {d}}}, {}}}};
    api::Device dev;
    dev.name = "domain";
    dev.attributes["type"].string_ = "domain";
    s.spec.devices.push_back(dev);
    h.add(s);
  }
  for (const char* n : {"n1", "n2", "n3"}) {
    const std::string name = std::string("busy-") + n;
    h.add(claim(name, 4));
    api::Pod p = pod(name, {name});
    p.spec.nodeSelector["kubernetes.io/hostname"] = n;
    h.add(p);
  }
  h.run();
  h.add(gang("train", 2, {named("domain", "domain")}));
  h.add(claim("domain", 1, "nvlink-domain"));
  for (const char* n : {"w0", "w1"}) {
    h.add(claim(n, 4));
    h.add(member("train", n, {entry("domain", "domain")}));
  }
  h.run();
  // Only n4 is free: one member would fit, the gang does not.
  EXPECT_EQ(h.pod("w0").spec.nodeName, "");
  EXPECT_FALSE(h.claim("domain").status.allocation);
  // n3 frees: domain b has room for both.
  api::ResourceClaim busy = h.claim("busy-n3");
  busy.status = {};
  h.sched.handle(Event{Event::Op::kDelete, h.pod("busy-n3")});
  h.api.pods.erase("default/busy-n3");
  h.add(busy);
  h.clock.advance(std::chrono::seconds(2));
  h.run();
  std::set<std::string> nodes{h.pod("w0").spec.nodeName, h.pod("w1").spec.nodeName};
  EXPECT_EQ(nodes, (std::set<std::string>{"n3", "n4"}));
  ASSERT_TRUE(h.claim("domain").status.allocation);
  EXPECT_EQ(h.claim("domain").status.allocation->devices.results.at(0).pool, "domain-b");
  EXPECT_EQ(h.claim("domain").status.reservedFor, std::vector<api::ResourceClaimConsumerReference>{kTrainGroup});
}

// A claim reserved for a PodGroup stays allocated while the group exists
// (KEP-5729): evicting its members frees nothing of it, so they are no victims
// for devices only that claim holds; a pod's own claim still is.
TEST(GroupClaims, EvictingMembersDoesNotFreeTheGroupsClaim) {
  Harness h;
  h.add(gpu_class());
  h.add(node("n1"));
  h.add(gpu_slice("n1", 3));
  h.add(gang("train", 1, {named("domain", "domain")}));
  h.add(claim("domain", 2));
  h.add(claim("w0"));
  api::Pod w0 = member("train", "w0", {entry("domain", "domain")});
  w0.spec.priority = 0;
  h.add(w0);
  h.run();
  ASSERT_EQ(h.pod("w0").spec.nodeName, "n1") << h.condition_message("w0");
  ASSERT_EQ(h.sched.cache().free_devices("n1"), 0);
  // Needs two GPUs: only the group's claim could give them, and it is not w0's to give.
  h.add(claim("urgent", 2));
  api::Pod urgent = pod("urgent", {"urgent"});
  urgent.spec.priority = 1000;
  h.add(urgent);
  h.run();
  EXPECT_EQ(h.pod("w0").metadata.deletionTimestamp, "") << "evicting w0 would free one GPU, not two";
  EXPECT_EQ(h.pod("urgent").spec.nodeName, "");
  // Needs one GPU: w0's own claim gives it.
  h.add(claim("small", 1));
  api::Pod small = pod("small", {"small"});
  small.spec.priority = 1000;
  h.add(small);
  h.run();
  EXPECT_NE(h.pod("w0").metadata.deletionTimestamp, "");
  EXPECT_TRUE(h.claim("domain").status.allocation) << "still the group's";
}

}  // namespace
}  // namespace draplane::sched::group_claims_test
