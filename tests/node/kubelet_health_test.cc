// KEP-4680 / KEP-4817 device health as the agent's kubelet reports it: the
// container status's allocatedResourcesStatus and the claim's device conditions.
#include <gtest/gtest.h>

#include "api/codec.h"
#include "node/kubelet_pod.h"

namespace draplane::node {
namespace {

PreparedDeviceResult device(const std::string& request, const std::string& name, const std::string& cdi = "") {
  PreparedDeviceResult d;
  d.request_names = {request};
  d.pool_name = "node-a";
  d.device_name = name;
  if (!cdi.empty()) d.cdi_device_ids = {cdi, cdi + "-second"};
  return d;
}

DeviceHealthFn health_of(std::map<std::string, std::string> unhealthy) {
  return [unhealthy](const std::string& pool, const std::string& dev) {
    if (pool != "node-a") return std::string("Unknown");
    auto it = unhealthy.find(dev);
    return it == unhealthy.end() ? std::string("Healthy") : it->second;
  };
}

TEST(KubeletHealth, AllocatedResourcesStatusPerContainerClaimEntry) {
  std::map<std::string, PreparedClaimInfo> claims;
  claims["gpus"].devices = {device("big", "gpu-0", "k8s.gpu.nvidia.com/claim=u1-gpu-0"),
                            device("small/mig", "gpu-1-mig-1g10gb-0-0"),
                            device("big", "gpu-0", "k8s.gpu.nvidia.com/claim=u1-gpu-0")};  // same ID once
  claims["other"].devices = {device("r", "gpu-2", "k8s.gpu.nvidia.com/claim=u2-gpu-2")};
  claims[""].devices = {device("ext", "gpu-3")};  // the extended-resource claim: not a container claim entry
  api::Container c;
  c.name = "main";
  c.resources.claims = {{"gpus", ""}, {"gpus", "small"}, {"other", "none"}, {"missing", ""}};
  auto got = allocated_resources_status(c, claims, "gpu.nvidia.com", health_of({{"gpu-0", "Unhealthy"}}));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], (ResourceStatusEntry{"claim:gpus",
                                         {{"k8s.gpu.nvidia.com/claim=u1-gpu-0", "Unhealthy"},
                                          {"gpu.nvidia.com/node-a/gpu-1-mig-1g10gb-0-0", "Healthy"}}}));
  // A request entry lists that request's devices (subrequests included);
  // "other/none" matches no device and is left out.
  EXPECT_EQ(got[1], (ResourceStatusEntry{"claim:gpus/small", {{"gpu.nvidia.com/node-a/gpu-1-mig-1g10gb-0-0", "Healthy"}}}));
}

TEST(KubeletHealth, ContainerStatusCarriesAllocatedResourcesStatus) {
  api::Pod pod;
  pod.metadata.name = "p";
  pod.spec.containers.resize(1);
  pod.spec.containers[0].name = "main";
  ContainerState s;
  s.name = "main";
  s.kind = ContainerState::Kind::kRunning;
  s.allocated_resources_status = {{"claim:gpus/big", {{"cdi/x=1", "Unhealthy"}}}};
  auto st = build_pod_status(pod, "Running", {s}, "2025-01-01T00:00:00Z", "10.0.0.1", "");
  EXPECT_NE(st.containerStatuses.text.find(
                R"("allocatedResourcesStatus":[{"name":"claim:gpus/big","resources":[{"resourceID":"cdi/x=1","health":"Unhealthy"}]}])"),
            std::string::npos)
      << st.containerStatuses.text;
  s.allocated_resources_status.clear();
  st = build_pod_status(pod, "Running", {s}, "2025-01-01T00:00:00Z", "10.0.0.1", "");
  EXPECT_EQ(st.containerStatuses.text.find("allocatedResourcesStatus"), std::string::npos);
}

