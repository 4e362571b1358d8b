// The objects follow scheduler_perf's templates in kubernetes/kubernetes,
// test/integration/scheduler_perf/dra/templates/*.yaml (cited per workload);
// the counts follow performance-config.yaml's 5000pods_500nodes /
// *_500nodes workloads, scaled with --nodes.
#include "bench/workloads.h"

#include <algorithm>

#include "api/codec.h"

namespace draplane::bench {
namespace {

constexpr const char* kDriver = "test-driver.cdi.k8s.io";

std::string substitute(std::string text, int index) {
  const std::string key = "{{.Index}}";
  const std::string value = std::to_string(index);
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size())) {
    text.replace(at, key.size(), value);
  }
  return text;
}

template <typename T>
Result<T> decode(const std::string& yaml, int index = 0) {
  auto r = api::decode_as<T>(substitute(yaml, index));
  if (!r.has_value()) return Status(r.error().code(), "bench workload template: " + r.error().message());
  return std::move(*r);
}

// templates/node-with-dra-test-driver.yaml (the label is what the
// partitionable slices' nodeSelector matches).
constexpr const char* kNode = R"(apiVersion: v1
kind: Node
metadata:
  name: scheduler-perf-dra-{{.Index}}
  labels:
    node-with-dra: "true"
status:
  capacity: {pods: "110", cpu: "4", memory: 32Gi}
  allocatable: {pods: "110", cpu: "4", memory: 32Gi}
)";

// templates/deviceclass.yaml
constexpr const char* kClass = R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: test-class}
spec:
  selectors:
  - cel: {expression: 'device.driver == "test-driver.cdi.k8s.io"'}
)";

// dra.go createResourceDriver: one slice per node, maxClaimsPerNode devices
// "instance-<i>" (model A100, family GPU, driverVersion 1.2.3, numa i; 1Gi memory).
api::ResourceSlice node_slice(const std::string& node, int devices) {
  api::ResourceSlice s;
  s.metadata.name = node;
  s.spec.driver = kDriver;
  s.spec.nodeName = node;
  s.spec.pool = api::ResourcePool{node, 1, 1};
  for (int i = 0; i < devices; ++i) {
    api::Device d;
    d.name = "instance-" + std::to_string(i);
    d.attributes["model"].string_ = "A100";
    d.attributes["family"].string_ = "GPU";
    d.attributes["driverVersion"].version = "1.2.3";
    d.attributes["dra.example.com/numa"].int_ = i;
    d.capacity["memory"] = api::DeviceCapacity{api::Quantity::from_int(int64_t{1} << 30), std::nullopt};
    s.spec.devices.push_back(std::move(d));
  }
  return s;
}

api::Namespace ns(const std::string& name) {
  api::Namespace n;
  n.metadata.name = name;
  return n;
}

std::string node_name(int i) { return "scheduler-perf-dra-" + std::to_string(i); }

// Pod "test-dra-<i>" with one pause container, as every pod template has.
api::Pod pause_pod(const std::string& namespace_, int i) {
  api::Pod p;
  p.metadata.name = "test-dra-" + std::to_string(i);
  p.metadata.namespace_ = namespace_;
  api::Container c;
  c.name = "pause";
  c.image = "registry.k8s.io/pause:3.9";
  p.spec.containers.push_back(std::move(c));
  return p;
}

// templates/pod-with-claim-template.yaml
api::Pod template_pod(const std::string& namespace_, int i) {
  api::Pod p = pause_pod(namespace_, i);
  p.spec.containers[0].resources.claims.push_back(api::ResourceClaimRef{"resource", ""});
  api::PodResourceClaim rc;
  rc.name = "resource";
  rc.resourceClaimTemplateName = "test-claim-template";
  p.spec.resourceClaims.push_back(rc);
  return p;
}

// templates/pod-with-claim-ref.yaml: pod i uses claim i/5.
api::Pod claim_ref_pod(const std::string& namespace_, int i) {
  api::Pod p = template_pod(namespace_, i);
  p.spec.resourceClaims[0].resourceClaimTemplateName.reset();
  p.spec.resourceClaims[0].resourceClaimName = "test-claim-" + std::to_string(i / 5);
  return p;
}

