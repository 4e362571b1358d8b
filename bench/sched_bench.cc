// Scheduler throughput through the cache and scheduling cycle with a no-op
// binder (no API server): 100 nodes x 8 GPUs, one single-GPU claim per pod.
// Setup (objects into the cache) is outside the timed region; each iteration
// checks that every GPU was given once. Upstream reference (SPEC §6):
// kube-scheduler's scheduler_perf DRA runs at roughly 40-290 pods/s.
#include <benchmark/benchmark.h>

#include <set>

#include "node/sim.h"
#include "node/slices.h"
#include "sched/scheduler.h"

namespace draplane::sched {
namespace {

// Accepts every write; echoes claims back with a fresh resourceVersion.
class NoopBinder : public Binder {
 public:
  Result<api::ResourceClaim> create_claim(const api::ResourceClaim& c) override { return stamp(c); }
  Result<api::ResourceClaim> update_claim(const api::ResourceClaim& c) override { return stamp(c); }
  Result<api::ResourceClaim> update_claim_status(const api::ResourceClaim& c) override {
    ++status_writes;
    return stamp(c);
  }
  Result<void> bind(const api::Pod&, const std::string&) override { return {}; }
  Result<void> update_pod_status(const api::Pod&, const std::function<void(api::Pod&)>&) override { return {}; }
  int64_t status_writes = 0;

 private:
  api::ResourceClaim stamp(api::ResourceClaim c) {
    c.metadata.resourceVersion = std::to_string(++rv_);
    return c;
  }
  int64_t rv_ = 1000;
};

void add_cluster(Scheduler& s, int nodes, int gpus) {
  api::DeviceClass cls;
  cls.metadata.name = "gpu.nvidia.com";
  cls.spec.selectors.push_back(api::DeviceSelector{api::CELDeviceSelector{
      "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}});
  s.handle(Event{Event::Op::kUpsert, cls});
  for (int n = 0; n < nodes; ++n) {
    std::string name = "node-" + std::to_string(n);
    api::Node node;
    node.metadata.name = name;
    node.status.allocatable["pods"] = api::Quantity::from_int(110);
    s.handle(Event{Event::Op::kUpsert, node});
    api::ResourceSlice sl;
    sl.metadata.name = name + "-gpu.nvidia.com";
    sl.spec.driver = "gpu.nvidia.com";
    sl.spec.pool = api::ResourcePool{name, 1, 1};
    sl.spec.nodeName = name;
    for (int g = 0; g < gpus; ++g) {
      api::Device d;
      d.name = "gpu-" + std::to_string(g);
      d.attributes["type"].string_ = "gpu";
      d.attributes["productName"].string_ = "NVIDIA H100 80GB HBM3";
      d.capacity["memory"] = api::DeviceCapacity{api::Quantity::from_int(int64_t{80} << 30), std::nullopt};
      sl.spec.devices.push_back(d);
    }
    s.handle(Event{Event::Op::kUpsert, sl});
  }
}

// The cluster as `draplane up` publishes it: per node the NVIDIA driver's pool
// for sim:<gpus>xH100 (a counter-set slice, then one slice per GPU with the
// full GPU and its MIG placements consuming the counters) and its classes.
bool add_sim_cluster(Scheduler& s, int nodes, int gpus) {
  for (const auto& cls : node::device_classes()) s.handle(Event{Event::Op::kUpsert, cls});
  for (int n = 0; n < nodes; ++n) {
    std::string name = "node-" + std::to_string(n);
    api::Node node;
    node.metadata.name = name;
    node.metadata.resourceVersion = "1";
    node.status.allocatable["pods"] = api::Quantity::from_int(110);
    s.handle(Event{Event::Op::kUpsert, node});
    auto inv = node::parse_sim_spec(std::to_string(gpus) + "xH100", node::SimOptions{});
    if (!inv.has_value()) return false;
    node::SliceOptions so;
    so.node_name = name;
    auto slices = node::build_slices(*inv, so);
    if (!slices.has_value()) return false;
    for (auto& sl : *slices) s.handle(Event{Event::Op::kUpsert, sl});
  }
  return true;
}

void add_pods(Scheduler& s, int pods) {
  for (int i = 0; i < pods; ++i) {
    std::string name = "pod-" + std::to_string(i);
    api::ResourceClaim c;
    c.metadata.name = name + "-gpu";
    c.metadata.namespace_ = "default";
    c.metadata.uid = "uid-c-" + std::to_string(i);
    c.metadata.resourceVersion = "10";
    api::DeviceRequest r;
    r.name = "gpu";
    r.exactly = api::ExactDeviceRequest{};
    r.exactly->deviceClassName = "gpu.nvidia.com";
    r.exactly->allocationMode = "ExactCount";
    r.exactly->count = 1;
    c.spec.devices.requests.push_back(r);
    s.handle(Event{Event::Op::kUpsert, c});
    api::Pod p;
    p.metadata.name = name;
    p.metadata.namespace_ = "default";
    p.metadata.uid = "uid-p-" + std::to_string(i);
    api::PodResourceClaim rc;
    rc.name = "gpu";
    rc.resourceClaimName = c.metadata.name;
    p.spec.resourceClaims.push_back(rc);
    p.spec.containers.push_back(api::Container{});
    p.status.phase = "Pending";
    s.handle(Event{Event::Op::kUpsert, p});
  }
}

// args: nodes, gpus per node, pods, 1 = the simulated NVIDIA driver's slices,
// 1 = first-fit policy (else packing)
void BM_ScheduleClaimPods(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const int gpus = static_cast<int>(state.range(1));
  const int pods = static_cast<int>(state.range(2));
  const bool sim = state.range(3) != 0;
  SchedulerOptions so;
  if (state.range(4) != 0) so.policy = alloc::Policy::kFirstFit;
  int64_t total = 0;
  for (auto _ : state) {
    state.PauseTiming();
    common::FakeClock clock;
    NoopBinder binder;
    auto s = std::make_unique<Scheduler>(binder, clock, so);
    if (sim) {
      if (!add_sim_cluster(*s, nodes, gpus)) {
        state.SkipWithError("simulated inventory failed");
        break;
      }
    } else {
      add_cluster(*s, nodes, gpus);
    }
    add_pods(*s, pods);
    s->cache().snapshot();  // the inventory is built once, before the pods arrive
    state.ResumeTiming();
    int cycles = s->run_until_idle();
    state.PauseTiming();
    const int want = std::min(pods, nodes * gpus);
    if (cycles != pods || s->stats().bound != want || binder.status_writes != want) {
      state.SkipWithError("wrong number of pods bound");
      break;
    }
    total += cycles;
    state.counters["snapshot_builds"] = static_cast<double>(s->cache().snapshot_builds());
    s.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(total);
  state.counters["pods_per_s"] = benchmark::Counter(static_cast<double>(total), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ScheduleClaimPods)
    ->Args({100, 8, 800, 0, 0})    // every pod fits
    ->Args({100, 8, 2000, 0, 0})   // 800 fit, 1200 unschedulable (full scans with explanations)
    ->Args({500, 10, 2000, 0, 0})  // scheduler_perf's DRA shape
    ->Args({100, 8, 800, 1, 0})    // as draplane up publishes (MIG placements, counters)
    ->Args({100, 8, 2000, 1, 0})
    ->Args({100, 8, 800, 1, 1})    // the same, first-fit (cluster_bench's policy)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2);

}  // namespace
}  // namespace draplane::sched

BENCHMARK_MAIN();
