// The seeds' density question, answered with the simulator: on a cluster of
// H100 80GB GPUs, how many pods of an inference service that needs M GiB of
// GPU memory each fit, per way of sharing a GPU:
//   whole         the device plugin's model: one pod per GPU
//   mig           the smallest-instance MIG profile (SPEC §4, H100 80GB) with
//                 at least M GiB: 1g.10gb (9.75 GiB, 7 per GPU), 1g.20gb
//                 (19.62, 4), 3g.40gb (39.50, 2), 7g.80gb (79.25, 1)
//   time-slicing  N equal replicas per GPU (the driver's `shares`); memory is
//                 not isolated, so every replica must hold the largest pod:
//                 N = floor(GPU memory / largest M)
//   mps           a per-client pinned memory limit per pod: each pod takes
//                 ceil(M / GPU memory) of its GPU, so pods of different sizes
//                 pack by their own memory
// Each pod is a share of one GPU in milli-GPU (1000 / instances per GPU for
// mig and time-slicing, the memory fraction rounded up for mps), placed
// through the allocator by the simulator's fill mode (sim/simulator.h) with
// the chosen policy, stopping at the first pod that finds no room.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "common/result.h"
#include "sim/policy.h"

namespace draplane::sim {

struct DensityOptions {
  int nodes = 4;
  int gpus_per_node = 8;
  int64_t gpu_memory_mib = 81559;  // H100 80GB as NVML reports it (SPEC §4)
  int min_gib = 10, max_gib = 16;  // pod sizes asked about; "mix": uniform over them
  int mix_pods = 2000;             // pods of random size offered in the mix
  uint64_t seed = 42;
  PolicyKind policy = PolicyKind::kDraplane;
};

struct DensityRow {
  std::string sharing;  // whole | mig | time-slicing | mps
  std::string pod;      // "10" (GiB) .. or "mix"
  size_t pods = 0;      // placed before the first refusal
  int gpus = 0;
};

// One row per sharing mode and pod size (each size, then the mix).
Result<std::vector<DensityRow>> density(const DensityOptions& options);
// The table, pods per sharing mode (rows) and size (columns); or JSON lines.
void write_density(std::ostream& out, const std::vector<DensityRow>& rows, bool json);

}  // namespace draplane::sim