// templates/pod-with-extended-resource.yaml: pod i asks for example.com/gpu-i.
api::Pod extended_pod(const std::string& namespace_, int i) {
  api::Pod p = pause_pod(namespace_, i);
  const std::string res = "example.com/gpu-" + std::to_string(i);
  p.spec.containers[0].resources.requests[res] = api::Quantity::from_int(1);
  p.spec.containers[0].resources.limits[res] = api::Quantity::from_int(1);
  return p;
}

// templates/resourceclaim.yaml
api::ResourceClaim plain_claim(const std::string& namespace_, int i) {
  api::ResourceClaim c;
  c.metadata.name = "test-claim-" + std::to_string(i);
  c.metadata.namespace_ = namespace_;
  api::DeviceRequest r;
  r.name = "req-0";
  r.exactly = api::ExactDeviceRequest{};
  r.exactly->deviceClassName = "test-class";
  c.spec.devices.requests.push_back(std::move(r));
  return c;
}

// A claim allocated to one device of a node's slice, as allocResourceClaims
// leaves it (status.allocation, no finalizer, not reserved).
api::ResourceClaim allocated_claim(api::ResourceClaim c, const std::string& request, const std::string& pool,
                                   const std::string& device, std::optional<api::NodeSelector> selector) {
  api::AllocationResult a;
  a.devices.results.push_back(api::DeviceRequestAllocationResult{});
  auto& r = a.devices.results.back();
  r.request = request;
  r.driver = kDriver;
  r.pool = pool;
  r.device = device;
  a.nodeSelector = std::move(selector);
  c.status.allocation = std::move(a);
  return c;
}

api::NodeSelector node_field_selector(const std::string& node) {
  api::NodeSelector s;
  api::NodeSelectorTerm t;
  t.matchFields.push_back(api::NodeSelectorRequirement{"metadata.name", "In", {node}});
  s.nodeSelectorTerms.push_back(std::move(t));
  return s;
}

// The common base: namespaces, nodes with their slices, test-class.
Result<Plan> base(int nodes, int devices_per_node) {
  Plan p;
  p.cluster.push_back(ns("init"));
  p.cluster.push_back(ns("test"));
  auto cls = decode<api::DeviceClass>(kClass);
  if (!cls.has_value()) return cls.error();
  p.cluster.push_back(*cls);
  for (int i = 0; i < nodes; ++i) {
    auto n = decode<api::Node>(kNode, i);
    if (!n.has_value()) return n.error();
    p.cluster.push_back(*n);
    if (devices_per_node > 0) p.cluster.push_back(node_slice(node_name(i), devices_per_node));
  }
  p.devices = nodes * devices_per_node;
  return p;
}

// The claim templates below are the part under spec.spec.devices of
// test-claim-template; this is the rest.
constexpr const char* kTemplateHead = R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: test-claim-template}
spec:
  spec:
    devices:
)";

Result<api::ResourceClaimTemplate> claim_template(const std::string& devices_yaml, const std::string& namespace_) {
  auto t = decode<api::ResourceClaimTemplate>(kTemplateHead + devices_yaml);
  if (t.has_value()) t->metadata.namespace_ = namespace_;
  return t;
}

// templates/resourceclaimtemplate.yaml
constexpr const char* kTemplate = R"(      requests:
      - name: req-0
        exactly: {deviceClassName: test-class}
)";

// templates/resourceclaimtemplate-with-selector.yaml
constexpr const char* kTemplateSelector = R"(      requests:
      - name: req-0
        exactly:
          deviceClassName: test-class
          selectors:
          - cel:
              expression: |-
                device.capacity['test-driver.cdi.k8s.io'].memory.compareTo(quantity('1Gi')) == 0 &&
                device.attributes['test-driver.cdi.k8s.io'].family == 'GPU'
)";

// Two devices with the same model (the shape of
// templates/resourceclaimtemplate-for-two-devices.yaml, on the attribute
// every createResourceDriver device has).
constexpr const char* kTemplateMatchAttribute = R"(      requests:
      - name: req-0
        exactly: {deviceClassName: test-class, count: 2}
      constraints:
      - requests: [req-0]
        matchAttribute: test-driver.cdi.k8s.io/model
)";

// templates/resourceclaimtemplate-first-available.yaml, its first subrequest
// on templates/deviceclass-no-devices.yaml (a class no device matches: the
// allocator fails a request naming a class that does not exist).
constexpr const char* kNoDevicesClass = R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: no-devices-class}
spec:
  selectors:
  - cel: {expression: 'device.driver == "no-such-driver.cdi.k8s.io"'}
)";