api::ResourceClaim allocated_claim() {
  api::ResourceClaim claim;
  claim.metadata.name = "c";
  claim.metadata.generation = 1;
  api::AllocationResult a;
  auto result = [](const std::string& driver, const std::string& pool, const std::string& dev) {
    api::DeviceRequestAllocationResult r;
    r.request = "gpu";
    r.driver = driver;
    r.pool = pool;
    r.device = dev;
    return r;
  };
  a.devices.results = {result("gpu.nvidia.com", "node-a", "gpu-0"), result("gpu.nvidia.com", "node-a", "gpu-1"),
                       result("gpu.nvidia.com", "node-b", "gpu-0"), result("net.example.com", "node-a", "eth0")};
  a.devices.results[1].shareID = "6ba7b810-9dad-11d1-80b4-00c04fd430c8";
  claim.status.allocation = a;
  return claim;
}

TEST(KubeletHealth, ClaimDeviceConditions) {
  api::ResourceClaim claim = allocated_claim();
  api::AllocatedDeviceStatus net;
  net.driver = "net.example.com";
  net.pool = "node-a";
  net.device = "eth0";
  net.conditions = {{"Ready", "True", 0, "t0", "Up", ""}};
  claim.status.devices = {net};
  auto devices =
      claim_device_statuses(claim, "gpu.nvidia.com", "node-a", health_of({{"gpu-1", "Unhealthy"}}), "t1");
  ASSERT_EQ(devices.size(), 3u);  // the other driver's entry kept, one per own device
  EXPECT_EQ(devices[0], net);
  EXPECT_EQ(devices[1].device, "gpu-0");
  ASSERT_EQ(devices[1].conditions.size(), 1u);
  EXPECT_EQ(devices[1].conditions[0].type, "Healthy");
  EXPECT_EQ(devices[1].conditions[0].status, "True");
  EXPECT_EQ(devices[1].conditions[0].reason, "Healthy");
  EXPECT_EQ(devices[1].conditions[0].lastTransitionTime, "t1");
  EXPECT_EQ(devices[1].conditions[0].observedGeneration, 1);
  EXPECT_EQ(devices[2].device, "gpu-1");
  EXPECT_EQ(devices[2].shareID, claim.status.allocation->devices.results[1].shareID);
  EXPECT_EQ(devices[2].conditions[0].status, "False");
  EXPECT_EQ(devices[2].conditions[0].reason, "Unhealthy");

  // Unchanged health: nothing changes, the transition time stays.
  claim.status.devices = devices;
  EXPECT_EQ(claim_device_statuses(claim, "gpu.nvidia.com", "node-a", health_of({{"gpu-1", "Unhealthy"}}), "t2"),
            devices);
  // Recovery: gpu-1 turns True at t3; gpu-0 keeps t1.
  auto recovered = claim_device_statuses(claim, "gpu.nvidia.com", "node-a", health_of({}), "t3");
  EXPECT_EQ(recovered[1].conditions[0].lastTransitionTime, "t1");
  EXPECT_EQ(recovered[2].conditions[0].status, "True");
  EXPECT_EQ(recovered[2].conditions[0].lastTransitionTime, "t3");
  // Unmonitored devices: Unknown.
  auto unknown = claim_device_statuses(claim, "gpu.nvidia.com", "node-a", health_of({{"gpu-0", "Unknown"}}), "t4");
  EXPECT_EQ(unknown[1].conditions[0].status, "Unknown");
  // Encoded as the API writes it.
  claim.status.devices = recovered;
  auto json = api::to_json(api::Object(claim));
  EXPECT_NE(json.find(R"("conditions":[{"type":"Healthy","status":"True")"), std::string::npos) << json;
}

TEST(KubeletHealth, UnallocatedClaimGetsNoDeviceStatus) {
  api::ResourceClaim claim;
  EXPECT_TRUE(claim_device_statuses(claim, "gpu.nvidia.com", "node-a", health_of({}), "t").empty());
}

}  // namespace
}  // namespace draplane::node
