// Fill mode end to end through the DRA allocator: hand-worked placements on tiny
// clusters, and invariants over short runs of the shipped trace.
#include "sim/simulator.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "sim/dra.h"

namespace draplane::sim {
namespace {

namespace fs = std::filesystem;

NodeSpec gpu_node(const std::string& name, int gpus, const std::string& model, int64_t cpu = 16000) {
  return NodeSpec{name, cpu, 65536, gpus, model};
}

TaskSpec task(const std::string& name, int num, int64_t milli, int64_t cpu = 1000,
              std::vector<std::string> models = {}) {
  TaskSpec t;
  t.name = name;
  t.cpu_milli = cpu;
  t.memory_mib = 1024;
  t.num_gpu = num;
  t.gpu_milli = num == 0 ? 0 : milli;
  t.models = std::move(models);
  return t;
}

FillOptions ordered(PolicyKind policy) {
  FillOptions o;
  o.policy = policy;
  o.in_trace_order = true;
  o.verify = true;
  return o;
}

TEST(Fill, FirstFitTakesTheAllocatorsFirstDevices) {
  std::vector<NodeSpec> nodes{gpu_node("n0", 1, "T4"), gpu_node("n1", 2, "P100")};
  // n0/gpu0 takes two shares of 400 (200 left); the third goes to n1/gpu0;
  // the whole GPU to n1/gpu1; two more whole GPUs fit nowhere.
  std::vector<TaskSpec> tasks{task("t0", 1, 400), task("t1", 1, 400), task("t2", 1, 400), task("t3", 1, 1000),
                              task("t4", 2, 1000)};
  auto r = run_fill(nodes, tasks, ordered(PolicyKind::kFirstFit));
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->scheduled, 4u);
  EXPECT_EQ(r->failed, 1u);
  EXPECT_EQ(r->capacity_milli, 3000);
  EXPECT_EQ(r->allocated_milli, 2200);
  EXPECT_EQ(r->allocator_calls, 4);
  EXPECT_DOUBLE_EQ(r->gpu_allocation_ratio, 2200.0 / 3000);
}

TEST(Fill, ModelsCpuAndMemoryAreChecked) {
  std::vector<NodeSpec> nodes{gpu_node("n0", 1, "T4", 4000), gpu_node("n1", 2, "P100", 16000)};
  TaskSpec big_memory = task("mem", 0, 0);
  big_memory.memory_mib = 1 << 20;
  std::vector<TaskSpec> tasks{task("a100", 1, 1000, 1000, {"A100"}),  // no such model
                              task("p100", 1, 1000, 1000, {"P100"}),  // n1 although n0 comes first
                              task("cpu", 1, 500, 8000),               // only n1 has the CPU
                              big_memory};
  for (auto policy : all_policies()) {
    auto r = run_fill(nodes, tasks, ordered(policy));
    ASSERT_TRUE(r) << policy_name(policy) << ": " << r.error().message();
    EXPECT_EQ(r->scheduled, 2u) << policy_name(policy);
    EXPECT_EQ(r->allocated_milli, 1500) << policy_name(policy);
  }
}

TEST(Fill, FgdKeepsWholeGpusForWholeGpuTasks) {
  // Typical shapes: a share of 500 and two whole GPUs on one node. Best fit and
  // FGD both put the second share on the GPU the first one used, leaving a
  // whole node free for the 2-GPU task.
  std::vector<NodeSpec> nodes{gpu_node("n0", 2, "T4"), gpu_node("n1", 2, "T4")};
  std::vector<TaskSpec> tasks{task("s0", 1, 500), task("s1", 1, 500), task("w0", 2, 1000)};
  for (auto policy : {PolicyKind::kFgd, PolicyKind::kBestFit, PolicyKind::kGpuPacking}) {
    auto r = run_fill(nodes, tasks, ordered(policy));
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->failed, 0u) << policy_name(policy);
    EXPECT_EQ(r->allocated_milli, 3000) << policy_name(policy);
  }
}

TEST(Fill, GpuClusteringSeparatesKindsBestFitPacks) {
  // Two empty 2-GPU nodes (the first share lands on either: call it A).
  // gpu-clustering: the 1-GPU task avoids A (another kind there: 25*6500/8000
  // = 20 against 18 + 25 = 43 for the empty node B); the second share joins
  // the first on A (95 against 21) on its tightest GPU. No node keeps two
  // whole GPUs: the 2-GPU task fails.
  // best-fit: the 1-GPU task goes to A (score 91 against 87: less left after),
  // so B stays whole for the 2-GPU task.
  std::vector<NodeSpec> nodes{gpu_node("n0", 2, "T4"), gpu_node("n1", 2, "T4")};
  std::vector<TaskSpec> tasks{task("s0", 1, 500), task("w1", 1, 1000), task("s2", 1, 300), task("w2", 2, 1000)};
  auto clustering = run_fill(nodes, tasks, ordered(PolicyKind::kGpuClustering));
  ASSERT_TRUE(clustering) << clustering.error().message();
  EXPECT_EQ(clustering->failed, 1u);
  EXPECT_EQ(clustering->allocated_milli, 1800);
  auto best_fit = run_fill(nodes, tasks, ordered(PolicyKind::kBestFit));
  ASSERT_TRUE(best_fit) << best_fit.error().message();
  EXPECT_EQ(best_fit->failed, 0u);
  EXPECT_EQ(best_fit->allocated_milli, 3800);
}

