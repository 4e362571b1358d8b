#include <gtest/gtest.h>

#include "node/kubelet_pod.h"

namespace draplane::node {
namespace {

using Kind = ContainerState::Kind;

ContainerState cs(Kind k, int code = 0, int restarts = 0) {
  ContainerState s;
  s.name = "c";
  s.kind = k;
  s.exit_code = code;
  s.restart_count = restarts;
  return s;
}

TEST(KubeletPod, Phase) {
  struct Case {
    std::string name, policy;
    std::vector<ContainerState> states;
    std::string want;
  };
  std::vector<Case> cases = {
      {"none", "Never", {}, "Pending"},
      {"creating", "Never", {cs(Kind::kWaiting)}, "Pending"},
      {"running", "Never", {cs(Kind::kRunning)}, "Running"},
      {"one-done-one-running", "Never", {cs(Kind::kTerminated), cs(Kind::kRunning)}, "Running"},
      {"succeeded", "Never", {cs(Kind::kTerminated), cs(Kind::kTerminated)}, "Succeeded"},
      {"failed", "Never", {cs(Kind::kTerminated), cs(Kind::kTerminated, 3)}, "Failed"},
      {"always-restarts", "Always", {cs(Kind::kTerminated)}, "Running"},
      {"default-is-always", "", {cs(Kind::kTerminated)}, "Running"},
      {"onfailure-success", "OnFailure", {cs(Kind::kTerminated)}, "Succeeded"},
      {"onfailure-failure-restarts", "OnFailure", {cs(Kind::kTerminated, 1)}, "Running"},
      {"waiting-after-restart", "Always", {cs(Kind::kWaiting, 0, 2)}, "Running"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(pod_phase(c.policy, c.states), c.want);
  }
}

api::Pod pod_with_claims() {
  api::Pod p;
  p.metadata.name = "p";
  p.metadata.namespace_ = "default";
  p.metadata.uid = "pod-uid";
  p.spec.resourceClaims = {{"direct", std::string("shared"), std::nullopt},
                           {"tmpl", std::nullopt, std::string("one-gpu")}};
  return p;
}

TEST(KubeletPod, ClaimRefs) {
  api::Pod p = pod_with_claims();
  auto r = pod_claim_refs(p);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Code::kUnavailable);
  EXPECT_EQ(r.error().message(),
            "pod default/p: spec.resourceClaims[1]: waiting for the claim generated from template \"one-gpu\"");
  p.status.resourceClaimStatuses = {{"tmpl", std::string("p-tmpl-abcde")}};
  p.status.extendedResourceClaimStatus = api::PodExtendedResourceClaimStatus{{}, "p-extended-resources-xyz"};
  r = pod_claim_refs(p);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].claim_name, "shared");
  EXPECT_EQ((*r)[1].pod_claim_name, "tmpl");
  EXPECT_EQ((*r)[1].claim_name, "p-tmpl-abcde");
  EXPECT_EQ((*r)[2].pod_claim_name, "");
  EXPECT_EQ((*r)[2].claim_name, "p-extended-resources-xyz");
  // Recorded as "no claim needed": skipped.
  p.status.resourceClaimStatuses = {{"tmpl", std::nullopt}};
  p.status.extendedResourceClaimStatus.reset();
  r = pod_claim_refs(p);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->size(), 1u);
}

TEST(KubeletPod, ClaimReadiness) {
  api::ResourceClaim c;
  c.metadata.name = "gpu";
  api::Pod p;
  p.metadata.name = "p";
  p.metadata.uid = "u";
  EXPECT_EQ(claim_not_ready_reason(c, p), "claim gpu is not allocated yet");
  c.status.allocation = api::AllocationResult{};
  EXPECT_EQ(claim_not_ready_reason(c, p), "claim gpu is not reserved for the pod");
  c.status.reservedFor.push_back({"", "pods", "other", "x"});
  c.status.reservedFor.push_back({"", "pods", "p", "u"});
  EXPECT_EQ(claim_not_ready_reason(c, p), "");
}

