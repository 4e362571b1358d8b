// Defaulting: the API server's SetDefaults_* for the modelled kinds.
#include "api/defaults.h"

#include <gtest/gtest.h>

#include "api/codec.h"

namespace draplane::api {
namespace {

Object decode(const std::string& yaml) {
  Result<Object> o = decode_object(yaml);
  EXPECT_TRUE(o.has_value()) << o.error().message();
  return o.has_value() ? std::move(o).value() : Object(Namespace{});
}

TEST(DefaultsTest, ClaimRequests) {
  Object obj = decode(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests:
    - name: plain
      exactly: {deviceClassName: gpu, tolerations: [{key: k}]}
    - name: zero
      exactly: {deviceClassName: gpu, count: 0}
    - name: three
      exactly: {deviceClassName: gpu, count: 3}
    - name: all
      exactly: {deviceClassName: gpu, allocationMode: All}
    - name: alt
      firstAvailable:
      - {name: a, deviceClassName: gpu}
      - {name: b, deviceClassName: gpu, allocationMode: All, tolerations: [{key: k, operator: Exists}]}
status:
  allocation:
    devices:
      results:
      - {request: plain, driver: d, pool: p, device: x, tolerations: [{key: k}]}
)");
  apply_defaults(obj);
  const ResourceClaim& c = std::get<ResourceClaim>(obj);
  struct Want {
    const char* mode;
    std::optional<int64_t> count;
  };
  const Want want[] = {{"ExactCount", 1}, {"ExactCount", 1}, {"ExactCount", 3}, {"All", std::nullopt}};
  for (size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(c.spec.devices.requests[i].exactly->allocationMode, want[i].mode);
    EXPECT_EQ(c.spec.devices.requests[i].exactly->count, want[i].count);
  }
  EXPECT_EQ(c.spec.devices.requests[0].exactly->tolerations[0].operator_, "Equal");
  const auto& alt = c.spec.devices.requests[4].firstAvailable;
  EXPECT_EQ(alt[0].allocationMode, "ExactCount");
  EXPECT_EQ(alt[0].count, 1);
  EXPECT_EQ(alt[1].allocationMode, "All");
  EXPECT_EQ(alt[1].count, std::nullopt);
  EXPECT_EQ(alt[1].tolerations[0].operator_, "Exists");
  EXPECT_EQ(c.status.allocation->devices.results[0].tolerations[0].operator_, "Equal");

  // Idempotent.
  Object again = obj;
  apply_defaults(again);
  EXPECT_TRUE(again == obj);
}

TEST(DefaultsTest, TemplateAndClassAndSlice) {
  Object tmpl = decode(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu}}
)");
  apply_defaults(tmpl);
  const auto& ex = *std::get<ResourceClaimTemplate>(tmpl).spec.spec.devices.requests[0].exactly;
  EXPECT_EQ(ex.allocationMode, "ExactCount");
  EXPECT_EQ(ex.count, 1);

  Object cls = decode("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\n");
  Object cls_before = cls;
  apply_defaults(cls);
  EXPECT_TRUE(cls == cls_before);

  const char* slice_yaml = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: d
  pool: {name: p, resourceSliceCount: 1}
  nodeName: node-1
  devices:
  - name: g
    taints: [{key: a, effect: NoSchedule}, {key: b, effect: NoExecute, timeAdded: "2024-01-01T00:00:00Z"}]
)";
  Object slice = decode(slice_yaml);
  apply_defaults(slice);  // no clock: timeAdded stays unset
  EXPECT_EQ(std::get<ResourceSlice>(slice).spec.devices[0].taints[0].timeAdded, "");
  apply_defaults(slice, DefaultOptions{"2025-06-01T12:00:00Z"});
  const auto& taints = std::get<ResourceSlice>(slice).spec.devices[0].taints;
  EXPECT_EQ(taints[0].timeAdded, "2025-06-01T12:00:00Z");
  EXPECT_EQ(taints[1].timeAdded, "2024-01-01T00:00:00Z");
}

TEST(DefaultsTest, Pod) {
  Object obj = decode(R"(
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: latest
    image: vllm/vllm-openai:latest
    resources:
      limits: {nvidia.com/gpu: 2, memory: 1Gi}
      requests: {memory: 512Mi}
  - name: untagged
    image: registry:5000/app
  - name: pinned
    image: busybox:1.36
    imagePullPolicy: Never
  - name: digest
    image: busybox@sha256:0000000000000000000000000000000000000000000000000000000000000000
  dnsPolicy: Default
)");
  apply_defaults(obj);
  const Pod& pod = std::get<Pod>(obj);
  EXPECT_EQ(pod.spec.restartPolicy, "Always");
  EXPECT_EQ(pod.spec.schedulerName, "default-scheduler");
  EXPECT_EQ(pod.spec.terminationGracePeriodSeconds, 30);
  EXPECT_EQ(pod.spec.extra.text,
            R"({"dnsPolicy":"Default","enableServiceLinks":true,"securityContext":{}})");
  const auto& c0 = pod.spec.containers[0];
  EXPECT_EQ(c0.resources.requests.at("nvidia.com/gpu").to_string(), "2");
  EXPECT_EQ(c0.resources.requests.at("memory").to_string(), "512Mi");
  EXPECT_EQ(c0.extra.text,
            R"({"imagePullPolicy":"Always","terminationMessagePath":"/dev/termination-log",)"
            R"("terminationMessagePolicy":"File"})");
  const char* policies[] = {"Always", "Always", "Never", "IfNotPresent"};
  for (size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    EXPECT_NE(pod.spec.containers[i].extra.text.find(std::string("\"imagePullPolicy\":\"") +
                                                      policies[i] + "\""),
              std::string::npos);
  }
  Object again = obj;
  apply_defaults(again);
  EXPECT_TRUE(again == obj);

  // Values already set are kept.
  Object set = decode(
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {restartPolicy: Never, schedulerName: "
      "draplane, terminationGracePeriodSeconds: 5, containers: []}\n");
  apply_defaults(set);
  EXPECT_EQ(std::get<Pod>(set).spec.restartPolicy, "Never");
  EXPECT_EQ(std::get<Pod>(set).spec.schedulerName, "draplane");
  EXPECT_EQ(std::get<Pod>(set).spec.terminationGracePeriodSeconds, 5);
}

TEST(DefaultsTest, NodeAndNamespace) {
  Object node = decode(
      "apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\nstatus: {capacity: {cpu: '8'}}\n");
  apply_defaults(node);
  EXPECT_EQ(std::get<Node>(node).status.allocatable.at("cpu").to_string(), "8");
  Object node2 = decode(
      "apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\nstatus: {capacity: {cpu: '8'}, "
      "allocatable: {cpu: 7500m}}\n");
  apply_defaults(node2);
  EXPECT_EQ(std::get<Node>(node2).status.allocatable.at("cpu").to_string(), "7500m");

  Object ns = decode("apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n");
  apply_defaults(ns);
  EXPECT_EQ(std::get<Namespace>(ns).phase, "Active");
}

}  // namespace
}  // namespace draplane::api