TEST(Fill, TracesWithoutGpuTasksAreNotInflated) {
  std::vector<NodeSpec> nodes{gpu_node("n0", 1, "T4")};
  std::vector<TaskSpec> tasks{task("c0", 0, 0), task("c1", 0, 0)};
  Rng rng(1);
  EXPECT_EQ(fill_sequence(tasks, 1000, 1.3, rng).size(), 2u);
  FillOptions o;
  auto r = run_fill(nodes, tasks, o);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->tasks, 2u);
  EXPECT_EQ(r->scheduled, 2u);
  EXPECT_EQ(r->allocation_ratio_at_100, -1);
}

TaskSpec timed(TaskSpec t, int64_t created, std::optional<int64_t> deleted) {
  t.creation_time = created;
  t.deletion_time = deleted;
  return t;
}

TEST(Replay, DeparturesFreeDevicesBeforeArrivals) {
  std::vector<NodeSpec> nodes{gpu_node("n0", 1, "T4")};
  // a holds the whole GPU over [0, 10); b arrives at 5 and fails (it is not
  // retried); d (300 milli) arrives at 10, when a leaves (departures first),
  // and never leaves; c (700) arrives at 15 next to d and leaves at 30.
  std::vector<TaskSpec> tasks{timed(task("a", 1, 1000), 0, 10), timed(task("b", 1, 1000), 5, 20),
                              timed(task("c", 1, 700), 15, 30), timed(task("d", 1, 300), 10, std::nullopt)};
  FillOptions o;
  o.mode = Mode::kReplay;
  o.policy = PolicyKind::kBestFit;
  o.verify = true;  // after every arrival and departure: the view equals the allocator's state
  auto r = run_fill(nodes, tasks, o);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->mode, "replay");
  EXPECT_EQ(r->scheduled, 3u);
  EXPECT_EQ(r->failed, 1u);
  EXPECT_EQ(r->allocated_milli, 300);  // d stays
  // 1000 over [0,10), 300 over [10,15), 1000 over [15,30): 10000+1500+15000 = 26500 of 30*1000.
  EXPECT_DOUBLE_EQ(r->mean_allocation_ratio, 26500.0 / 30000);
  EXPECT_DOUBLE_EQ(r->peak_allocation_ratio, 1.0);
  EXPECT_EQ(r->allocation_ratio_at_100, -1);
}

TEST(Replay, NeedsCreationTimes) {
  std::vector<NodeSpec> nodes{gpu_node("n0", 1, "T4")};
  FillOptions o;
  o.mode = Mode::kReplay;
  auto r = run_fill(nodes, {task("a", 1, 1000)}, o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), Code::kInvalid);
  EXPECT_EQ(r.error().message(), "task a: replay needs creation_time (the trace has no such column)");
}

TEST(Fill, ClaimsAreDraClaims) {
  TaskSpec share = task("s", 1, 250, 1000, {"T4", "P100"});
  auto c = task_claim(share, {3});
  ASSERT_EQ(c.spec.devices.requests.size(), 1u);
  const auto& e = *c.spec.devices.requests[0].exactly;
  EXPECT_EQ(e.deviceClassName, "gpu.sim.draplane.io");
  EXPECT_EQ(e.count, 1);
  ASSERT_TRUE(e.capacity);
  EXPECT_EQ(e.capacity->requests.at("milli").value(), 250);
  ASSERT_EQ(e.selectors.size(), 2u);
  EXPECT_EQ(e.selectors[0].cel->expression, "device.attributes[\"gpu.sim.draplane.io\"].productName in [\"T4\", \"P100\"]");
  EXPECT_EQ(e.selectors[1].cel->expression, "device.attributes[\"gpu.sim.draplane.io\"].index in [3]");
  auto whole = task_claim(task("w", 2, 1000), {});
  EXPECT_FALSE(whole.spec.devices.requests[0].exactly->capacity);
  EXPECT_EQ(whole.spec.devices.requests[0].exactly->count, 2);
  auto slices = gpu_slices({gpu_node("n0", 2, "T4"), gpu_node("cpu", 0, "")});
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0].spec.pool.name, "n0");
  EXPECT_EQ(slices[0].spec.devices.size(), 2u);
  EXPECT_TRUE(slices[0].spec.devices[1].allowMultipleAllocations.value_or(false));
}

// --- the shipped trace -------------------------------------------------------

std::string trace_dir() { return (fs::path(DRAPLANE_SHARED_DIR) / "data" / "openb").string(); }

struct Openb {
  std::vector<NodeSpec> nodes;
  std::vector<TaskSpec> tasks;
};