constexpr const char* kTemplateFirstAvailable = R"(      requests:
      - name: req-0
        firstAvailable:
        - {name: sub-0, deviceClassName: no-devices-class}
        - {name: sub-1, deviceClassName: test-class}
)";

// templates/resourceclaimtemplate-toleration.yaml
constexpr const char* kTemplateToleration = R"(      requests:
      - name: req-0
        exactly:
          deviceClassName: test-class
          tolerations:
          - {key: example.com/taint, operator: Exists}
)";

// templates/devicetaintrule.yaml (empty selector: every device).
constexpr const char* kTaintRule = R"(apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata: {name: taint-all-devices}
spec:
  taint: {key: example.com/taint, value: tainted, effect: NoSchedule}
)";

// SchedulingWithResourceClaimTemplate (performance-config.yaml,
// 5000pods_500nodes): 10 devices per node, init pods and measured pods
// each half the devices, so the cluster ends full.
Result<Plan> template_workload(const WorkloadParams& w, const char* tmpl_yaml, bool taint) {
  auto p = base(w.nodes, w.devices);
  if (!p.has_value()) return p;
  if (taint) {
    auto rule = decode<api::DeviceTaintRule>(kTaintRule);
    if (!rule.has_value()) return rule.error();
    p->cluster.insert(p->cluster.begin() + 2, *rule);
  }
  for (const char* ns_name : {"init", "test"}) {
    auto t = claim_template(tmpl_yaml, ns_name);
    if (!t.has_value()) return t.error();
    p->cluster.push_back(*t);
  }
  const int half = w.nodes * w.devices / 2;
  for (int i = 0; i < half; ++i) p->init_pods.push_back(template_pod("init", i));
  for (int i = 0; i < half; ++i) p->pods.push_back(template_pod("test", i));
  return p;
}

// SteadyStateClusterResourceClaimTemplate (performance-config.yaml,
// empty/half/full_500nodes): `init_claims` claims allocated up front, then
// rounds of 10 pods (created, bound, deleted) for the duration.
Result<Plan> steady_workload(const WorkloadParams& w, const char* tmpl_yaml, int init_claims,
                             bool no_devices_class = false) {
  auto p = base(w.nodes, w.devices);
  if (!p.has_value()) return p;
  if (no_devices_class) {
    auto cls = decode<api::DeviceClass>(kNoDevicesClass);
    if (!cls.has_value()) return cls.error();
    p->cluster.push_back(*cls);
  }
  auto t = claim_template(tmpl_yaml, "test");
  if (!t.has_value()) return t.error();
  p->cluster.push_back(*t);
  // Spread over the nodes (upstream picks random nodes; the free devices per
  // node differ by at most one here).
  for (int i = 0; i < init_claims; ++i) {
    const int node = i % w.nodes, device = i / w.nodes;
    p->allocated.push_back(allocated_claim(plain_claim("init", i), "req-0", node_name(node),
                                           "instance-" + std::to_string(device),
                                           node_field_selector(node_name(node))));
  }
  p->steady = true;
  p->batch = 10;
  p->duration_s = w.duration_s;
  p->steady_pod = [](int i) { return template_pod("test", i); };
  return p;
}

// Every node labelled node-with-dra=true (the partitionable pools' nodeSelector).
api::NodeSelector dra_nodes() {
  api::NodeSelector sel;
  api::NodeSelectorTerm term;
  term.matchExpressions.push_back(api::NodeSelectorRequirement{"node-with-dra", "In", {"true"}});
  sel.nodeSelectorTerms.push_back(term);
  return sel;
}

// The whole pool "resourceslice-<index>" in one slice, for every DRA node.
api::ResourceSlice selector_pool(int index) {
  api::ResourceSlice s;
  const std::string name = "resourceslice-" + std::to_string(index);
  s.metadata.name = name;
  s.spec.driver = kDriver;
  s.spec.pool = api::ResourcePool{name, 1, 1};
  s.spec.nodeSelector = dra_nodes();
  return s;
}

