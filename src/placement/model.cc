#include "placement/model.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace draplane::placement {

int ModelTable::id(const std::string& model) {
  int found = find(model);
  if (found >= 0) return found;
  names_.push_back(model);
  return static_cast<int>(names_.size()) - 1;
}

int ModelTable::find(const std::string& model) const {
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == model) return static_cast<int>(i);
  }
  return -1;
}

int64_t NodeState::total_left() const {
  int64_t sum = 0;
  for (int i = 0; i < gpus; ++i) sum += left[i];
  return sum;
}

int NodeState::fully_free() const {
  int n = 0;
  for (int i = 0; i < gpus; ++i) n += left[i] == kMilli;
  return n;
}

int NodeState::gpus_with(int32_t milli) const {
  int n = 0;
  for (int i = 0; i < gpus; ++i) n += left[i] >= milli;
  return n;
}

bool NodeState::fits(const Demand& d) const {
  if (cpu_left < d.cpu || mem_left < d.memory) return false;
  if (d.num == 0) return true;
  return accessible(d) && gpus_with(d.milli) >= d.num;
}

NodeState after_share(const NodeState& node, const Demand& d, int gpu) {
  NodeState n = node;
  n.cpu_left -= d.cpu;
  n.left[gpu] -= d.milli;
  return n;
}

// The simulator's NodeResource.Sub: CPU, then each GPU from the one with the
// least left that fits (stable by index).
NodeState after_whole(const NodeState& node, const Demand& d) {
  NodeState n = node;
  n.cpu_left -= d.cpu;
  std::array<int, kMaxGpus> order{};
  for (int i = 0; i < n.gpus; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.begin() + n.gpus, [&](int a, int b) { return n.left[a] < n.left[b]; });
  int want = d.num;
  for (int k = 0; k < n.gpus && want > 0; ++k) {
    if (n.left[order[k]] >= d.milli) {
      n.left[order[k]] -= d.milli;
      --want;
    }
  }
  return n;
}

std::vector<TypicalShape> typical_shapes(const std::vector<Demand>& tasks, double coverage) {
  // Shape identity as in the FGD simulator's PodResource: CPU, milli, count, models.
  using Key = std::tuple<int64_t, int32_t, int, std::string>;
  std::map<Key, std::pair<double, Demand>> counts;
  for (const auto& d : tasks) {
    auto& slot = counts[Key{d.cpu, d.milli, d.num, d.model_text}];
    if (slot.first == 0) slot.second = d;
    slot.first += 1;
  }
  std::vector<std::pair<Key, std::pair<double, Demand>>> sorted(counts.begin(), counts.end());
  // Most frequent first; equal counts: the larger shape (CPU, milli, count, models) first.
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    if (a.second.first != b.second.first) return a.second.first > b.second.first;
    return a.first > b.first;
  });
  double total = static_cast<double>(tasks.size());
  double wanted = coverage * 100 * total / 100.0;
  double cumulative = 0;
  std::vector<TypicalShape> out;
  for (const auto& [key, value] : sorted) {
    if (cumulative >= wanted) break;
    cumulative += value.first;
    out.push_back(TypicalShape{value.second, value.first / total});
  }
  if (out.size() < sorted.size()) {
    for (auto& s : out) s.frequency /= cumulative / total;
  }
  return out;
}

double node_fragmentation(const NodeState& node, const std::vector<TypicalShape>& shapes) {
  int64_t idle = node.total_left();
  if (idle == 0) return 0;
  double frag = 0;
  for (const auto& s : shapes) {
    const Demand& d = s.demand;
    bool usable = d.num > 0 && node.accessible(d) && node.gpus_with(d.milli) >= d.num && node.cpu_left >= d.cpu;
    if (!usable) {
      frag += s.frequency * static_cast<double>(idle);
      continue;
    }
    int64_t too_small = 0;
    for (int i = 0; i < node.gpus; ++i) {
      if (node.left[i] < d.milli) too_small += node.left[i];
    }
    frag += s.frequency * static_cast<double>(too_small);
  }
  return frag;
}

size_t FragmentationMemo::Hash::operator()(const Key& k) const {
  uint64_t h = static_cast<uint64_t>(k.cpu_left) * 0x9E3779B97F4A7C15ULL ^ static_cast<uint64_t>(k.model + 1);
  for (int32_t v : k.left) h = (h ^ static_cast<uint64_t>(v)) * 0x100000001B3ULL;
  return static_cast<size_t>(h ^ (h >> 29));
}

double FragmentationMemo::operator()(const NodeState& node) {
  Key key{node.cpu_left, node.model, {}};
  for (int i = 0; i < node.gpus; ++i) key.left[i] = node.left[i];
  std::sort(key.left.begin(), key.left.begin() + node.gpus, std::greater<>());
  auto [it, inserted] = memo_.try_emplace(key, 0.0);
  if (inserted) {
    it->second = node_fragmentation(node, *shapes_);
    if (strand_weight_ > 0 && cpu_per_milli_ > 0) {
      double idle = static_cast<double>(node.total_left());
      it->second += strand_weight_ * std::max(0.0, idle - static_cast<double>(node.cpu_left) / cpu_per_milli_);
    }
  }
  return it->second;
}

}  // namespace draplane::placement