const Openb* openb() {
  static const Openb* data = []() -> const Openb* {
    auto nodes = load_nodes(default_node_file(trace_dir()));
    auto tasks = load_tasks(resolve_task_file("default", trace_dir()));
    if (!nodes || !tasks) return nullptr;
    return new Openb{std::move(*nodes), std::move(*tasks)};
  }();
  return data;
}

#define REQUIRE_TRACE() \
  if (openb() == nullptr) GTEST_SKIP() << "no trace in " << trace_dir()

TEST(FillOpenb, SequenceReachesTheInflatedTarget) {
  REQUIRE_TRACE();
  int64_t capacity = 6212 * 1000;
  Rng rng(42);
  auto seq = fill_sequence(openb()->tasks, capacity, 1.3, rng);
  std::vector<int> seen(openb()->tasks.size());
  int64_t total = 0;
  for (size_t t : seq) {
    ++seen[t];
    total += openb()->tasks[t].total_gpu_milli();
  }
  // The trace asks for less than the target: all of it, then copies.
  for (int s : seen) EXPECT_GE(s, 1);
  EXPECT_GT(seq.size(), openb()->tasks.size());
  EXPECT_GT(total, 1.3 * capacity - 1000);
  EXPECT_LE(total, 1.3 * capacity + 7000);
  Rng again(42);
  EXPECT_EQ(fill_sequence(openb()->tasks, capacity, 1.3, again), seq);
}

TEST(FillOpenb, InvariantsOverShortRuns) {
  REQUIRE_TRACE();
  for (auto policy : all_policies()) {
    FillOptions o;
    o.policy = policy;
    o.max_tasks = 800;
    o.inflate = 1.3;
    o.verify = true;  // the simulator's view equals the allocator's state; nothing over-allocated
    auto r = run_fill(openb()->nodes, openb()->tasks, o);
    ASSERT_TRUE(r) << policy_name(policy) << ": " << r.error().message();
    EXPECT_EQ(r->tasks, 800u);
    EXPECT_EQ(r->scheduled + r->failed, 800u);
    EXPECT_LE(r->allocated_milli, r->capacity_milli);
    for (size_t i = 1; i < r->curve.size(); ++i) {
      EXPECT_GE(r->curve[i].allocated, r->curve[i - 1].allocated) << policy_name(policy) << " at " << i;
    }
    auto again = run_fill(openb()->nodes, openb()->tasks, o);
    ASSERT_TRUE(again);
    EXPECT_EQ(again->allocated_milli, r->allocated_milli) << policy_name(policy);
    ASSERT_EQ(again->curve.size(), r->curve.size());
    for (size_t i = 0; i < r->curve.size(); ++i) {
      EXPECT_EQ(again->curve[i].allocated, r->curve[i].allocated);
      EXPECT_EQ(again->curve[i].fragmented, r->curve[i].fragmented);
    }
  }
}

// The trace's own times keep few tasks running at once: at most 65,590 milli-GPU
// (1.06% of the capacity), as a direct count over the CSV gives.
TEST(FillOpenb, ReplayPeakMatchesTheTrace) {
  REQUIRE_TRACE();
  FillOptions o;
  o.mode = Mode::kReplay;
  o.policy = PolicyKind::kFgd;
  auto r = run_fill(openb()->nodes, openb()->tasks, o);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->tasks, 8152u);
  EXPECT_EQ(r->failed, 0u);
  EXPECT_DOUBLE_EQ(r->peak_allocation_ratio, 65590.0 / 6212000);
}

// The paper's figures (FGD, USENIX ATC'23, mean of seeds 42-51 on the default
// trace at 100% arrived workload): FGD 95.2%, BestFit 92.9%, Random 86.3%;
// the seed spread is a few tenths of a point, one seed lands within one point.
TEST(FillOpenb, ReproducesThePaperWithinAPoint) {
  REQUIRE_TRACE();
  for (auto [policy, paper] : {std::pair{PolicyKind::kFgd, 0.952}, std::pair{PolicyKind::kBestFit, 0.929},
                               std::pair{PolicyKind::kRandom, 0.863}}) {
    FillOptions o;
    o.policy = policy;
    auto r = run_fill(openb()->nodes, openb()->tasks, o);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_NEAR(r->allocation_ratio_at_100, paper, 0.01) << policy_name(policy);
    EXPECT_EQ(r->failed, r->gpu_tasks_failed) << "CPU-only tasks always find room in this trace";
  }
}

// draplane's own policy allocates more than FGD at the end of the default run
// (seed 42: 95.86% against 95.47%; docs/simulation.md has all seeds and traces).
TEST(FillOpenb, DraplaneAllocatesMoreThanFgd) {
  REQUIRE_TRACE();
  FillOptions o;
  o.policy = PolicyKind::kFgd;
  auto fgd = run_fill(openb()->nodes, openb()->tasks, o);
  o.policy = PolicyKind::kDraplane;
  auto own = run_fill(openb()->nodes, openb()->tasks, o);
  ASSERT_TRUE(fgd && own);
  EXPECT_GT(own->gpu_allocation_ratio, fgd->gpu_allocation_ratio + 0.002);
}

}  // namespace
}  // namespace draplane::sim
