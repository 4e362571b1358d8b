// ns per selector evaluation against one bound device (the allocator's hot path).
// Setup (compile, bind) is outside the loop; each iteration checks the result.
// Upstream reference: cel-go evaluates such selectors in roughly 200-1000 ns,
// plus building the attribute maps per device and evaluation (compile.go's
// DeviceMatches), which draplane avoids by binding once.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <iostream>

#include "cel/cel.h"

namespace {

using draplane::cel::DeviceBinding;

draplane::api::Device make_device() {
  draplane::api::Device d;
  d.name = "gpu-0";
  d.attributes["productName"].string_ = "NVIDIA H100 80GB HBM3";
  d.attributes["architecture"].string_ = "Hopper";
  d.attributes["brand"].string_ = "Nvidia";
  d.attributes["index"].int_ = 0;
  d.attributes["mig"].bool_ = false;
  d.attributes["uuid"].string_ = "GPU-4f1a7c3e-9b2d-4e8a-8c6f-2a1b3c4d5e6f";
  d.attributes["driverVersion"].version = "550.54.15";
  d.attributes["cudaComputeCapability"].version = "9.0.0";
  d.attributes["resource.kubernetes.io/pcieRoot"].string_ = "pci0000:00";
  d.capacity["memory"].value = *draplane::api::Quantity::parse("80Gi");
  d.capacity["multiprocessors"].value = *draplane::api::Quantity::parse("132");
  return d;
}

void run(benchmark::State& state, const char* expr, bool want) {
  auto program = draplane::cel::compile(expr);
  if (!program) {
    state.SkipWithError(program.error().message().c_str());
    return;
  }
  DeviceBinding device("gpu.nvidia.com", make_device());
  for (auto _ : state) {
    draplane::cel::EvalResult r = (*program)->eval(device);
    if (!r.ok() || r.value != want) {
      state.SkipWithError("unexpected result");
      return;
    }
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_DriverEquals(benchmark::State& s) { run(s, "device.driver == \"gpu.nvidia.com\"", true); }
void BM_CapacityQuantity(benchmark::State& s) {
  run(s, "device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity('40Gi'))", true);
}
void BM_ProductNameStartsWith(benchmark::State& s) {
  run(s, "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H100')", true);
}
void BM_Conjunction4(benchmark::State& s) {
  run(s,
      "device.driver == 'gpu.nvidia.com' && "
      "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA') && "
      "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0 && "
      "device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('535.0.0'))",
      true);
}
void BM_Matches(benchmark::State& s) {
  run(s, "device.attributes['gpu.nvidia.com'].productName.matches('^NVIDIA (A|H)100')", true);
}
void BM_ExistsOverAttributes(benchmark::State& s) {
  run(s, "device.attributes['gpu.nvidia.com'].exists(k, k == 'uuid')", true);
}
void BM_Compile(benchmark::State& state) {
  for (auto _ : state) {
    auto p = draplane::cel::compile("device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity('40Gi'))");
    if (!p) {
      state.SkipWithError("compile failed");
      return;
    }
    benchmark::DoNotOptimize(p);
  }
}
void BM_BindDevice(benchmark::State& state) {
  auto d = make_device();
  for (auto _ : state) {
    DeviceBinding b("gpu.nvidia.com", d);
    benchmark::DoNotOptimize(b);
  }
}

BENCHMARK(BM_DriverEquals);
BENCHMARK(BM_CapacityQuantity);
BENCHMARK(BM_ProductNameStartsWith);
BENCHMARK(BM_Conjunction4);
BENCHMARK(BM_Matches);
BENCHMARK(BM_ExistsOverAttributes);
BENCHMARK(BM_Compile);
BENCHMARK(BM_BindDevice);

}  // namespace

BENCHMARK_MAIN();
