// draplane's own placement policy: FGD's fragmentation gradient, with two
// changes that each come from measuring where FGD leaves GPUs unallocated on
// the Alibaba trace (docs/simulation.md, "draplane's policy"):
//
//  1. CPU strands GPUs. Most of the trace's GPUs sit on 8-GPU nodes with 12
//     cores per GPU, while GPU tasks ask ~11 cores per GPU and CPU-only tasks
//     up to 32 cores. A node whose CPU is gone strands its idle GPUs, and FGD
//     only sees that once a task shape no longer fits (a step). The measure
//     here adds, per node, the idle GPU milli that the node's CPU left cannot
//     feed at the CPU-per-GPU ratio of the GPU tasks seen so far, weighted by
//     kStrandWeight: CPU-heavy tasks drift to CPU-rich nodes before any GPU is
//     stranded.
//  2. The task-size distribution is learned online from the arrivals so far
//     (all shapes, not FGD's 95% most frequent, which drops exactly the small
//     shares that fill the gaps big shares leave), and the score is the exact
//     fragmentation decrease instead of FGD's truncated sigmoid.
//
// Everything here is a function of (node state, task, the distribution seen
// so far): no simulator internals, so a live scheduler's Score step can call
// it with its own node view (see ShapeLearner and draplane_score).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "placement/model.h"

namespace draplane::placement {

// Weight of CPU-stranded GPU milli against FGD's fragmented milli (measured:
// 0.5..20 all help on the default trace; 4 is the middle of the plateau).
constexpr double kStrandWeight = 4.0;

// The task shapes seen so far and the CPU GPU tasks ask per GPU milli: what a
// scheduler knows at placement time. observe() every arrival; refresh_due()
// says when the distribution moved enough to re-derive the measure (at 1, 2,
// 4, ... arrivals, then every 1024).
class ShapeLearner {
 public:
  void observe(const Demand& d);
  bool refresh_due() const;
  // The shapes seen, by frequency: all of them (coverage 1), or FGD's most
  // frequent ones covering `coverage` of the tasks.
  std::vector<TypicalShape> shapes(double coverage = 1.0) const;
  // Milli CPU per GPU milli over the GPU tasks seen (0 before the first).
  double cpu_per_milli() const;
  size_t seen() const { return seen_; }

 private:
  std::vector<Demand> demands_;
  size_t seen_ = 0;
  int64_t gpu_cpu_ = 0, gpu_milli_ = 0;
};

// Points a FragmentationMemo at the learned distribution (clears it).
void apply_learned(const ShapeLearner& learner, std::vector<TypicalShape>& shapes, FragmentationMemo& memo);

// Node score, higher is better: the decrease of the node's fragmentation
// (with CPU stranding) when the task lands there, in 1/16 milli. `frag_now`
// is memo(node). The task must fit the node.
int64_t draplane_score(const NodeState& node, const Demand& d, FragmentationMemo& memo, double frag_now);

// The GPU a GPU share goes to on that node (the one whose share grows the
// measure least); whole-GPU tasks take free GPUs by index.
int draplane_share_gpu(const NodeState& node, const Demand& d, FragmentationMemo& memo);

}  // namespace draplane::placement