// A pool as Kubernetes 1.35+ publishes counters: one slice with the counter
// sets, one with the devices (templates/resourceslice-partitionable-countersets.yaml
// and -devices.yaml, resourceSliceCount 2).
void add_split_pool(Plan& p, api::ResourceSlice whole) {
  api::ResourceSlice counters = whole;
  const std::string pool = whole.spec.pool.name;
  counters.metadata.name = "resourceslice-countersets-" + pool.substr(pool.find_last_of('-') + 1);
  counters.spec.pool.resourceSliceCount = 2;
  counters.spec.devices.clear();
  whole.metadata.name = "resourceslice-devices-" + pool.substr(pool.find_last_of('-') + 1);
  whole.spec.pool.resourceSliceCount = 2;
  whole.spec.sharedCounters.clear();
  p.cluster.push_back(std::move(counters));
  p.cluster.push_back(std::move(whole));
}

// templates/resourceslice-partitionable-{countersets,devices}.yaml: a pool of
// 6 devices on one counter set (counter1..4): two devices of 2 counters, four of 1.
api::ResourceSlice partitionable_slice(int index) {
  api::ResourceSlice s = selector_pool(index);
  api::CounterSet cs;
  cs.name = "counter-set";
  for (const char* c : {"counter1", "counter2", "counter3", "counter4"}) cs.counters[c] = api::Counter{api::Quantity::from_int(1)};
  s.spec.sharedCounters.push_back(cs);
  auto device = [&](const std::string& dname, bool preallocate, int value, std::vector<std::string> counters) {
    api::Device d;
    d.name = dname;
    d.attributes["preallocate"].bool_ = preallocate;
    d.attributes["dra.example.com/slice"].int_ = index;
    d.capacity["counters"] = api::DeviceCapacity{api::Quantity::from_int(value), std::nullopt};
    api::DeviceCounterConsumption use;
    use.counterSet = "counter-set";
    for (const auto& c : counters) use.counters[c] = api::Counter{api::Quantity::from_int(1)};
    d.consumesCounters.push_back(use);
    s.spec.devices.push_back(std::move(d));
  };
  device("device-2-counters-1", true, 2, {"counter1", "counter2"});
  device("device-2-counters-2", false, 2, {"counter3", "counter4"});
  device("device-1-counter-1", false, 1, {"counter1"});
  device("device-1-counter-2", false, 1, {"counter2"});
  device("device-1-counter-3", false, 1, {"counter3"});
  device("device-1-counter-4", false, 1, {"counter4"});
  return s;
}

// templates/resourceclaimtemplate-for-two-devices.yaml
constexpr const char* kTemplateTwoDevices = R"(      requests:
      - name: req-0
        exactly: {deviceClassName: test-class, count: 2}
      constraints:
      - requests: [req-0]
        matchAttribute: dra.example.com/slice
)";

// SteadyStateClusterResourceClaimTemplatePartitionable (2000pods_100nodes):
// slices = 20 per node (capped at upstream's 2,000), each with its 2-counter
// "preallocate" device allocated up front (templates/resourceclaim-with-selector.yaml),
// then rounds of one pod per slice asking for two devices of one slice: the
// allocator's first pick (device-2-counters-2) leaves no second device, so it
// backtracks once to the two 1-counter devices.
Result<Plan> partitionable_workload(const WorkloadParams& w) {
  auto p = base(w.nodes, 0);
  if (!p.has_value()) return p;
  const int slices = std::min(2000, 20 * w.nodes);
  for (int i = 0; i < slices; ++i) add_split_pool(*p, partitionable_slice(i));
  auto t = claim_template(kTemplateTwoDevices, "test");
  if (!t.has_value()) return t.error();
  p->cluster.push_back(*t);
  for (int i = 0; i < slices; ++i) {
    api::ResourceClaim c = plain_claim("init", i);
    c.metadata.name = "test-claim-with-selector-" + std::to_string(i);
    c.spec.devices.requests[0].exactly->selectors.push_back(api::DeviceSelector{api::CELDeviceSelector{
        "device.capacity['test-driver.cdi.k8s.io'].counters.compareTo(quantity('2')) >= 0 &&\n"
        "device.attributes['test-driver.cdi.k8s.io'].preallocate"}});
    p->allocated.push_back(
        allocated_claim(c, "req-0", "resourceslice-" + std::to_string(i), "device-2-counters-1", dra_nodes()));
  }
  p->devices = slices * 6;
  p->steady = true;
  p->batch = slices;
  p->duration_s = w.duration_s;
  p->steady_pod = [](int i) { return template_pod("test", i); };
  return p;
}

