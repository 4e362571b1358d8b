// DeviceClass, ResourceClaim status, Pod, Node and Namespace validation, and updates.
#include <gtest/gtest.h>

#include <functional>

#include "api/validation.h"
#include "field_error_lines.h"

namespace draplane::api {
namespace {

DeviceClass gpu_class() {
  DeviceClass c;
  c.metadata.name = "gpu.nvidia.com";
  c.spec.selectors = {DeviceSelector{CELDeviceSelector{"device.driver == 'gpu.nvidia.com'"}}};
  c.spec.extendedResourceName = "nvidia.com/gpu";
  return c;
}

TEST(ValidateClass, Rules) {
  struct Case {
    const char* name;
    std::function<void(DeviceClass&)> mutate;
    Lines want;
  } cases[] = {
      {"valid", [](DeviceClass&) {}, {}},
      {"namespace forbidden", [](DeviceClass& c) { c.metadata.namespace_ = "default"; },
       {"metadata.namespace: Forbidden: not allowed on this type"}},
      {"name too long", [](DeviceClass& c) { c.metadata.name = std::string(254, 'a'); },
       {"metadata.name: Invalid value: \"" + std::string(254, 'a') + "\": must be no more than 253 bytes"}},
      {"native extended resource", [](DeviceClass& c) { c.spec.extendedResourceName = "cpu"; },
       {"spec.extendedResourceName: Invalid value: \"cpu\": must be a valid extended resource name"}},
      {"kubernetes.io extended resource", [](DeviceClass& c) { c.spec.extendedResourceName = "kubernetes.io/gpu"; },
       {"spec.extendedResourceName: Invalid value: \"kubernetes.io/gpu\": must be a valid extended resource name"}},
      {"config without opaque", [](DeviceClass& c) { c.spec.config = {DeviceClassConfiguration{}}; },
       {"spec.config[0].opaque: Required value"}},
      {"config bad driver",
       [](DeviceClass& c) { c.spec.config = {DeviceClassConfiguration{OpaqueDeviceConfiguration{"GPU_", {"{}"}}}}; },
       {"spec.config[0].opaque.driver: Invalid value: \"GPU_\": a lowercase RFC 1123 subdomain must consist of lower "
        "case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
        "'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"}},
      {"too many configs",
       [](DeviceClass& c) {
         c.spec.config.resize(33, DeviceClassConfiguration{OpaqueDeviceConfiguration{"gpu.nvidia.com", {"{}"}}});
       },
       {"spec.config: Too many: 33: must have at most 32 items"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    DeviceClass dc = gpu_class();
    c.mutate(dc);
    EXPECT_EQ(lines(validate(Object(dc))), c.want);
  }
}

TEST(ValidateClass, UnchangedSelectorsAreNotRecompiled) {
  int calls = 0;
  ValidationOptions opts;
  opts.selector_checker = [&](std::string_view) {
    ++calls;
    return Status();
  };
  DeviceClass old_class = gpu_class();
  old_class.metadata.resourceVersion = "1";
  DeviceClass n = old_class;
  n.metadata.labels["team"] = "ml";
  EXPECT_TRUE(validate_update(Object(old_class), Object(n), opts).empty());
  EXPECT_EQ(calls, 0);
  n.spec.selectors[0].cel->expression = "true";
  EXPECT_TRUE(validate_update(Object(old_class), Object(n), opts).empty());
  EXPECT_EQ(calls, 1);
}

ResourceClaim allocated_claim() {
  ResourceClaim c;
  c.metadata.name = "c";
  c.metadata.namespace_ = "default";
  DeviceRequest r;
  r.name = "gpu";
  r.exactly = ExactDeviceRequest{"gpu.nvidia.com", {}, "ExactCount", 1, {}, {}, {}};
  c.spec.devices.requests = {r};
  AllocationResult a;
  DeviceRequestAllocationResult res;
  res.request = "gpu";
  res.driver = "gpu.nvidia.com";
  res.pool = "node-1";
  res.device = "gpu-0";
  a.devices.results = {res};
  c.status.allocation = a;
  c.status.reservedFor = {ResourceClaimConsumerReference{"", "pods", "p", "uid-1"}};
  return c;
}

TEST(ValidateClaimStatus, Rules) {
  struct Case {
    const char* name;
    std::function<void(ResourceClaim&)> mutate;
    Lines want;
  } cases[] = {
      {"valid", [](ResourceClaim&) {}, {}},
      {"reservedFor without allocation", [](ResourceClaim& c) { c.status.allocation.reset(); },
       {"status.reservedFor: Forbidden: may not be specified when `allocated` is not set"}},
      {"duplicate reservedFor uid",
       [](ResourceClaim& c) { c.status.reservedFor.push_back(c.status.reservedFor[0]); },
       {"status.reservedFor[1]: Duplicate value: \"uid-1\""}},
      {"reservedFor fields required", [](ResourceClaim& c) { c.status.reservedFor[0] = {}; },
       {"status.reservedFor[0].resource: Required value", "status.reservedFor[0].name: Required value",
        "status.reservedFor[0].uid: Required value"}},
      {"too many reservedFor",
       [](ResourceClaim& c) {
         c.status.reservedFor.clear();
         for (int i = 0; i < 257; ++i) c.status.reservedFor.push_back({"", "pods", "p", std::to_string(i)});
       },
       {"status.reservedFor: Too many: 257: must have at most 256 items"}},
      {"result unknown request", [](ResourceClaim& c) { c.status.allocation->devices.results[0].request = "x"; },
       {"status.allocation.devices.results[0].request: Invalid value: \"x\": must be the name of a request in the "
        "claim or the name of a request and a subrequest separated by '/'"}},
      {"bad shareID", [](ResourceClaim& c) { c.status.allocation->devices.results[0].shareID = "1"; },
       {"status.allocation.devices.results[0].shareID: Invalid value: \"1\": error validating uid: invalid UUID "
        "length: 1"}},
      {"config source",
       [](ResourceClaim& c) {
         c.status.allocation->devices.config = {
             DeviceAllocationConfiguration{"FromPod", {}, OpaqueDeviceConfiguration{"gpu.nvidia.com", {"{}"}}}};
       },
       {"status.allocation.devices.config[0].source: Unsupported value: \"FromPod\": supported values: "
        "\"FromClaim\", \"FromClass\""}},
      {"device status of unallocated device",
       [](ResourceClaim& c) {
         AllocatedDeviceStatus d;
         d.driver = "gpu.nvidia.com";
         d.pool = "node-1";
         d.device = "gpu-1";
         c.status.devices = {d};
       },
       {"status.devices[0]: Invalid value: gpu.nvidia.com/node-1/gpu-1: must be an allocated device in the claim"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    ResourceClaim claim = allocated_claim();
    c.mutate(claim);
    ValidationOptions opts;
    opts.validate_claim_status = true;
    EXPECT_EQ(lines(validate(Object(claim), opts)), c.want);
  }
}

TEST(ValidateClaimStatus, Updates) {
  ResourceClaim old_claim = allocated_claim();
  old_claim.metadata.resourceVersion = "3";
  ResourceClaim n = old_claim;
  n.status.allocation->devices.results[0].device = "gpu-1";
  EXPECT_EQ(lines(validate_claim_status_update(n, old_claim)),
            Lines{"status.allocation: Invalid value: resource.AllocationResult{...}: field is immutable"});
  // Clearing the allocation is allowed once nothing reserves the claim.
  n = old_claim;
  n.status.allocation.reset();
  n.status.reservedFor.clear();
  EXPECT_TRUE(validate_claim_status_update(n, old_claim).empty());
  // No new consumers while the claim is being deleted.
  old_claim.metadata.deletionTimestamp = "2026-01-01T00:00:00Z";
  n = old_claim;
  n.status.reservedFor.push_back({"", "pods", "q", "uid-2"});
  EXPECT_EQ(lines(validate_claim_status_update(n, old_claim)),
            Lines{"status.reservedFor: Forbidden: new entries may not be added while `deallocationRequested` or "
                  "`deletionTimestamp` are set"});
}

TEST(ValidateClaim, SpecImmutable) {
  ResourceClaim old_claim = allocated_claim();
  old_claim.metadata.resourceVersion = "3";
  ResourceClaim n = old_claim;
  n.spec.devices.requests[0].exactly->count = 2;
  EXPECT_EQ(lines(validate_update(Object(old_claim), Object(n))),
            Lines{"spec: Invalid value: resource.ResourceClaimSpec{...}: field is immutable"});
  n = old_claim;
  n.metadata.resourceVersion = "";
  n.metadata.name = "d";
  EXPECT_EQ(lines(validate_update(Object(old_claim), Object(n))),
            (Lines{"metadata.resourceVersion: Invalid value: \"\": must be specified for an update",
                   "metadata.name: Invalid value: \"d\": field is immutable"}));
}

Pod llm_pod() {
  Pod p;
  p.metadata.name = "llm-inference";
  p.metadata.namespace_ = "default";
  Container c;
  c.name = "inference";
  c.image = "vllm/vllm-openai:latest";
  c.resources.claims = {ResourceClaimRef{"gpu", "gpu"}};
  p.spec.containers = {c};
  p.spec.resourceClaims = {PodResourceClaim{"gpu", "gpu-claim", std::nullopt}};
  return p;
}

TEST(ValidatePod, Rules) {
  struct Case {
    const char* name;
    std::function<void(Pod&)> mutate;
    Lines want;
  } cases[] = {
      {"valid", [](Pod&) {}, {}},
      {"claim source missing", [](Pod& p) { p.spec.resourceClaims[0].resourceClaimName.reset(); },
       {"spec.resourceClaims[0]: Invalid value: core.PodResourceClaim{Name:\"gpu\", ResourceClaimName:(*string)(nil), "
        "ResourceClaimTemplateName:(*string)(nil)}: must specify one of: `resourceClaimName`, "
        "`resourceClaimTemplateName`"}},
      {"both sources", [](Pod& p) { p.spec.resourceClaims[0].resourceClaimTemplateName = "t"; },
       {"spec.resourceClaims[0]: Invalid value: core.PodResourceClaim{Name:\"gpu\", "
        "ResourceClaimName:(*string)(\"gpu-claim\"), ResourceClaimTemplateName:(*string)(\"t\")}: at most one of "
        "`resourceClaimName` or `resourceClaimTemplateName` may be specified"}},
      {"duplicate claim name", [](Pod& p) { p.spec.resourceClaims.push_back(p.spec.resourceClaims[0]); },
       {"spec.resourceClaims[1].name: Duplicate value: \"gpu\""}},
      {"unknown container claim", [](Pod& p) { p.spec.containers[0].resources.claims[0].name = "tpu"; },
       {"spec.containers[0].resources.claims[0]: Not found: \"tpu\": must be one of the names in "
        "pod.spec.resourceClaims: gpu"}},
      {"container claim with no pod claims", [](Pod& p) { p.spec.resourceClaims.clear(); },
       {"spec.containers[0].resources.claims[0]: Not found: \"gpu\": must be one of the names in "
        "pod.spec.resourceClaims which is empty"}},
      {"duplicate container claim",
       [](Pod& p) { p.spec.containers[0].resources.claims.push_back(ResourceClaimRef{"gpu", "gpu"}); },
       {"spec.containers[0].resources.claims[1]: Duplicate value: \"gpu/gpu\""}},
      {"generated claim name too long",
       [](Pod& p) {
         p.metadata.name = std::string(250, 'p');
         p.spec.resourceClaims[0] = PodResourceClaim{"gpu", std::nullopt, "tmpl"};
       },
       {"spec.resourceClaims[0].name: Invalid value: \"" + std::string(250, 'p') +
        "-gpu\": final ResourceClaim name: must be no more than 253 characters"}},
      {"no containers", [](Pod& p) { p.spec.containers.clear(); }, {"spec.containers: Required value"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Pod p = llm_pod();
    c.mutate(p);
    EXPECT_EQ(lines(validate(Object(p))), c.want);
  }
}

TEST(ValidateNodeAndNamespace, Rules) {
  Node n;
  n.metadata.name = "node-1";
  EXPECT_TRUE(validate(Object(n)).empty());
  n.spec.taints = {Taint{"gpu", "", "Sometimes", ""}};
  EXPECT_EQ(lines(validate(Object(n))),
            Lines{"spec.taints[0].effect: Unsupported value: \"Sometimes\": supported values: \"NoSchedule\", "
                  "\"PreferNoSchedule\", \"NoExecute\""});
  Namespace ns;
  ns.metadata.name = "ml.training";
  EXPECT_EQ(lines(validate(Object(ns))), Lines{"metadata.name: Invalid value: \"ml.training\": must not contain dots"});
}

}  // namespace
}  // namespace draplane::api
