// Hand-worked nodes and tasks for the policy tests (the simulator's compact view).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/model.h"

namespace draplane::sim::testing {

// A node with `cpu_left` of 64 cores, 1 TiB of memory, GPUs with `left` milli each.
inline NodeState node(int64_t cpu_left, std::vector<int32_t> left, int model = 0) {
  NodeState n;
  n.cpu_cap = 64000;
  n.cpu_left = cpu_left;
  n.mem_cap = n.mem_left = 1 << 20;
  n.model = model;
  n.gpus = static_cast<int>(left.size());
  for (size_t i = 0; i < left.size(); ++i) n.left[i] = left[i];
  return n;
}

// A task of `cpu` milli CPU, 1 GiB, `num` GPUs of `milli` each.
inline Demand demand(int64_t cpu, int num, int32_t milli) {
  Demand d;
  d.cpu = cpu;
  d.memory = 1024;
  d.num = num;
  d.milli = milli;
  return d;
}

}  // namespace draplane::sim::testing