// templates/resourceslice-partitionable-backtracking-{countersets,devices}.yaml: 8 devices, each
// with its own cpu counter and 10Gi (device-1: 20Gi) of a 70Gi memory counter.
api::ResourceSlice backtracking_slice(int index) {
  api::ResourceSlice s = selector_pool(index);
  api::CounterSet cpu{"counter-set-for-cpu", {}}, mem{"counter-set-for-mem", {}};
  for (int c = 1; c <= 8; ++c) cpu.counters["cpu" + std::to_string(c)] = api::Counter{api::Quantity::from_int(1)};
  mem.counters["mem"] = api::Counter{api::Quantity::from_int(int64_t{70} << 30)};
  s.spec.sharedCounters = {cpu, mem};
  for (int d = 1; d <= 8; ++d) {
    api::Device dev;
    dev.name = "device-" + std::to_string(d);
    api::DeviceCounterConsumption c1{"counter-set-for-cpu", {}}, c2{"counter-set-for-mem", {}};
    c1.counters["cpu" + std::to_string(d)] = api::Counter{api::Quantity::from_int(1)};
    c2.counters["mem"] = api::Counter{api::Quantity::from_int(int64_t{d == 1 ? 20 : 10} << 30)};
    dev.consumesCounters = {c1, c2};
    s.spec.devices.push_back(std::move(dev));
  }
  return s;
}

// templates/resourceclaimtemplate-backtracking.yaml
constexpr const char* kTemplateBacktracking = R"(      requests:
      - name: req-0
        exactly: {deviceClassName: test-class, count: 7}
)";

// SteadyStateClusterResourceClaimTemplatePartitionableBacktracking (upstream's
// only size, "fast": 1 slice, 1 pod per round): 7 of the 8 devices fit the
// memory counter only without device-1, which the allocator tries first.
Result<Plan> backtracking_workload(const WorkloadParams& w) {
  auto p = base(w.nodes, 0);
  if (!p.has_value()) return p;
  add_split_pool(*p, backtracking_slice(0));
  auto t = claim_template(kTemplateBacktracking, "test");
  if (!t.has_value()) return t.error();
  p->cluster.push_back(*t);
  p->devices = 8;
  p->steady = true;
  p->batch = 1;
  p->duration_s = w.duration_s;
  p->steady_pod = [](int i) { return template_pod("test", i); };
  return p;
}

// SchedulingWithResourceClaim (5000pods_500nodes): 2 devices per node, claims
// shared by 5 pods each; init and measured claims each fill half the devices.
Result<Plan> shared_claim_workload(const WorkloadParams& w) {
  auto p = base(w.nodes, 2);
  if (!p.has_value()) return p;
  const int claims = w.nodes;  // initClaims = measureClaims = nodes (500 at 500)
  for (int i = 0; i < claims; ++i) p->init_claims.push_back(plain_claim("init", i));
  for (int i = 0; i < claims * 5; ++i) p->init_pods.push_back(claim_ref_pod("init", i));
  for (int i = 0; i < claims; ++i) p->claims.push_back(plain_claim("test", i));
  for (int i = 0; i < claims * 5; ++i) p->pods.push_back(claim_ref_pod("test", i));
  return p;
}

// extendedresource/performance-config.yaml SchedulingWithExtendedResource
// (5000pods_500nodes): classes = half the devices, each serving
// example.com/gpu-<i> (templates/deviceclass-extended-resource.yaml); pod i
// of each phase asks for one example.com/gpu-<i>.
Result<Plan> extended_workload(const WorkloadParams& w) {
  auto p = base(w.nodes, 10);
  if (!p.has_value()) return p;
  const int half = w.nodes * 10 / 2;
  for (int i = 0; i < half; ++i) {
    api::DeviceClass c;
    c.metadata.name = "test-class-" + std::to_string(i);
    c.spec.selectors.push_back(api::DeviceSelector{api::CELDeviceSelector{"device.driver == \"test-driver.cdi.k8s.io\""}});
    c.spec.extendedResourceName = "example.com/gpu-" + std::to_string(i);
    p->cluster.push_back(std::move(c));
  }
  for (int i = 0; i < half; ++i) p->init_pods.push_back(extended_pod("init", i));
  for (int i = 0; i < half; ++i) p->pods.push_back(extended_pod("test", i));
  return p;
}

