// Gangs, queues and preemption through the scheduler with a no-op binder
// (issue 27's scale): 1,000 nodes x 8 GPUs.
// - BM_GangsUnderQueues: 200 gangs of 8 single-GPU pods and 400 single pods,
//   spread over 4 KAI queues of equal weight; the time per pod placed (a gang
//   decision per member).
// - BM_VictimSearch: the cluster full of low-priority single-GPU pods; one
//   high-priority pod's cycle after a same-shaped pod's failure was remembered
//   on every node: the victim search (what-if filters with candidates
//   removed, on up to 100 candidate nodes as upstream) and its evictions;
//   with the nodes alike (one node examined for all) and with every node
//   distinct (each examined on its own).
// Setup is outside the timed region.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "sched/scheduler.h"

namespace draplane::sched {
namespace {

// Accepts every write; counts bindings and deletions.
class CountingBinder final : public Binder {
 public:
  int64_t bound = 0, deleted = 0;
  Result<void> bind(const api::Pod&, const std::string&) override {
    ++bound;
    return {};
  }
  Result<void> delete_pod(const api::Pod&) override {
    ++deleted;
    return {};
  }
  Result<void> update_pod_status(const api::Pod&, const std::function<void(api::Pod&)>&) override { return {}; }
  Result<api::ResourceClaim> update_claim_status(const api::ResourceClaim& c) override { return next_version(c); }
  Result<api::ResourceClaim> update_claim(const api::ResourceClaim& c) override { return next_version(c); }
  Result<api::ResourceClaim> create_claim(const api::ResourceClaim& c) override { return next_version(c); }

