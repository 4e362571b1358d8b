// The cluster and workload manifests (sim/manifest.h): what each field becomes,
// and errors that name the document and the field.
#include "sim/manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

namespace draplane::sim {
namespace {

using ::testing::HasSubstr;

// Named by process too: ctest runs each test in its own process, in parallel,
// and two processes' first files were one path.
std::string write_temp(const std::string& text) {
  static int n = 0;
  std::string path = ::testing::TempDir() + "sim_manifest_" + std::to_string(::getpid()) + "_" +
                     std::to_string(n++) + ".yaml";
  std::ofstream(path) << text;
  return path;
}

constexpr const char* kCluster = R"(
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: 7500m, memory: 2Gi}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec: {}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s1}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: g0, attributes: {gpu.example.com/productName: {string: A100}}}
  - {name: g1, attributes: {productName: {string: A100}}}
)";

TEST(Manifest, ClusterNodesAndTheirGpus) {
  auto nodes = load_cluster_manifests(write_temp(kCluster));
  ASSERT_TRUE(nodes) << nodes.error().message();
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ((*nodes)[0].name, "n1");
  EXPECT_EQ((*nodes)[0].cpu_milli, 7500);
  EXPECT_EQ((*nodes)[0].memory_mib, 2048);
  EXPECT_EQ((*nodes)[0].gpus, 2);
  EXPECT_EQ((*nodes)[0].model, "A100");
}

TEST(Manifest, ClusterErrorsNameTheField) {
  std::string text = kCluster;
  text.replace(text.find("nodeName: n1"), 12, "nodeName: n9");
  auto r = load_cluster_manifests(write_temp(text));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("ResourceSlice s1: spec.nodeName: no Node \"n9\""), std::string::npos)
      << r.error().message();
  text = kCluster;
  text.replace(text.find("{productName: {string: A100}}"), 29, "{productName: {string: T4}}");
  r = load_cluster_manifests(write_temp(text));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("spec.devices[1].attributes.productName: \"T4\""), std::string::npos)
      << r.error().message();
}

constexpr const char* kWorkload = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: half}
spec:
  spec:
    devices:
      requests:
      - name: g
        exactly: {deviceClassName: gpu, capacity: {requests: {milli: "500"}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: two}
spec:
  devices:
    requests:
    - name: g
      exactly:
        deviceClassName: gpu
        count: 2
        selectors: [{cel: {expression: 'device.attributes["x"].productName in ["T4", "P100"]'}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: a
  annotations: {draplane.io/sim-arrival: "10", draplane.io/sim-duration: "5"}
spec:
  containers:
  - {name: c, image: i, resources: {requests: {cpu: 1500m, memory: 1Gi}}}
  - {name: d, image: i, resources: {requests: {cpu: "1"}}}
  resourceClaims: [{name: g, resourceClaimTemplateName: half}]
---
apiVersion: v1
kind: Pod
metadata: {name: b}
spec:
  containers: [{name: c, image: i}]
  resourceClaims: [{name: g, resourceClaimName: two}]
)";

TEST(Manifest, WorkloadPodsBecomeTasks) {
  auto tasks = load_workload_manifests(write_temp(kWorkload));
  ASSERT_TRUE(tasks) << tasks.error().message();
  ASSERT_EQ(tasks->size(), 2u);
  const TaskSpec& a = (*tasks)[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.cpu_milli, 2500);
  EXPECT_EQ(a.memory_mib, 1024);
  EXPECT_EQ(a.num_gpu, 1);
  EXPECT_EQ(a.gpu_milli, 500);
  EXPECT_EQ(a.creation_time, 10);
  EXPECT_EQ(a.deletion_time, 15);
  const TaskSpec& b = (*tasks)[1];
  EXPECT_EQ(b.num_gpu, 2);
  EXPECT_EQ(b.gpu_milli, 1000);
  EXPECT_EQ(b.models, (std::vector<std::string>{"T4", "P100"}));
  EXPECT_FALSE(b.creation_time);
}

// The error of the workload with `from` replaced by `to`.
std::string workload_error(const std::string& from, const std::string& to) {
  std::string text = kWorkload;
  text.replace(text.find(from), from.size(), to);
  auto r = load_workload_manifests(write_temp(text));
  return r ? "(no error)" : r.error().message();
}

TEST(Manifest, WorkloadErrorsNameTheField) {
  EXPECT_THAT(workload_error("sim-arrival: \"10\"", "sim-arrival: \"soon\""),
              HasSubstr("Pod a: metadata.annotations[draplane.io/sim-arrival]: \"soon\""));
  EXPECT_THAT(workload_error("resourceClaimName: two", "resourceClaimName: six"),
              HasSubstr("Pod b: spec.resourceClaims[0].resourceClaimName: no ResourceClaim \"six\""));
  EXPECT_THAT(workload_error("milli: \"500\"", "milli: \"1500\""),
              HasSubstr("exactly.capacity.requests[milli]: must be 1..1000"));
}

}  // namespace
}  // namespace draplane::sim