std::vector<Workload> make_workloads() {
  const std::string cfg = "test/integration/scheduler_perf/dra/performance-config.yaml";
  std::vector<Workload> v;
  v.push_back({"SchedulingWithResourceClaimTemplate",
               "10 devices per node; init pods fill half, the measured pods the other half", cfg + " 5000pods_500nodes",
               500, [](const WorkloadParams& w) { return template_workload(w, kTemplate, false); }});
  v.push_back({"SteadyStateClusterResourceClaimTemplate/empty",
               "rounds of 10 pods (bound, then deleted) on an empty cluster", cfg + " empty_500nodes", 500,
               [](const WorkloadParams& w) { return steady_workload(w, kTemplate, 0); }});
  v.push_back({"SteadyStateClusterResourceClaimTemplate/half", "the same with half the devices allocated",
               cfg + " half_500nodes", 500,
               [](const WorkloadParams& w) { return steady_workload(w, kTemplate, w.nodes * w.devices / 2); }});
  v.push_back({"SteadyStateClusterResourceClaimTemplate/full", "the same with room for exactly 10 pods",
               cfg + " full_500nodes", 500,
               [](const WorkloadParams& w) { return steady_workload(w, kTemplate, w.nodes * w.devices - 10); }});
  v.push_back({"SteadyStateClusterResourceClaimTemplate/selectors",
               "empty cluster, claims with a CEL selector (templates/resourceclaimtemplate-with-selector.yaml)",
               "templates/resourceclaimtemplate-with-selector.yaml", 500,
               [](const WorkloadParams& w) { return steady_workload(w, kTemplateSelector, 0); }});
  v.push_back({"SteadyStateClusterResourceClaimTemplate/matchAttribute",
               "empty cluster, two devices per claim with matchAttribute",
               "templates/resourceclaimtemplate-for-two-devices.yaml (draplane's variant)", 500,
               [](const WorkloadParams& w) { return steady_workload(w, kTemplateMatchAttribute, 0); }});
  v.push_back({"SteadyStateClusterResourceClaimTemplateFirstAvailable",
               "empty cluster, firstAvailable whose first subrequest names no class",
               cfg + " SteadyStateClusterResourceClaimTemplateFirstAvailable", 500,
               [](const WorkloadParams& w) { return steady_workload(w, kTemplateFirstAvailable, 0, true); }});
  v.push_back({"SchedulingWithResourceClaim", "2 devices per node, each claim shared by 5 pods",
               cfg + " SchedulingWithResourceClaim 5000pods_500nodes", 500, shared_claim_workload});
  v.push_back({"SteadyStateClusterResourceClaimTemplatePartitionable",
               "MIG-style counter sets, 20 pools per node (<= 2000), half preallocated; one pod per pool per round",
               cfg + " SteadyStateClusterResourceClaimTemplatePartitionable 2000pods_100nodes", 100,
               partitionable_workload});
  v.push_back({"SteadyStateClusterResourceClaimTemplatePartitionableBacktracking",
               "one pool of 8 counter-sharing devices; 7 fit only without the first (backtracking)",
               cfg + " SteadyStateClusterResourceClaimTemplatePartitionableBacktracking fast", 500,
               backtracking_workload});
  v.push_back({"SchedulingWithResourceClaimTemplateToleration",
               "every device tainted NoSchedule by a DeviceTaintRule; the template tolerates it",
               cfg + " SchedulingWithResourceClaimTemplateToleration", 500,
               [](const WorkloadParams& w) { return template_workload(w, kTemplateToleration, true); }});
  v.push_back({"SchedulingWithExtendedResource", "pods ask for example.com/gpu-<i>, served by DRA device classes",
               "test/integration/scheduler_perf/dra/extendedresource/performance-config.yaml 5000pods_500nodes", 500,
               extended_workload});
  return v;
}

}  // namespace

const std::vector<Workload>& workloads() {
  static const std::vector<Workload> all = make_workloads();
  return all;
}

Result<const Workload*> find_workload(const std::string& name) {
  std::string known;
  for (const auto& w : workloads()) {
    if (w.name == name) return &w;
    known += (known.empty() ? "" : ", ") + w.name;
  }
  return Status(Code::kNotFound, "unknown workload \"" + name + "\" (known: " + known + ")");
}

}  // namespace draplane::bench
