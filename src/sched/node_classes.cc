#include "sched/node_classes.h"

#include <functional>

#include "sched/cluster_cache.h"
#include "sched/plugins/dynamic_resources.h"

namespace draplane::sched {
namespace {

struct Mixer {
  uint64_t h = 1469598103934665603ULL;
  void mix(uint64_t v) { h = (h ^ v) * 1099511628211ULL; }
  void mix(const std::string& s) { mix(std::hash<std::string>()(s)); }
  void mix128(__int128 v) {
    mix(static_cast<uint64_t>(v));
    mix(static_cast<uint64_t>(v >> 64));
  }
};

}  // namespace

void NodeClasses::refresh() {
  (void)cache_.snapshot();  // a stale snapshot is rebuilt now: its change marks every node
  ClusterCache::NodeChanges changes = cache_.take_node_changes();
  if (changes.all) {
    members_.clear();
    groups_.clear();
    for (const auto& [name, node] : cache_.nodes()) add(name);
    reps_stale_ = true;
    return;
  }
  if (changes.nodes.empty()) return;
  // All out first: a changed node must not be compared with another changed one's old state.
  for (const auto& n : changes.nodes) remove(n);
  for (const auto& n : changes.nodes) {
    if (cache_.node(n) != nullptr) add(n);
  }
  reps_stale_ = true;
}

const std::vector<const std::string*>& NodeClasses::representatives() {
  if (reps_stale_) {
    reps_.clear();
    for (const auto& [key, nodes] : groups_) reps_.push_back(&*nodes.begin());
    reps_stale_ = false;
  }
  return reps_;
}

void NodeClasses::remove(const std::string& node) {
  auto it = members_.find(node);
  if (it == members_.end()) return;
  auto g = groups_.find(it->second.group);
  if (g != groups_.end()) {
    g->second.erase(node);
    if (g->second.empty()) groups_.erase(g);
  }
  members_.erase(it);
}

void NodeClasses::add(const std::string& node) {
  Member m{inputs_of(node)};
  uint64_t key = m.inputs.hash();
  // A hash match is only a candidate: the group's first node must have the
  // same inputs, else (a collision) probe on.
  for (;;) {
    auto g = groups_.find(key);
    if (g == groups_.end() || members_.at(*g->second.begin()).inputs == m.inputs) break;
    key = key * 0x9E3779B97F4A7C15ULL + 1;
  }
  groups_[key].insert(node);
  m.group = key;
  members_[node] = std::move(m);
}

NodeClasses::Inputs NodeClasses::inputs_of(const std::string& node) {
  const api::Node& n = *cache_.node(node);
  Inputs in;
  in.unschedulable = n.spec.unschedulable;
  in.taints = n.spec.taints;
  in.allocatable = n.status.allocatable;
  in.pods = cache_.pods_on_node(node);
  ClusterCache::Requests r = cache_.requested(node);
  in.cpu_milli = r.cpu_milli;
  in.memory = r.memory;
  if (auto devices = dra_.device_signature(node); devices.values) {
    in.devices = std::move(devices);
  } else {
    in.alone = node;  // a group of its own
  }
  return in;
}

uint64_t NodeClasses::Inputs::hash() const {
  Mixer m;
  m.mix(unschedulable ? 1 : 2);
  for (const auto& t : taints) {
    m.mix(t.key);
    m.mix(t.value);
    m.mix(t.effect);
    m.mix(t.timeAdded);
  }
  for (const auto& [name, q] : allocatable) {
    m.mix(name);
    m.mix128(q.nanos());
  }
  m.mix(static_cast<uint64_t>(pods));
  m.mix(static_cast<uint64_t>(cpu_milli));
  m.mix(static_cast<uint64_t>(memory));
  m.mix(devices.hash);
  m.mix(alone);
  return m.h;
}

}  // namespace draplane::sched
