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
    group_of_.clear();
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
  auto it = group_of_.find(node);
  if (it == group_of_.end()) return;
  auto g = groups_.find(it->second);
  if (g != groups_.end()) {
    g->second.erase(node);
    if (g->second.empty()) groups_.erase(g);
  }
  group_of_.erase(it);
}

void NodeClasses::add(const std::string& node) {
  uint64_t key = key_of(node);
  // A hash match is only a candidate: the group's first node must have the
  // same inputs, else (a collision, or a node of no device class) probe on.
  for (;;) {
    auto g = groups_.find(key);
    if (g == groups_.end()) {
      groups_[key].insert(node);
      break;
    }
    if (same_inputs(*g->second.begin(), node)) {
      g->second.insert(node);
      break;
    }
    key = key * 0x9E3779B97F4A7C15ULL + 1;
  }
  group_of_[node] = key;
}

uint64_t NodeClasses::key_of(const std::string& node) {
  const api::Node& n = *cache_.node(node);
  Mixer m;
  const uint64_t devices = dra_.device_class(node);
  // No device class: the node is a group of its own (its name in the key
  // makes a collision, checked by same_inputs, the only way to meet another).
  if (devices == 0) m.mix(node);
  m.mix(devices);
  m.mix(n.spec.unschedulable ? 1 : 2);
  for (const auto& t : n.spec.taints) {
    m.mix(t.key);
    m.mix(t.value);
    m.mix(t.effect);
    m.mix(t.timeAdded);
  }
  for (const auto& [name, q] : n.status.allocatable) {
    m.mix(name);
    m.mix128(q.nanos());
  }
  m.mix(static_cast<uint64_t>(cache_.pods_on_node(node)));
  ClusterCache::Requests r = cache_.requested(node);
  m.mix(static_cast<uint64_t>(r.cpu_milli));
  m.mix(static_cast<uint64_t>(r.memory));
  return m.h;
}

bool NodeClasses::same_inputs(const std::string& a, const std::string& b) {
  if (a == b) return true;
  const api::Node* x = cache_.node(a);
  const api::Node* y = cache_.node(b);
  if (x == nullptr || y == nullptr) return false;
  if (x->spec.unschedulable != y->spec.unschedulable || x->spec.taints != y->spec.taints ||
      x->status.allocatable != y->status.allocatable || cache_.pods_on_node(a) != cache_.pods_on_node(b)) {
    return false;
  }
  ClusterCache::Requests ra = cache_.requested(a), rb = cache_.requested(b);
  if (ra.cpu_milli != rb.cpu_milli || ra.memory != rb.memory) return false;
  return dra_.same_devices(a, b);
}

}  // namespace draplane::sched
