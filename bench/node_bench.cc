// Node-side costs: building the ResourceSlices of a node (done on every inventory
// or health change) and a prepare/unprepare cycle on simulated GPUs (the kubelet
// path; upstream drivers take tens to hundreds of milliseconds, dominated by NVML
// and the API round trip, which are not measured here).
#include <benchmark/benchmark.h>

#include <filesystem>

#include <fmt/format.h>

#include "node/prepare.h"
#include "node/sim.h"
#include "node/slices.h"

namespace draplane::node {
namespace {

void BM_BuildSlices(benchmark::State& state) {
  auto gpus = *parse_sim_spec(fmt::format("{}xH100", state.range(0)), SimOptions{});
  SliceOptions o;
  o.node_name = "node-a";
  size_t devices = 0;
  for (auto _ : state) {
    auto slices = build_slices(gpus, o);
    if (!slices) state.SkipWithError("build_slices failed");
    devices = 0;
    for (const auto& s : *slices) devices += s.spec.devices.size();
    benchmark::DoNotOptimize(slices);
  }
  if (devices != static_cast<size_t>(26 * state.range(0))) state.SkipWithError("unexpected device count");
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(devices));
  state.counters["devices"] = static_cast<double>(devices);
}
BENCHMARK(BM_BuildSlices)->Arg(1)->Arg(8)->Arg(64);

void BM_PrepareUnprepare(benchmark::State& state) {
  SimBackend sim(*parse_sim_spec("8xH100", SimOptions{}));
  RecordingRunner runner;
  auto dir = std::filesystem::temp_directory_path() / "draplane-node-bench";
  std::filesystem::remove_all(dir);
  PrepareOptions o;
  o.node_name = "node-a";
  o.cdi_dir = (dir / "cdi").string();
  o.plugin_dir = (dir / "plugin").string();
  auto ds = *DeviceState::create(sim, runner, o, "boot");
  api::AllocationResult a;
  api::DeviceRequestAllocationResult r;
  r.request = "gpu";
  r.driver = "gpu.nvidia.com";
  r.pool = "node-a";
  r.device = state.range(0) ? "gpu-3-mig-3g40gb-9-4" : "gpu-3";
  a.devices.results.push_back(r);
  for (auto _ : state) {
    auto p = ds->prepare({"default", "c", "uid-1"}, a);
    if (!p || p->size() != 1) state.SkipWithError("prepare failed");
    if (!ds->unprepare("uid-1").ok()) state.SkipWithError("unprepare failed");
  }
  state.SetItemsProcessed(state.iterations());
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_PrepareUnprepare)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace draplane::node

BENCHMARK_MAIN();