 private:
  api::ResourceClaim next_version(api::ResourceClaim c) {
    c.metadata.resourceVersion = std::to_string(++version_);
    return c;
  }
  int64_t version_ = 1000;
};

// Node `name` and its pool of `gpus` whole GPUs (gpu-0 ...), as events.
std::vector<Event> gpu_node(const std::string& name, int gpus) {
  api::ResourceSlice pool;
  pool.metadata.name = name + "-gpus";
  pool.spec = api::ResourceSliceSpec{};
  pool.spec.driver = "gpu.nvidia.com";
  pool.spec.pool = api::ResourcePool{name, 1, 1};
  pool.spec.nodeName = name;
  pool.spec.devices.resize(gpus);
  for (int g = 0; g < gpus; ++g) pool.spec.devices[g].name = "gpu-" + std::to_string(g);
  api::Node n;
  n.metadata.name = name;
  n.status.allocatable["pods"] = api::Quantity::from_int(110);
  return {Event{Event::Op::kUpsert, std::move(n)}, Event{Event::Op::kUpsert, std::move(pool)}};
}

void add_cluster(Scheduler& s, int nodes, int gpus) {
  api::DeviceClass any_gpu;
  any_gpu.metadata.name = "gpu.nvidia.com";
  any_gpu.spec.selectors = {api::DeviceSelector{api::CELDeviceSelector{"device.driver == 'gpu.nvidia.com'"}}};
  s.handle(Event{Event::Op::kUpsert, any_gpu});
  for (int n = 0; n < nodes; ++n) {
    for (const auto& e : gpu_node("node-" + std::to_string(n), gpus)) s.handle(e);
  }
}

// A scheduler on the cluster, with its clock and binder.
struct Fixture {
  common::FakeClock clock;
  CountingBinder binder;
  std::unique_ptr<Scheduler> s;
  explicit Fixture(int nodes) : s(std::make_unique<Scheduler>(binder, clock)) { add_cluster(*s, nodes, 8); }
};

// One pod with a claim for one GPU; `node` set: already running there (its
// claim allocated to device `gpu`).
void add_pod(Scheduler& s, const std::string& name, int32_t priority, std::map<std::string, std::string> labels,
             std::map<std::string, std::string> annotations, const std::string& node = "", int gpu = 0,
             int64_t cpu_milli = 0, bool never_preempts = false) {
  api::ResourceClaim c;
  c.metadata.name = name;
  c.metadata.namespace_ = "default";
  c.metadata.uid = "uid-c-" + name;
  c.metadata.resourceVersion = "10";
  api::ExactDeviceRequest one_gpu;
  one_gpu.deviceClassName = "gpu.nvidia.com";
  one_gpu.allocationMode = "ExactCount";
  one_gpu.count = 1;
  c.spec.devices.requests.resize(1);
  c.spec.devices.requests[0].name = "gpu";
  c.spec.devices.requests[0].exactly = std::move(one_gpu);
  api::Pod p;
  p.metadata.name = name;
  p.metadata.namespace_ = "default";
  p.metadata.uid = "uid-p-" + name;
  p.metadata.labels = std::move(labels);
  p.metadata.annotations = std::move(annotations);
  p.spec.priority = priority;
  if (never_preempts) p.spec.preemptionPolicy = "Never";
  api::PodResourceClaim rc;
  rc.name = "gpu";
  rc.resourceClaimName = name;
  p.spec.resourceClaims.push_back(rc);
  p.spec.containers.push_back(api::Container{});
  if (cpu_milli > 0) p.spec.containers[0].resources.requests["cpu"] = api::Quantity::from_milli(cpu_milli);
  p.status.phase = node.empty() ? "Pending" : "Running";
  if (!node.empty()) {
    p.spec.nodeName = node;
    api::AllocationResult a;
    a.devices.results.push_back(api::DeviceRequestAllocationResult{});
    auto& res = a.devices.results.back();
    res.request = "gpu";
    res.driver = "gpu.nvidia.com";
    res.pool = node;
    res.device = "gpu-" + std::to_string(gpu);
    c.status.allocation = a;
    c.status.reservedFor.push_back(api::ResourceClaimConsumerReference{"", "pods", name, p.metadata.uid});
  }
  s.handle(Event{Event::Op::kUpsert, c});
  s.handle(Event{Event::Op::kUpsert, p});
}

std::string queue_json(const std::string& name) {
  return "{\"apiVersion\":\"scheduling.run.ai/v2\",\"kind\":\"Queue\",\"metadata\":{\"name\":\"" + name +
         "\"},\"spec\":{\"resources\":{\"gpu\":{\"quota\":0,\"limit\":-1,\"overQuotaWeight\":1}}}}";
}

// args: nodes, gangs (of 8), single pods, 1 = in 4 queues (0: no queue label)
void BM_GangsUnderQueues(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const int gangs = static_cast<int>(state.range(1));
  const int singles = static_cast<int>(state.range(2));
  const bool queued = state.range(3) != 0;
  auto label = [&](int i) {
    return queued ? std::map<std::string, std::string>{{"kai.scheduler/queue", "q" + std::to_string(i % 4)}}
                  : std::map<std::string, std::string>{};
  };
  int64_t placed = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto fx = std::make_unique<Fixture>(nodes);
    auto& s = fx->s;
    auto& binder = fx->binder;
    for (int q = 0; q < 4; ++q) s->post_queue(queue_json("q" + std::to_string(q)), false);
    s->drain();
    for (int g = 0; g < gangs; ++g) {
      for (int m = 0; m < 8; ++m) {
        add_pod(*s, "g" + std::to_string(g) + "-" + std::to_string(m), 0, label(g),
                {{"draplane.io/gang", "g" + std::to_string(g)}, {"draplane.io/gang-min-member", "8"}});
      }
    }
    for (int i = 0; i < singles; ++i) {
      add_pod(*s, "s" + std::to_string(i), 0, label(i), {});
    }
    s->cache().snapshot();
    state.ResumeTiming();
    s->run_until_idle();
    state.PauseTiming();
    if (binder.bound != gangs * 8 + singles) {
      state.SkipWithError(("placed " + std::to_string(binder.bound) + " pods").c_str());
      break;
    }
    placed += binder.bound;
    fx.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(placed);
  state.counters["us_per_pod"] =
      benchmark::Counter(static_cast<double>(placed), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_GangsUnderQueues)->Args({1000, 200, 400, 1})->Args({1000, 200, 400, 0})->Unit(benchmark::kMillisecond)->Iterations(1);

// args: nodes; 1 = nodes alike (one group, victims alike), 0 = every node
// distinct; 1 = issue 27's mix (the pods in 4 KAI queues by node, every other
// node's 8 pods one gang), 0 = single pods, no queues
void BM_VictimSearch(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const bool alike = state.range(1) != 0;
  const bool mixed = state.range(2) != 0;
  double search_seconds = 0;
  int searches = 0;
  auto queue = [&](int n) {
    return mixed ? std::map<std::string, std::string>{{"kai.scheduler/queue", "q" + std::to_string(n % 4)}}
                 : std::map<std::string, std::string>{};
  };
  for (auto _ : state) {
    state.PauseTiming();
    auto fx = std::make_unique<Fixture>(nodes);
    auto& s = fx->s;
    if (mixed) {
      for (int q = 0; q < 4; ++q) s->post_queue(queue_json("q" + std::to_string(q)), false);
      s->drain();
    }
    for (int n = 0; n < nodes; ++n) {
      std::map<std::string, std::string> gang;
      if (mixed && n % 2 == 0) gang = {{"draplane.io/gang", "gang-" + std::to_string(n)}, {"draplane.io/gang-min-member", "8"}};
      for (int g = 0; g < 8; ++g) {
        // Not alike: each node's first pod requests its own amount of CPU, so
        // no two nodes are in one group and each is examined on its own.
        add_pod(*s, "low-" + std::to_string(n) + "-" + std::to_string(g), 0, queue(n), gang, "node-" + std::to_string(n),
                g, alike || g > 0 ? 0 : n + 1);
      }
    }
    // A pod of the same shape and priority 0 is tried first (untimed): it fits
    // nowhere and never preempts, and its failures on every node are
    // remembered for its claim shape, so the timed cycle is the victim search
    // (and the evictions), not the failed Filter pass over all nodes.
    add_pod(*s, "probe", 0, queue(0), {}, "", 0, 0, true);
    s->cache().snapshot();
    if (s->schedule_one().outcome != Outcome::kUnschedulable || fx->binder.deleted != 0) {
      state.SkipWithError("the probe pod fitted or preempted");
      break;
    }
    add_pod(*s, "urgent", 1000, queue(0), {});
    const double searched = s->stats().preemption_seconds;
    state.ResumeTiming();
    CycleResult r = s->schedule_one();
    state.PauseTiming();
    search_seconds += s->stats().preemption_seconds - searched;
    ++searches;
    // The cheapest victims: one single pod (a gang would be eight).
    if (r.outcome != Outcome::kUnschedulable || fx->binder.deleted != 1) {
      state.SkipWithError(("evicted " + std::to_string(fx->binder.deleted) + " pods, not one").c_str());
      break;
    }
    fx.reset();
    state.ResumeTiming();
  }
  // The search alone (the rest of the timed cycle is the pod's PreFilter, its
  // failed Filter pass and the evictions).
  if (searches > 0) state.counters["search_ms"] = 1000 * search_seconds / searches;
}
BENCHMARK(BM_VictimSearch)
    ->Args({100, 1, 0})
    ->Args({1000, 1, 0})
    ->Args({1000, 1, 1})
    ->Args({100, 0, 0})
    ->Args({1000, 0, 0})
    ->Args({1000, 0, 1})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

}  // namespace
}  // namespace draplane::sched

BENCHMARK_MAIN();