TEST(KubeletPod, ClaimReservedForThePodsGroupIsReady) {
  api::ResourceClaim c;
  c.metadata.name = "domain";
  c.status.allocation = api::AllocationResult{};
  c.status.reservedFor.push_back({"scheduling.k8s.io", "podgroups", "train", "g-uid"});
  api::Pod p;
  p.metadata.name = "train-0";
  p.metadata.uid = "u";
  // Not a member: the group's reservation is not the pod's.
  EXPECT_EQ(claim_not_ready_reason(c, p), "claim domain is not reserved for the pod");
  p.spec.schedulingGroup = api::PodSchedulingGroup{std::string("other")};
  EXPECT_EQ(claim_not_ready_reason(c, p), "claim domain is not reserved for the pod");
  p.spec.schedulingGroup = api::PodSchedulingGroup{std::string("train")};
  EXPECT_EQ(claim_not_ready_reason(c, p), "");
  // A pod entry with the group's name is not the group.
  c.status.reservedFor = {{"", "pods", "train", "g-uid"}};
  EXPECT_EQ(claim_not_ready_reason(c, p), "claim domain is not reserved for the pod");
}

PreparedClaimInfo claim_info(const std::string& uid, const std::vector<std::pair<std::string, std::string>>& devs) {
  PreparedClaimInfo info;
  info.claim_uid = uid;
  for (const auto& [request, uuid] : devs) {
    PreparedDeviceResult d;
    d.request_names = {request};
    d.device_name = "gpu-" + uuid;
    d.cdi_device_ids = {cdi_device_id(uid, d.device_name)};
    info.devices.push_back(d);
    CdiDevice cd;
    cd.name = cdi_device_name(uid, d.device_name);
    cd.edits.env = {"NVIDIA_VISIBLE_DEVICES=" + uuid};
    info.cdi.devices.push_back(cd);
  }
  return info;
}

