// The simulator's compact view of the cluster is the placement module's
// (placement/model.h, shared with the live scheduler's Score plugin); this
// header adds how the simulator builds it from the trace's rows. Every
// placement is made by the DRA allocator (sim/dra.h) and this view is updated
// from what the allocator returned, so the two never disagree (tests check it).
#pragma once

#include "placement/model.h"
#include "sim/trace.h"

namespace draplane::sim {

using placement::after_share;
using placement::after_whole;
using placement::Demand;
using placement::FragmentationMemo;
using placement::kMaxGpus;
using placement::kMilli;
using placement::ModelTable;
using placement::node_fragmentation;
using placement::NodeState;
using placement::typical_shapes;
using placement::TypicalShape;

NodeState make_node_state(const NodeSpec& spec, ModelTable& models);
Demand make_demand(const TaskSpec& task, const ModelTable& models);

}  // namespace draplane::sim
