// ResourceClaim / ResourceClaimTemplate validation: one table case per rule, each
// with the exact Kubernetes error lines.
#include <gtest/gtest.h>

#include <functional>

#include "api/validation.h"
#include "field_error_lines.h"

namespace draplane::api {
namespace {

DeviceRequest exact(const std::string& name, const std::string& cls = "gpu.nvidia.com") {
  DeviceRequest r;
  r.name = name;
  r.exactly = ExactDeviceRequest{};
  r.exactly->deviceClassName = cls;
  r.exactly->allocationMode = kAllocationModeExactCount;
  r.exactly->count = 1;
  return r;
}

DeviceSubRequest sub(const std::string& name, const std::string& cls = "gpu.nvidia.com") {
  DeviceSubRequest s;
  s.name = name;
  s.deviceClassName = cls;
  s.allocationMode = kAllocationModeExactCount;
  s.count = 1;
  return s;
}

ResourceClaim base_claim() {
  ResourceClaim c;
  c.metadata.name = "gpu-claim";
  c.metadata.namespace_ = "default";
  c.spec.devices.requests = {exact("gpu")};
  return c;
}

constexpr const char* kLabelRegex =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
constexpr const char* kSubdomainRegex =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
constexpr const char* kRefMsg =
    "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'";

struct Case {
  const char* name;
  std::function<void(ResourceClaim&)> mutate;
  std::vector<std::string> want;
};

TEST(ValidateClaim, Rules) {
  const std::string R0 = "spec.devices.requests[0]";
  Case cases[] = {
      {"valid", [](ResourceClaim&) {}, {}},
      {"name required", [](ResourceClaim& c) { c.metadata.name = ""; },
       {"metadata.name: Required value: name or generateName is required"}},
      {"generateName suffices", [](ResourceClaim& c) { c.metadata.name = ""; c.metadata.generateName = "pod-gpu-"; }, {}},
      {"name format", [](ResourceClaim& c) { c.metadata.name = "Foo"; },
       {std::string("metadata.name: Invalid value: \"Foo\": ") + kSubdomainRegex}},
      {"namespace required", [](ResourceClaim& c) { c.metadata.namespace_ = ""; }, {"metadata.namespace: Required value"}},
      {"bad label", [](ResourceClaim& c) { c.metadata.labels["a"] = "-bad"; },
       {"metadata.labels: Invalid value: \"-bad\": a valid label must be an empty string or consist of alphanumeric "
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
        "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"}},
      {"count zero", [](ResourceClaim& c) { c.spec.devices.requests[0].exactly->count = 0; },
       {R0 + ".exactly.count: Invalid value: 0: must be greater than zero"}},
      {"count with All", [](ResourceClaim& c) { c.spec.devices.requests[0].exactly->allocationMode = "All"; },
       {R0 + ".exactly.count: Invalid value: 1: must not be specified when allocationMode is 'All'"}},
      {"All without count",
       [](ResourceClaim& c) {
         c.spec.devices.requests[0].exactly->allocationMode = "All";
         c.spec.devices.requests[0].exactly->count.reset();
       },
       {}},
      {"bad mode", [](ResourceClaim& c) { c.spec.devices.requests[0].exactly->allocationMode = "Some"; },
       {R0 + ".exactly.allocationMode: Unsupported value: \"Some\": supported values: \"All\", \"ExactCount\""}},
      {"class required", [](ResourceClaim& c) { c.spec.devices.requests[0].exactly->deviceClassName = ""; },
       {R0 + ".exactly.deviceClassName: Required value"}},
      {"class format", [](ResourceClaim& c) { c.spec.devices.requests[0].exactly->deviceClassName = "GPU"; },
       {R0 + ".exactly.deviceClassName: Invalid value: \"GPU\": " + kSubdomainRegex}},
      {"request name", [](ResourceClaim& c) { c.spec.devices.requests[0].name = "GPU_0"; },
       {R0 + ".name: Invalid value: \"GPU_0\": " + kLabelRegex}},
      {"neither exactly nor firstAvailable", [](ResourceClaim& c) { c.spec.devices.requests[0].exactly.reset(); },
       {R0 + ": Required value: exactly one of `exactly` or `firstAvailable` is required"}},
      {"both exactly and firstAvailable",
       [](ResourceClaim& c) { c.spec.devices.requests[0].firstAvailable = {sub("a")}; },
       {R0 + ": Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but multiple fields "
             "are set"}},
      {"duplicate request", [](ResourceClaim& c) { c.spec.devices.requests.push_back(exact("gpu")); },
       {"spec.devices.requests[1]: Duplicate value: \"gpu\""}},
      {"too many requests",
       [](ResourceClaim& c) {
         c.spec.devices.requests.clear();
         for (int i = 0; i < 33; ++i) c.spec.devices.requests.push_back(exact("r" + std::to_string(i)));
       },
       {"spec.devices.requests: Too many: 33: must have at most 32 items"}},
      {"too many subrequests",
       [](ResourceClaim& c) {
         auto& r = c.spec.devices.requests[0];
         r.exactly.reset();
         for (int i = 0; i < 9; ++i) r.firstAvailable.push_back(sub("s" + std::to_string(i)));
       },
       {R0 + ".firstAvailable: Too many: 9: must have at most 8 items"}},
      {"duplicate subrequest",
       [](ResourceClaim& c) {
         auto& r = c.spec.devices.requests[0];
         r.exactly.reset();
         r.firstAvailable = {sub("h100"), sub("h100")};
       },
       {R0 + ".firstAvailable[1]: Duplicate value: \"h100\""}},
      {"subrequest class required",
       [](ResourceClaim& c) {
         auto& r = c.spec.devices.requests[0];
         r.exactly.reset();
         r.firstAvailable = {sub("h100", "")};
       },
       {R0 + ".firstAvailable[0].deviceClassName: Required value"}},
      {"too many selectors",
       [](ResourceClaim& c) {
         c.spec.devices.requests[0].exactly->selectors.resize(33, DeviceSelector{CELDeviceSelector{"true"}});
       },
       {R0 + ".exactly.selectors: Too many: 33: must have at most 32 items"}},
      {"selector without cel",
       [](ResourceClaim& c) { c.spec.devices.requests[0].exactly->selectors = {DeviceSelector{}}; },
       {R0 + ".exactly.selectors[0].cel: Required value"}},
      {"expression too long",
       [](ResourceClaim& c) {
         c.spec.devices.requests[0].exactly->selectors = {DeviceSelector{CELDeviceSelector{std::string(10241, 'a')}}};
       },
       {R0 + ".exactly.selectors[0].cel.expression: Too long: must have at most 10240 bytes"}},
      {"toleration Exists with value",
       [](ResourceClaim& c) {
         c.spec.devices.requests[0].exactly->tolerations = {DeviceToleration{"k", "Exists", "v", "", std::nullopt}};
       },
       {R0 + ".exactly.tolerations[0].value: Invalid value: \"v\": must be empty for operator `Exists`"}},
      {"toleration bad effect",
       [](ResourceClaim& c) {
         c.spec.devices.requests[0].exactly->tolerations = {DeviceToleration{"k", "Equal", "v", "Sometimes", {}}};
       },
       {R0 + ".exactly.tolerations[0].effect: Unsupported value: \"Sometimes\": supported values: \"NoExecute\", "
             "\"NoSchedule\", \"None\""}},
      {"toleration bad operator",
       [](ResourceClaim& c) {
         c.spec.devices.requests[0].exactly->tolerations = {DeviceToleration{"k", "In", "", "", {}}};
       },
       {R0 + ".exactly.tolerations[0].operator: Unsupported value: \"In\": supported values: \"Equal\", \"Exists\""}},
      {"too many tolerations",
       [](ResourceClaim& c) {
         c.spec.devices.requests[0].exactly->tolerations.resize(17, DeviceToleration{"", "Exists", "", "", {}});
       },
       {R0 + ".exactly.tolerations: Too many: 17: must have at most 16 items"}},
      {"constraint unknown request",
       [](ResourceClaim& c) {
         c.spec.devices.constraints = {DeviceConstraint{{"nope"}, "gpu.nvidia.com/cliqueID", std::nullopt}};
       },
       {std::string("spec.devices.constraints[0].requests[0]: Invalid value: \"nope\": ") + kRefMsg}},
      {"constraint subrequest ref ok",
       [](ResourceClaim& c) {
         auto& r = c.spec.devices.requests[0];
         r.exactly.reset();
         r.firstAvailable = {sub("h100")};
         c.spec.devices.constraints = {DeviceConstraint{{"gpu/h100"}, "gpu.nvidia.com/cliqueID", std::nullopt}};
       },
       {}},
      {"constraint not fully qualified",
       [](ResourceClaim& c) { c.spec.devices.constraints = {DeviceConstraint{{}, "cliqueID", std::nullopt}}; },
       {"spec.devices.constraints[0].matchAttribute: Invalid value: \"cliqueID\": a fully qualified name must be a "
        "domain and a name separated by a slash"}},
      {"constraint without attribute",
       [](ResourceClaim& c) { c.spec.devices.constraints = {DeviceConstraint{}}; },
       {"spec.devices.constraints[0]: Required value: exactly one of \"matchAttribute\" or \"distinctAttribute\" is "
        "required, but multiple fields are set"}},
      {"constraint duplicate request",
       [](ResourceClaim& c) {
         c.spec.devices.constraints = {DeviceConstraint{{"gpu", "gpu"}, std::nullopt, "gpu.nvidia.com/uuid"}};
       },
       {"spec.devices.constraints[0].requests[1]: Duplicate value: \"gpu\""}},
      {"config requires opaque",
       [](ResourceClaim& c) { c.spec.devices.config = {DeviceClaimConfiguration{{"gpu"}, std::nullopt}}; },
       {"spec.devices.config[0].opaque: Required value"}},
      {"config parameters not object",
       [](ResourceClaim& c) {
         c.spec.devices.config = {DeviceClaimConfiguration{{}, OpaqueDeviceConfiguration{"gpu.nvidia.com", {"[1]"}}}};
       },
       {"spec.devices.config[0].opaque.parameters: Invalid value: \"<value omitted>\": must be a valid JSON object"}},
      {"config parameters required",
       [](ResourceClaim& c) {
         c.spec.devices.config = {DeviceClaimConfiguration{{}, OpaqueDeviceConfiguration{"gpu.nvidia.com", {}}}};
       },
       {"spec.devices.config[0].opaque.parameters: Required value"}},
      {"config parameters too long",
       [](ResourceClaim& c) {
         std::string big = "{\"a\":\"" + std::string(10240, 'x') + "\"}";
         c.spec.devices.config = {DeviceClaimConfiguration{{}, OpaqueDeviceConfiguration{"gpu.nvidia.com", {big}}}};
       },
       {"spec.devices.config[0].opaque.parameters: Too long: must have at most 10240 bytes"}},
      {"config driver required",
       [](ResourceClaim& c) { c.spec.devices.config = {DeviceClaimConfiguration{{}, OpaqueDeviceConfiguration{"", {"{}"}}}}; },
       {"spec.devices.config[0].opaque.driver: Required value"}},
      {"config unknown request",
       [](ResourceClaim& c) {
         c.spec.devices.config = {DeviceClaimConfiguration{{"gpu/x"}, OpaqueDeviceConfiguration{"gpu.nvidia.com", {"{}"}}}};
       },
       {std::string("spec.devices.config[0].requests[0]: Invalid value: \"gpu/x\": ") + kRefMsg}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    ResourceClaim claim = base_claim();
    c.mutate(claim);
    EXPECT_EQ(lines(validate(Object(claim))), c.want);
  }
}

TEST(ValidateClaim, SelectorChecker) {
  ValidationOptions opts;
  opts.selector_checker = [](std::string_view expr) -> Status {
    if (expr == "bad") return Status(Code::kInvalid, "compilation failed: ERROR: <input>:1:1: undeclared reference to 'bad'");
    if (expr == "costly") return Status(Code::kForbidden, "cost");
    if (expr == "boom") return Status(Code::kInternal, "checker crashed");
    return {};
  };
  ResourceClaim c = base_claim();
  for (const char* e : {"true", "bad", "costly", "boom"}) {
    c.spec.devices.requests[0].exactly->selectors.push_back(DeviceSelector{CELDeviceSelector{e}});
  }
  const std::string p = "spec.devices.requests[0].exactly.selectors";
  EXPECT_EQ(lines(validate_resource_claim(c, opts)),
            (std::vector<std::string>{
                p + "[1].cel.expression: Invalid value: \"bad\": compilation failed: ERROR: <input>:1:1: undeclared "
                    "reference to 'bad'",
                p + "[2].cel.expression: Forbidden: too complex, exceeds cost limit",
                p + "[3].cel.expression: Internal error: checker crashed",
            }));
  // Without a checker nothing is compiled.
  EXPECT_TRUE(validate_resource_claim(c).empty());
}

TEST(ValidateClaim, Template) {
  ResourceClaimTemplate t;
  t.metadata.name = "single-gpu";
  t.metadata.namespace_ = "default";
  t.spec.spec.devices.requests = {exact("gpu")};
  EXPECT_TRUE(validate(Object(t)).empty());
  t.spec.metadata.name = "x";
  t.spec.metadata.labels["app"] = "ok";
  t.spec.spec.devices.requests[0].exactly->count = -1;
  EXPECT_EQ(lines(validate(Object(t))),
            (std::vector<std::string>{
                "spec.metadata.name: Forbidden: cannot be set for a template",
                "spec.spec.devices.requests[0].exactly.count: Invalid value: -1: must be greater than zero"}));
}

TEST(ValidateClaim, AdminAccess) {
  ResourceClaim c = base_claim();
  EXPECT_TRUE(validate_admin_access(c.spec.devices.requests, {}).empty());
  c.spec.devices.requests.push_back(exact("admin"));
  c.spec.devices.requests[1].exactly->adminAccess = true;
  EXPECT_EQ(lines(validate_admin_access(c.spec.devices.requests, {{"team", "a"}})),
            (std::vector<std::string>{
                "spec.devices.requests[1].adminAccess: Forbidden: admin access to devices requires the "
                "`resource.kubernetes.io/admin-access: true` label on the containing namespace"}));
  EXPECT_TRUE(validate_admin_access(c.spec.devices.requests, {{"resource.kubernetes.io/admin-access", "true"}}).empty());
}

}  // namespace
}  // namespace draplane::api
