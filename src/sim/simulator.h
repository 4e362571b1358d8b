// Two modes. `fill`, the FGD paper's experiment: the trace's tasks in random order,
// then random copies of them, until the GPU they ask for reaches `inflate` times
// the cluster's GPU capacity (fewer when the trace asks for more); every task
// arrives once and never leaves; each is placed by the policy or fails.
// Measured after every arrival: GPU milli allocated, fragmented (for the trace's
// typical task shapes) and idle; the curve is their mean per arrived-workload
// percent, as the paper's analysis scripts compute it
// (experiments/analysis/merge_alloc_discrete.py).
// `replay`: every task arrives at its creation_time and leaves at its
// deletion_time (departures first at equal times); a task that found no room
// is not retried. The curve is then by percent of the trace's time span, and
// the result adds the time-weighted mean and the peak of the allocation.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/result.h"
#include "sim/model.h"
#include "sim/policy.h"
#include "sim/trace.h"

namespace draplane::sim {

enum class Mode { kFill, kReplay };

// Options of one run, either mode.
struct FillOptions {
  Mode mode = Mode::kFill;
  PolicyKind policy = PolicyKind::kDraplane;
  uint64_t seed = 42;
  double inflate = 1.3;
  // Stop after this many arrivals (0 = all): short runs for tests.
  // (fill only:)
  size_t max_tasks = 0;
  // The tasks once each in the trace's order, no shuffle and no copies
  // (hand-worked tests).
  bool in_trace_order = false;
  // Stop at the first task that finds no room (how many fit; sim/density.h).
  bool stop_at_first_failure = false;
  // Check after every placement that the simulator's view of each GPU equals
  // what the allocator's AllocatedState records, and that no node is
  // over-allocated (slow; tests).
  bool verify = false;
  // Called every `progress_every` arrivals (long runs report on stderr).
  std::function<void(size_t done, size_t total)> progress;
  size_t progress_every = 0;
};

// One point per arrived-workload percent (0..inflate*100) that has arrivals;
// in replay mode per percent of the trace's time span (0..100).
struct CurvePoint {
  int arrived_pct = 0;
  double allocated = 0;   // fraction of GPU capacity allocated
  double fragmented = 0;  // fraction of GPU capacity fragmented
  double frag_rate = 0;   // fragmented / idle
};

struct FillResult {
  std::string mode = "fill";
  std::string policy;
  uint64_t seed = 0;
  size_t tasks = 0, scheduled = 0, failed = 0;
  size_t gpu_tasks_failed = 0;
  int64_t capacity_milli = 0;
  int64_t arrived_milli = 0;
  int64_t allocated_milli = 0;
  double gpu_allocation_ratio = 0;       // end of run
  double allocation_ratio_at_100 = -1;   // when arrivals reached 100% (-1: never)
  double fragmented_gpu_ratio = 0;       // end of run, of capacity
  double fragmentation_rate = 0;         // end of run, of idle GPU
  double mean_allocation_ratio = -1;     // replay: time-weighted over the trace's span (-1 in fill)
  double peak_allocation_ratio = -1;     // replay: highest after any event (-1 in fill)
  double seconds = 0;
  int64_t allocator_calls = 0;
  std::vector<CurvePoint> curve;
};

// The task sequence of fill mode (deterministic in the seed).
std::vector<size_t> fill_sequence(const std::vector<TaskSpec>& tasks, int64_t capacity_milli, double inflate,
                                  Rng& rng);

// Runs options.mode. Replay needs every task's creation_time (kInvalid otherwise).
Result<FillResult> run_fill(const std::vector<NodeSpec>& nodes, const std::vector<TaskSpec>& tasks,
                            const FillOptions& options);

}  // namespace draplane::sim
