// NodeClasses: the cluster's nodes grouped so that, for a pod without node
// affinity or extended resources, every node of a group gets the same Filter
// verdict and the same scores. Scheduler::find_node then runs the plugins on
// one node per group, the first by name, instead of on every node: on a
// cluster of identical nodes a pod costs a few plugin runs, not one per node
// (issue 29: per-pod cost must not grow with the node count).
//
// Two nodes are in one group when what the default plugins read of a node is
// equal: spec.unschedulable and spec.taints (NodeUnschedulable,
// TaintToleration), status.allocatable (pods for NodeResourcesFit; CPU and
// memory for the placement score), the active pods' count and CPU/memory
// requests, and the device class of DynamicResources (devices equal up to
// node and pool names, in the same state; a node whose view forms no device
// class is a group of its own). Labels and the name are left out: pods that
// read them (nodeSelector, affinity) are scheduled node by node.
//
// Kept current from ClusterCache::take_node_changes(): only nodes that changed
// since the last refresh() read their inputs again and are regrouped, each
// compared with its group's inputs (the hash only finds the candidate group).
// A change of a view several nodes share (an allocation in a pool every node
// sees) moves each group made of that view's nodes at once, reading the inputs
// of its first node only: its members differ from it in nothing else.
//
// Thread-safety: scheduling thread only, as the cache.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "api/types.h"
#include "sched/plugins/dynamic_resources.h"

namespace draplane::sched {

class ClusterCache;

class NodeClasses {
 public:
  NodeClasses(ClusterCache& cache, plugins::DynamicResources& dra) : cache_(cache), dra_(dra) {}

  // Regroups the nodes that changed since the last call.
  void refresh();
  // The first node by name of each group, in no particular order.
  const std::vector<const std::string*>& representatives();
  size_t size() const { return groups_.size(); }
  // The group of `node` as of the last refresh(): nodes with equal groups have
  // equal inputs. Nullopt for a node not seen then.
  std::optional<uint64_t> group_of(const std::string& node) const {
    auto it = members_.find(node);
    if (it == members_.end()) return std::nullopt;
    return it->second.group->key;
  }

 private:
  // What the default Filter and Score plugins read of a node.
  struct Inputs {
    bool unschedulable = false;
    std::vector<api::Taint> taints;
    std::map<std::string, api::Quantity> allocatable;
    int pods = 0;
    int64_t cpu_milli = 0, memory = 0;
    plugins::DynamicResources::Signature devices;  // DynamicResources::device_signature
    std::string alone;              // the node's name when its devices form no class
    bool operator==(const Inputs&) const = default;
    uint64_t hash() const;
  };
  struct Group {
    uint64_t key = 0;
    Inputs inputs;  // every member's
    std::set<std::string> nodes;
    std::unordered_map<uint64_t, int> views;  // ClusterCache::view_id -> members seeing it
  };
  struct Member {
    Group* group = nullptr;
    uint64_t view = 0;
  };
  Inputs inputs_of(const std::string& node);
  void remove(const std::string& node);
  void add(const std::string& node);
  // Moves the members of `view` after it changed.
  void move_view(uint64_t view);
  // The key of the group other than `except` that has inputs `in`, with that
  // group; else the first free key from in's hash on (`except`'s own key
  // counting as free), with null.
  std::pair<uint64_t, Group*> find_group(const Inputs& in, const Group* except);
  void count_view(Group& g, uint64_t view, int delta);
  void erase_group(Group& g);

  ClusterCache& cache_;
  plugins::DynamicResources& dra_;
  std::unordered_map<std::string, Member> members_;                       // by node
  std::unordered_map<uint64_t, std::unique_ptr<Group>> groups_;          // by key
  std::unordered_map<uint64_t, std::unordered_set<Group*>> view_groups_;  // view id -> groups with its nodes
  std::vector<const std::string*> reps_;
  bool reps_stale_ = true;
};

}  // namespace draplane::sched
