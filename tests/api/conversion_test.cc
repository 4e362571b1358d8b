// Conversion: v1beta1 and v1beta2 manifests decode to the same v1 objects as
// their v1 rewrite; removed versions and kinds fail with what to write instead.
#include "api/conversion.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "api/codec.h"
#include "api/internal/json_value.h"
#include "codec_testdata.h"

namespace draplane::api {
namespace {

std::vector<Object> objects(const std::string& text) {
  std::vector<Object> out;
  for (DecodedDocument& d : convert_stream(text)) {
    EXPECT_TRUE(d.object.has_value()) << d.index << ": " << d.object.error().message();
    if (d.object.has_value()) out.push_back(std::move(d.object).value());
  }
  return out;
}

TEST(ConversionTest, BetaVersionsMatchTheV1Rewrite) {
  std::vector<Object> want = objects(read_testdata("v1_expected.yaml"));
  ASSERT_EQ(want.size(), 4u);
  for (const char* file : {"v1beta1.yaml", "v1beta2.yaml"}) {
    SCOPED_TRACE(file);
    std::vector<Object> got = objects(read_testdata(file));
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      SCOPED_TRACE(i);
      EXPECT_EQ(to_yaml(got[i]), to_yaml(want[i]));
      EXPECT_TRUE(got[i] == want[i]);
      EXPECT_EQ(meta_of(got[i]).name, meta_of(want[i]).name);
    }
    const auto& claim = std::get<ResourceClaim>(got[0]);
    EXPECT_EQ(claim.typeMeta.apiVersion, "resource.k8s.io/v1");
    EXPECT_EQ(claim.spec.devices.requests[0].exactly->count, 2);
    EXPECT_EQ(claim.spec.devices.requests[0].exactly->capacity->requests.at("memory").to_string(),
              "40Gi");
  }
}

TEST(ConversionTest, V1beta1EdgeCases) {
  // Empty spec.nodeName and allNodes: false are the v1beta1 zero values: dropped.
  std::vector<Object> got = objects(
      "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceSlice\nmetadata: {name: s}\n"
      "spec: {driver: d, pool: {name: p}, nodeName: '', allNodes: false, perDeviceNodeSelection: "
      "true, devices: [{name: g, basic: {nodeName: node-1}}]}\n");
  ASSERT_EQ(got.size(), 1u);
  const auto& slice = std::get<ResourceSlice>(got[0]);
  EXPECT_EQ(slice.spec.nodeName, std::nullopt);
  EXPECT_EQ(slice.spec.allNodes, std::nullopt);
  EXPECT_EQ(slice.spec.devices[0].nodeName, "node-1");

  struct Case {
    const char* name;
    const char* input;
    const char* want;
  };
  const Case cases[] = {
      {"unknown request field keeps its v1beta1 path",
       "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nmetadata: {name: c}\n"
       "spec: {devices: {requests: [{name: r, deviceClassName: g, cout: 2}]}}\n",
       "strict decoding error: unknown field \"spec.devices.requests[0].cout\""},
      {"wrong type inside a moved field",
       "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nmetadata: {name: c}\n"
       "spec: {devices: {requests: [{name: r, deviceClassName: g, count: many}]}}\n",
       "spec.devices.requests[0].exactly.count: expected integer, got string \"many\""},
      {"unknown version",
       "apiVersion: resource.k8s.io/v2\nkind: ResourceClaim\nmetadata: {name: c}\n",
       "no kind \"ResourceClaim\" is registered for version \"resource.k8s.io/v2\": use "
       "resource.k8s.io/v1 (v1beta1 and v1beta2 are converted)"},
      {"resource kind in the core group",
       "apiVersion: v1\nkind: ResourceClaim\nmetadata: {name: c}\n",
       "no kind \"ResourceClaim\" is registered for version \"v1\": use resource.k8s.io/v1 "
       "(v1beta1 and v1beta2 are converted)"},
      {"v1alpha3 claim",
       "apiVersion: resource.k8s.io/v1alpha3\nkind: ResourceClaim\nmetadata: {name: c}\n"
       "spec: {devices: {requests: [{name: r, deviceClassName: g}]}}\n",
       "resource.k8s.io/v1alpha3 was removed in Kubernetes 1.32: use apiVersion resource.k8s.io/v1; "
       "move the request fields under exactly: spec.devices.requests[0].exactly.deviceClassName: g"},
      {"PodSchedulingContext",
       "apiVersion: resource.k8s.io/v1alpha2\nkind: PodSchedulingContext\nmetadata: {name: c}\n",
       "kind PodSchedulingContext was removed in Kubernetes 1.31: delete it; the scheduler "
       "allocates structured-parameter claims itself"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<DecodedDocument> docs = convert_stream(c.input);
    ASSERT_EQ(docs.size(), 1u);
    ASSERT_FALSE(docs[0].object.has_value());
    EXPECT_EQ(docs[0].object.error().message(), c.want);
  }
}

TEST(ConversionTest, V1alpha2IsRejectedWithWhatToWrite) {
  std::vector<DecodedDocument> docs = convert_stream(read_testdata("v1alpha2_seed.yaml"));
  const char* want[] = {
      "resource.k8s.io/v1alpha2 was removed in Kubernetes 1.31: use apiVersion "
      "resource.k8s.io/v1; spec.selectors[0].cel.expression: a device has no memory field: the "
      "driver publishes memory as a capacity, compared as a quantity: "
      "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) > 0 (with your "
      "driver's domain and the amount with its unit)",
      "resource.k8s.io/v1alpha2 was removed in Kubernetes 1.31: use apiVersion "
      "resource.k8s.io/v1; move the request fields under exactly: "
      "spec.devices.requests[0].exactly.deviceClassName: nvidia-a100; name the request (required "
      "in v1, a DNS label): spec.devices.requests[0].name: gpu",
      "spec.resourceClaims[0].source: field was removed in Kubernetes 1.31 (pod claim sources "
      "are gone since resource.k8s.io/v1alpha3): write "
      "spec.resourceClaims[0].resourceClaimName: claim-gpu-a100 directly on the pod claim "
      "instead of under source",
      "kind ResourceClass was removed in Kubernetes 1.31: write apiVersion: resource.k8s.io/v1, "
      "kind: DeviceClass, with spec.selectors: [{cel: {expression: 'device.driver == "
      "\"gpu.resource.nvidia.com\"'}}] instead of driverName, and spec.config: [{opaque: "
      "{driver: gpu.resource.nvidia.com, parameters: {...}}}] instead of parametersRef",
      "resource.k8s.io/v1alpha2 was removed in Kubernetes 1.31: use apiVersion "
      "resource.k8s.io/v1; spec.resourceClassName is gone: write spec.devices.requests: "
      "[{name: <request>, exactly: {deviceClassName: gpu-class}}]; spec.parametersRef is gone: "
      "put the parameters inline as spec.devices.config[].opaque {driver, parameters}; remove "
      "spec.allocationMode (WaitForFirstConsumer/Immediate): claims are allocated when a pod "
      "using them is scheduled",
  };
  const char* kinds[] = {"DeviceClass", "ResourceClaim", "Pod", "ResourceClass", "ResourceClaim"};
  ASSERT_EQ(docs.size(), 5u);
  for (size_t i = 0; i < docs.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(docs[i].kind, kinds[i]);
    ASSERT_FALSE(docs[i].object.has_value());
    EXPECT_EQ(docs[i].object.error().message(), want[i]);
  }
  // ResourceClass is rejected whatever apiVersion it claims.
  std::vector<DecodedDocument> v1 = convert_stream(
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClass\nmetadata: {name: c}\n");
  ASSERT_EQ(v1.size(), 1u);
  EXPECT_EQ(v1[0].object.error().message(),
            "kind ResourceClass was removed in Kubernetes 1.31: write apiVersion: "
            "resource.k8s.io/v1, kind: DeviceClass, with spec.selectors: [{cel: {expression: "
            "'device.driver == \"<driver>\"'}}] instead of driverName");
}

// The JSON of every document of a YAML file, keys sorted (order-insensitive compare).
std::vector<std::string> json_documents(const std::string& yaml) {
  std::vector<std::string> out;
  for (internal::YamlDocument& d : internal::parse_yaml_stream(yaml)) {
    EXPECT_TRUE(d.error.ok()) << d.error.message();
    out.push_back(internal::to_json_text(d.value));
  }
  return out;
}

std::string canonical(const std::string& json) {
  auto v = internal::parse_json(json);
  EXPECT_TRUE(v.has_value()) << json;
  return v.has_value() ? internal::canonical_json_text(*v) : std::string();
}

TEST(ConversionTest, V1ConvertsToEachBetaVersionAsWritten) {
  std::vector<std::string> v1 = json_documents(read_testdata("v1_expected.yaml"));
  ASSERT_EQ(v1.size(), 4u);
  for (const char* version : {"v1beta1", "v1beta2"}) {
    SCOPED_TRACE(version);
    std::vector<std::string> beta = json_documents(read_testdata(std::string(version) + ".yaml"));
    ASSERT_EQ(beta.size(), v1.size());
    for (size_t i = 0; i < v1.size(); ++i) {
      SCOPED_TRACE(i);
      auto down = convert_json(v1[i], "resource.k8s.io/" + std::string(version));
      ASSERT_TRUE(down.has_value()) << down.error().message();
      EXPECT_EQ(canonical(*down), canonical(beta[i]));
      // And back up: the beta form decodes to the same v1 object.
      auto up = convert_json(*down, "resource.k8s.io/v1");
      ASSERT_TRUE(up.has_value()) << up.error().message();
      EXPECT_EQ(canonical(*up), canonical(v1[i]));
      auto a = decode_object(*down);
      auto b = decode_object(v1[i]);
      ASSERT_TRUE(a.has_value() && b.has_value());
      EXPECT_EQ(to_yaml(*a), to_yaml(*b));
    }
  }
}

TEST(ConversionTest, ConvertJsonShapes) {
  // A v1 request with only firstAvailable has no exactly to flatten; a device
  // with only a name gets an empty basic, as upstream's conversion writes it.
  auto claim = convert_json(
      R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c"},)"
      R"("spec":{"devices":{"requests":[{"name":"a","firstAvailable":[{"name":"x","deviceClassName":"g"}]},)"
      R"({"name":"b","exactly":{"deviceClassName":"g","count":3}}]}},"status":{"reservedFor":[]}})",
      "resource.k8s.io/v1beta1");
  ASSERT_TRUE(claim.has_value()) << claim.error().message();
  EXPECT_EQ(*claim,
            R"({"apiVersion":"resource.k8s.io/v1beta1","kind":"ResourceClaim","metadata":{"name":"c"},)"
            R"("spec":{"devices":{"requests":[{"name":"a","firstAvailable":[{"name":"x","deviceClassName":"g"}]},)"
            R"({"name":"b","deviceClassName":"g","count":3}]}},"status":{"reservedFor":[]}})");
  auto slice = convert_json(
      R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","spec":{"driver":"d","devices":[{"name":"g0"},{"name":"g1","nodeName":"n","attributes":{"m":{"int":1e3}}}]}})",
      "resource.k8s.io/v1beta1");
  ASSERT_TRUE(slice.has_value()) << slice.error().message();
  EXPECT_EQ(*slice,
            R"({"apiVersion":"resource.k8s.io/v1beta1","kind":"ResourceSlice","spec":{"driver":"d","devices":[)"
            R"({"name":"g0","basic":{}},{"name":"g1","basic":{"nodeName":"n","attributes":{"m":{"int":1e3}}}}]}})");
  // v1beta1 -> v1beta2 goes through v1.
  auto beta2 = convert_json(
      R"({"apiVersion":"resource.k8s.io/v1beta1","kind":"ResourceSlice","spec":{"devices":[{"name":"g","basic":{"nodeName":"n"}}]}})",
      "resource.k8s.io/v1beta2");
  ASSERT_TRUE(beta2.has_value());
  EXPECT_EQ(*beta2, R"({"apiVersion":"resource.k8s.io/v1beta2","kind":"ResourceSlice","spec":{"devices":[{"name":"g","nodeName":"n"}]}})");
  // A missing apiVersion is taken to be the target's.
  auto same = convert_json(R"({"kind":"DeviceClass","metadata":{"name":"d"}})", "resource.k8s.io/v1beta2");
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(*same, R"({"apiVersion":"resource.k8s.io/v1beta2","kind":"DeviceClass","metadata":{"name":"d"}})");

  struct Case {
    const char* name;
    const char* json;
    const char* target;
    const char* want;
  };
  const Case errors[] = {
      {"unserved target", R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass"})", "resource.k8s.io/v1alpha3",
       "cannot convert DeviceClass to \"resource.k8s.io/v1alpha3\": served versions are resource.k8s.io/v1, "
       "v1beta2 and v1beta1"},
      {"removed source", R"({"apiVersion":"resource.k8s.io/v1alpha2","kind":"DeviceClass"})", "resource.k8s.io/v1",
       "resource.k8s.io/v1alpha2 was removed in Kubernetes 1.31: use apiVersion resource.k8s.io/v1"},
      {"removed class reading a device field",
       R"({"apiVersion":"resource.k8s.io/v1alpha2","kind":"DeviceClass","spec":{"selectors":[)"
       R"({"cel":{"expression":"device.driver == 'x' && device.attributes['x'].a"}},)"
       R"({"cel":{"expression":"device.driver == 'x' && device.productName == 'A100'"}}]}})",
       "resource.k8s.io/v1",
       "resource.k8s.io/v1alpha2 was removed in Kubernetes 1.31: use apiVersion resource.k8s.io/v1; "
       "spec.selectors[1].cel.expression: a device has no productName field (only driver, attributes, capacity, "
       "allowMultipleAllocations): write device.attributes['<driver domain>'].productName or "
       "device.capacity['<driver domain>'].productName"},
      {"not an object", "[1]", "resource.k8s.io/v1", "expected an object, got array"},
  };
  for (const Case& c : errors) {
    SCOPED_TRACE(c.name);
    auto r = convert_json(c.json, c.target);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code(), Code::kBadRequest);
    EXPECT_EQ(r.error().message(), c.want);
  }
}

TEST(ConversionTest, Target) {
  EXPECT_TRUE(check_conversion_target("resource.k8s.io/v1").ok());
  Status st = check_conversion_target("resource.k8s.io/v1beta1");
  EXPECT_EQ(st.code(), Code::kInvalid);
  EXPECT_EQ(st.message(),
            "cannot convert to \"resource.k8s.io/v1beta1\": the only supported target is "
            "resource.k8s.io/v1");
}

}  // namespace
}  // namespace draplane::api
