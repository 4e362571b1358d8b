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
    view_groups_.clear();
    for (const auto& [name, node] : cache_.nodes()) add(name);
    reps_stale_ = true;
    return;
  }
  if (changes.nodes.empty() && changes.views.empty()) return;
  // All out first: a changed node must not be compared with another changed
  // one's old state, nor move with its view's group.
  for (const auto& n : changes.nodes) remove(n);
  for (uint64_t v : changes.views) move_view(v);
  for (const auto& n : changes.nodes) {
    if (cache_.node(n) != nullptr) add(n);
  }
  reps_stale_ = true;
}

const std::vector<const std::string*>& NodeClasses::representatives() {
  if (reps_stale_) {
    reps_.clear();
    for (const auto& [key, g] : groups_) reps_.push_back(&*g->nodes.begin());
    reps_stale_ = false;
  }
  return reps_;
}

void NodeClasses::count_view(Group& g, uint64_t view, int delta) {
  int& n = g.views[view];
  n += delta;
  if (n > 0) {
    view_groups_[view].insert(&g);
    return;
  }
  g.views.erase(view);
  auto it = view_groups_.find(view);
  if (it == view_groups_.end()) return;
  it->second.erase(&g);
  if (it->second.empty()) view_groups_.erase(it);
}

void NodeClasses::erase_group(Group& g) {
  for (const auto& [view, n] : g.views) {
    auto it = view_groups_.find(view);
    if (it == view_groups_.end()) continue;
    it->second.erase(&g);
    if (it->second.empty()) view_groups_.erase(it);
  }
  groups_.erase(g.key);  // destroys g
}

void NodeClasses::remove(const std::string& node) {
  auto it = members_.find(node);
  if (it == members_.end()) return;
  Group& g = *it->second.group;
  g.nodes.erase(node);
  count_view(g, it->second.view, -1);
  members_.erase(it);
  if (g.nodes.empty()) erase_group(g);
}

std::pair<uint64_t, NodeClasses::Group*> NodeClasses::find_group(const Inputs& in, const Group* except) {
  uint64_t key = in.hash();
  // A hash match is only a candidate: the group must have the same inputs,
  // else (a collision) probe on.
  for (;;) {
    auto g = groups_.find(key);
    if (g == groups_.end()) return {key, nullptr};
    if (g->second.get() != except && g->second->inputs == in) return {key, g->second.get()};
    if (g->second.get() == except) return {key, nullptr};  // its own key again: kept
    key = key * 0x9E3779B97F4A7C15ULL + 1;
  }
}

void NodeClasses::add(const std::string& node) {
  Inputs in = inputs_of(node);
  const uint64_t view = cache_.view_id(node);  // after inputs_of, which builds the view
  auto [key, g] = find_group(in, nullptr);
  if (g == nullptr) {
    auto owned = std::make_unique<Group>();
    g = owned.get();
    g->key = key;
    g->inputs = std::move(in);
    groups_.emplace(key, std::move(owned));
  }
  g->nodes.insert(node);
  count_view(*g, view, +1);
  members_[node] = Member{g, view};
}

void NodeClasses::move_view(uint64_t view) {
  auto it = view_groups_.find(view);
  if (it == view_groups_.end()) return;
  const std::vector<Group*> groups(it->second.begin(), it->second.end());
  std::vector<std::string> one_by_one;
  for (Group* g : groups) {
    const bool whole = g->views.size() == 1;  // every member sees `view`
    Inputs in;
    if (whole) in = inputs_of(*g->nodes.begin());
    if (!whole || (!in.alone.empty() && g->nodes.size() > 1)) {
      // Members of other views, or members no longer alike: node by node.
      const std::set<std::string>* nodes = cache_.view_nodes(view);
      for (const std::string& n : nodes != nullptr ? *nodes : g->nodes) {
        auto m = members_.find(n);
        if (m != members_.end() && m->second.group == g && m->second.view == view) one_by_one.push_back(n);
      }
      continue;
    }
    auto [key, into] = find_group(in, g);
    if (into != nullptr) {
      // Now alike another group: its members join it.
      for (const std::string& n : g->nodes) {
        Member& m = members_.at(n);
        m.group = into;
        into->nodes.insert(n);
        count_view(*into, m.view, +1);
      }
      erase_group(*g);
      continue;
    }
    if (key != g->key) {
      auto node = groups_.extract(g->key);
      node.key() = key;
      groups_.insert(std::move(node));
      g->key = key;
    }
    g->inputs = std::move(in);
  }
  for (const std::string& n : one_by_one) remove(n);
  for (const std::string& n : one_by_one) add(n);
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