TEST(KubeletPod, ContainerEnv) {
  api::Pod pod = pod_with_claims();
  std::map<std::string, PreparedClaimInfo> claims = {
      {"direct", claim_info("c1", {{"a", "GPU-1"}, {"b", "GPU-2"}})},
      {"tmpl", claim_info("c2", {{"gpu", "GPU-3"}})},
      {"", claim_info("c3", {{"container-0-request-0", "GPU-4"}})},
  };
  claims["tmpl"].cdi.edits.env = {"SPEC_LEVEL=1"};
  pod.status.extendedResourceClaimStatus =
      api::PodExtendedResourceClaimStatus{{{"ext", "nvidia.com/gpu", "container-0-request-0"}}, "x"};
  struct Case {
    std::string name;
    std::vector<api::ResourceClaimRef> refs;
    std::string container;
    std::vector<std::string> want;
  };
  const std::vector<std::string> base = {"PATH=/bin", "HOSTNAME=p"};
  std::vector<Case> cases = {
      {"no-claims", {}, "c", {"PATH=/bin", "HOSTNAME=p", "OWN=x"}},
      {"whole-claim", {{"direct", ""}}, "c", {"PATH=/bin", "HOSTNAME=p", "NVIDIA_VISIBLE_DEVICES=GPU-1,GPU-2", "OWN=x"}},
      {"one-request", {{"direct", "b"}}, "c", {"PATH=/bin", "HOSTNAME=p", "NVIDIA_VISIBLE_DEVICES=GPU-2", "OWN=x"}},
      {"two-claims-join",
       {{"direct", "a"}, {"tmpl", ""}},
       "c",
       {"PATH=/bin", "HOSTNAME=p", "NVIDIA_VISIBLE_DEVICES=GPU-1,GPU-3", "SPEC_LEVEL=1", "OWN=x"}},
      {"extended-resource", {}, "ext", {"PATH=/bin", "HOSTNAME=p", "NVIDIA_VISIBLE_DEVICES=GPU-4", "OWN=x"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    api::Container ctr;
    ctr.name = c.container;
    ctr.resources.claims = c.refs;
    ctr.env = {{"OWN", "x", {}}, {"FROM_SECRET", "", {"{\"secretKeyRef\":{}}"}}};
    EXPECT_EQ(container_env(pod, ctr, claims, base), c.want);
  }
}

TEST(KubeletPod, ContainerEnvOverridesBase) {
  api::Pod pod = pod_with_claims();
  api::Container ctr;
  ctr.env = {{"PATH", "/opt/bin", {}}};
  EXPECT_EQ(container_env(pod, ctr, {}, {"PATH=/bin"}), (std::vector<std::string>{"PATH=/opt/bin"}));
}

TEST(KubeletPod, StatusForRunningAndCompletedPods) {
  api::Pod pod = pod_with_claims();
  api::Container c;
  c.name = "c";
  c.image = "busybox";
  pod.spec.containers = {c};
  pod.status.resourceClaimStatuses = {{"tmpl", std::string("p-tmpl-abcde")}};
  ContainerState run = cs(Kind::kRunning);
  run.started_at = "2026-01-01T00:00:01Z";
  run.container_id = "draplane://42";
  api::PodStatus st = build_pod_status(pod, "Running", {run}, "2026-01-01T00:00:02Z", "127.0.0.1", "");
  EXPECT_EQ(st.phase, "Running");
  EXPECT_EQ(st.hostIP, "127.0.0.1");
  EXPECT_EQ(st.startTime, "2026-01-01T00:00:02Z");
  EXPECT_EQ(st.resourceClaimStatuses, pod.status.resourceClaimStatuses);  // kept
  std::map<std::string, std::string> conds;
  for (const auto& x : st.conditions) conds[x.type] = x.status;
  EXPECT_EQ(conds, (std::map<std::string, std::string>{{"ContainersReady", "True"},
                                                       {"Initialized", "True"},
                                                       {"PodReadyToStartContainers", "True"},
                                                       {"PodScheduled", "True"},
                                                       {"Ready", "True"}}));
  EXPECT_EQ(st.containerStatuses.text,
            R"([{"name":"c","state":{"running":{"startedAt":"2026-01-01T00:00:01Z"}},"lastState":{},"ready":true,)"
            R"("restartCount":0,"image":"busybox","imageID":"","containerID":"draplane://42","started":true}])");

  pod.status = st;
  ContainerState done = cs(Kind::kTerminated, 0);
  done.reason = "Completed";
  done.started_at = "2026-01-01T00:00:01Z";
  done.finished_at = "2026-01-01T00:00:05Z";
  api::PodStatus st2 = build_pod_status(pod, "Succeeded", {done}, "2026-01-01T00:00:06Z", "127.0.0.1", "");
  EXPECT_EQ(st2.startTime, "2026-01-01T00:00:02Z");  // kept
  for (const auto& x : st2.conditions) {
    if (x.type == "Ready") {
      EXPECT_EQ(x.status, "False");
      EXPECT_EQ(x.reason, "PodCompleted");
      EXPECT_EQ(x.lastTransitionTime, "2026-01-01T00:00:06Z");
    }
    if (x.type == "PodScheduled") {
      EXPECT_EQ(x.lastTransitionTime, "2026-01-01T00:00:02Z");
    }
  }
  EXPECT_EQ(st2.containerStatuses.text,
            R"([{"name":"c","state":{"terminated":{"exitCode":0,"reason":"Completed",)"
            R"("startedAt":"2026-01-01T00:00:01Z","finishedAt":"2026-01-01T00:00:05Z"}},"lastState":{},)"
            R"("ready":false,"restartCount":0,"image":"busybox","imageID":"","started":false}])");
}

}  // namespace
}  // namespace draplane::node
