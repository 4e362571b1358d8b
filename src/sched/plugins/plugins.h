// The scheduler's plugins (see sched/framework.h), one file each, and the
// default profile: what kube-scheduler's default plugin set does for the
// fields draplane serves.
//
// Thread-safety: as framework.h.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "placement/policy.h"
#include "sched/framework.h"

namespace draplane::sched::plugins {

// Queue sort: higher spec.priority first, then the pod that became active first.
std::unique_ptr<framework::Plugin> new_priority_sort();
// A FilterPlugin named `name` around a check of the node alone (node_filter.h);
// its rejection is UnschedulableAndUnresolvable (evicting pods cannot help).
using NodeCheck = std::optional<std::string> (*)(const api::Pod&, const api::Node&);
std::unique_ptr<framework::Plugin> new_node_check_filter(std::string_view name, NodeCheck check);
// Filters, in kube-scheduler's order.
std::unique_ptr<framework::Plugin> new_node_unschedulable();
std::unique_ptr<framework::Plugin> new_node_affinity();
std::unique_ptr<framework::Plugin> new_taint_toleration();
// Pods per node, and extended resources a node offers itself.
std::unique_ptr<framework::Plugin> new_node_resources_fit(framework::Handle handle);
// Score, after DynamicResources': the node left with the fewest free devices.
std::unique_ptr<framework::Plugin> new_device_packing(framework::Handle handle);
// Score, after DynamicResources': the simulator's placement policy `kind`
// (placement_score.cc); also learns the pods' shapes at Reserve.
std::unique_ptr<framework::Plugin> new_placement_score(framework::Handle handle, placement::PolicyKind kind);

// Registers the default plugins on `fw`, in order (DynamicResources and
// GangScheduling included); the node score is the options' node_policy.
void register_defaults(framework::Framework& fw);

}  // namespace draplane::sched::plugins
