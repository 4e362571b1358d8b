// PlacementScore: the simulator's placement policies (`draplane simulate
// --policy`, placement/policy.h) as a Score plugin of the live scheduler, so
// that what the simulator shows is what the cluster does. It calls the same
// scoring functions (placement::score_node) on the same compact view
// (placement::NodeState), built here from the live cluster:
//
//   CPU, memory   the node's allocatable minus the requests of its active pods
//                 (assumed bindings included); a node that states no CPU or
//                 memory is treated as having plenty (kUnstated), so only its
//                 GPUs tell nodes apart.
//   GPUs          a shared-counter set of a pool is one GPU (a partitionable
//                 GPU: its whole-GPU device and its MIG slices consume from
//                 it), with 1000 x the smallest fraction left of its counters;
//                 a device that consumes no counter is one GPU, with 0 left
//                 when allocated whole, its first capacity's fraction left
//                 when shared by consumable capacity, else 1000. At most
//                 placement::kMaxGpus GPUs per node (the freest) are scored.
//   model         the productName attribute of the node's first device.
//
// The pod's demand comes from what Filter's allocation chose on that node:
// the CPU and memory requests of its containers, one GPU per allocated
// device, and per GPU the milli the device takes of its GPU (a MIG slice's
// share of the counters, a consumable share's capacity, else 1000).
//
// The learned distribution of the draplane policy (placement::ShapeLearner)
// and FGD's typical shapes learn from the pods this scheduler places (at
// Reserve, once per pod); there is no trace given up front in a live cluster.
// Node views are cached per node by (view epoch, active pod count), which is
// when CPU, memory or devices in use can have changed.
//
// Thread-safety: scheduling thread only (framework.h).
#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "alloc/node_view.h"
#include "placement/draplane_policy.h"
#include "placement/model.h"
#include "placement/policy.h"
#include "sched/cluster_cache.h"
#include "sched/plugins/plugins.h"

namespace draplane::sched::plugins {
namespace {

using placement::Demand;
using placement::kMaxGpus;
using placement::kMilli;
using placement::NodeState;
using placement::PolicyKind;

// CPU (milli) and memory (MiB) of a node that states none: more than any
// pod asks, the same on every such node.
constexpr int64_t kUnstated = int64_t{1} << 40;
constexpr int64_t kMiB = 1024 * 1024;

int32_t milli_of(__int128 part, __int128 whole) {
  if (whole <= 0) return kMilli;
  __int128 m = part * kMilli / whole;
  return static_cast<int32_t>(std::clamp<__int128>(m, 0, kMilli));
}

// What each device of a view takes of its GPU, the GPU model, and which
// candidates are GPUs of their own (no counters): a function of the view's
// structure alone, so it is made once per view structure (views holding the
// same devices, e.g. pools visible from many nodes, share one) and kept while
// allocations change.
struct GpuLayout {
  int model = -1;
  struct DeviceShare {
    int32_t milli = kMilli;  // of its GPU, when allocated whole
    const api::Device* device = nullptr;
  };
  std::unordered_map<uint32_t, DeviceShare> devices;  // by Snapshot device identity (DeviceEntry::key)
  std::vector<uint32_t> plain;                        // candidates without counters
};

// A node's GPUs in the compact view: the layout plus what is left of each GPU.
struct Gpus {
  NodeState state;  // GPUs and model only
  std::shared_ptr<const GpuLayout> layout;
};

struct LiveNode {
  NodeState state;
  std::shared_ptr<const Gpus> gpus;
  uint64_t epoch = 0;
  int pods = -1;
};

class PlacementScore final : public framework::ScorePlugin, public framework::ReservePlugin {
 public:
  PlacementScore(framework::Handle h, PolicyKind kind) : h_(h), kind_(kind), rng_(42), memo_(&shapes_) {}
  std::string_view name() const override { return "PlacementScore"; }

  int64_t score(const framework::CycleState& cs, const framework::NodeInfo& n, const framework::NodeFit& fit) override {
    if (kind_ == PolicyKind::kFirstFit) return 0;  // the first node by name
    // Random: every node an independent uniform draw, so the best is a uniform pick.
    if (kind_ == PolicyKind::kRandom) return static_cast<int64_t>(rng_.below(uint64_t{1} << 40));
    const LiveNode* live = node_state(*n.node);
    if (live == nullptr) return 0;
    if (demand_pod_ != cs.pod_key) {
      demand_pod_ = cs.pod_key;
      demands_.clear();
    }
    if (fit.borrowed != nullptr && fit.borrowed_generation != borrowed_generation_) {
      borrowed_generation_ = fit.borrowed_generation;
      borrowed_demands_.clear();
    }
    const Demand* d = nullptr;
    if (fit.borrowed != nullptr) {
      // An allocation DynamicResources computed on an equivalent node (same
      // devices up to names, same state): its demand there is its demand here.
      auto [it, fresh] = borrowed_demands_.try_emplace(fit.borrowed);
      if (fresh) {
        const LiveNode* rep = node_state(fit.borrowed_from->node());
        it->second = demand(cs.pod, *fit.borrowed, rep != nullptr ? *rep : *live);
      }
      d = &it->second;
    } else {
      // Nodes with the same devices got the same allocation: one demand per pod and GPU set.
      auto [it, fresh] = demands_.try_emplace(live->gpus.get());
      if (fresh || it->second.first != fit.results) it->second = {fit.results, demand(cs.pod, fit.results, *live)};
      d = &it->second.second;
    }
    double frag_now = memo_(live->state);
    return placement::score_node(kind_, live->state, *d, memo_, frag_now);
  }

  framework::Status reserve(framework::CycleState& cs, const framework::NodeFit& fit, framework::Reservation&) override {
    demands_.clear();  // the cycle ends: its allocations change what the next one sees
    if (!observed_.insert(cs.pod.metadata.uid.empty() ? cs.pod_key : cs.pod.metadata.uid).second) return {};
    if (observed_.size() > kMaxObserved) observed_.clear();
    const api::Node* node = h_.cache->node(fit.node);
    const LiveNode* live = node == nullptr ? nullptr : node_state(*node);
    if (live == nullptr) return {};
    learner_.observe(demand(cs.pod, fit.results, *live));
    if (learner_.refresh_due()) relearn();
    return {};
  }
  void unreserve(framework::CycleState&, const framework::NodeFit&, framework::Reservation&) override { demands_.clear(); }

 private:
  void relearn() {
    if (kind_ == PolicyKind::kDraplane) {
      placement::apply_learned(learner_, shapes_, memo_);
    } else {
      // FGD: the paper's typical shapes (95% most frequent) of what was seen.
      shapes_ = learner_.shapes(0.95);
      memo_.clear();
    }
  }

  const LiveNode* node_state(const api::Node& node) {
    const std::string& name = node.metadata.name;
    auto view = h_.cache->node_view(name);
    if (!view.has_value()) return nullptr;
    LiveNode& live = nodes_[name];
    uint64_t epoch = h_.cache->view_epoch(name);
    int pods = h_.cache->pods_on_node(name);
    if (live.epoch == epoch && live.pods == pods) return &live;
    live.gpus = shared_gpus(name, epoch, **view);
    live.state = live.gpus->state;
    set_cpu_memory(node, live.state);
    live.epoch = epoch;
    live.pods = pods;
    return &live;
  }

  // The GPU part of the node's view, shared with the nodes whose views hold
  // the same candidate devices (same snapshot devices in the same order):
  // valid while the node that built it keeps its view epoch (an allocation in
  // those pools changes every such node's epoch).
  std::shared_ptr<const Gpus> shared_gpus(const std::string& name, uint64_t epoch, const alloc::NodeView& view) {
    ViewSig& sig = sigs_[name];
    if (sig.view != &view || sig.builds != h_.cache->view_builds()) {
      sig.view = &view;
      sig.builds = h_.cache->view_builds();
      uint64_t hash = 1469598103934665603ULL ^ reinterpret_cast<uintptr_t>(&view.snapshot());
      for (const alloc::Candidate& c : view.candidates()) hash = (hash ^ c.device) * 1099511628211ULL;
      sig.hash = hash;
    }
    Shared& sh = shared_[sig.hash];
    if (sh.layout == nullptr || sh.layout_snapshot != h_.cache->snapshot_builds() ||
        sh.candidates != view.candidates().size()) {
      sh.layout = std::make_shared<const GpuLayout>(layout_of(view));
      sh.layout_snapshot = h_.cache->snapshot_builds();
      sh.gpus.reset();
    }
    // (A new layout dropped the GPUs made with the old one.)
    if (sh.gpus == nullptr || h_.cache->view_epoch(sh.node) != sh.epoch) {
      sh.node = name;
      sh.epoch = epoch;
      sh.candidates = view.candidates().size();
      sh.gpus = std::make_shared<const Gpus>(build(view, sh.layout, sh.pools));
    }
    return sh.gpus;
  }

  void set_cpu_memory(const api::Node& node, NodeState& s) const {
    ClusterCache::Requests used = h_.cache->requested(node.metadata.name);
    const auto& allocatable = node.status.allocatable;
    auto cpu = allocatable.find("cpu");
    auto mem = allocatable.find("memory");
    s.cpu_cap = cpu != allocatable.end() ? cpu->second.milli_value() : kUnstated;
    s.mem_cap = mem != allocatable.end() ? mem->second.value() / kMiB : kUnstated;
    s.cpu_left = s.cpu_cap - used.cpu_milli;
    s.mem_left = s.mem_cap - used.memory / kMiB;
  }

  GpuLayout layout_of(const alloc::NodeView& view) {
    GpuLayout layout;
    const alloc::Snapshot& snap = view.snapshot();
    for (uint32_t i = 0; i < view.candidates().size(); ++i) {
      const alloc::Candidate& c = view.candidates()[i];
      const api::Device& dev = snap.device(c.device);
      if (layout.model < 0) {
        for (const auto& [attr, value] : dev.attributes) {
          if (attr.ends_with("productName") && value.string_) layout.model = models_.id(*value.string_);
        }
      }
      if (c.counters_begin == c.counters_end) {
        layout.devices[snap.devices()[c.device].key] = {kMilli, &dev};
        layout.plain.push_back(i);
        continue;
      }
      // A partition: its share of its GPU is its largest share of a counter.
      const alloc::PoolView& pool = view.pools()[c.pool];
      int32_t m = 0;
      for (uint32_t k = c.counters_begin; k < c.counters_end; ++k) {
        const alloc::CounterUse& use = view.counter_uses()[k];
        m = std::max(m, milli_of(use.amount, pool.total[use.counter]));
      }
      layout.devices[snap.devices()[c.device].key] = {m, &dev};
    }
    return layout;
  }

  // Per pool of a view, what build() derived from its counters, by
  // NodeView::pool_version (unique per process, so a new view at the same
  // address misses): an allocation changes a pool or two of thousands.
  struct PoolGpus {
    std::vector<uint64_t> versions;
    std::vector<std::vector<int32_t>> left;  // per pool: milli left per GPU (counter set)
  };

  // What is left of each GPU: per counter set of a pool, its scarcest counter;
  // per device without counters, what its use leaves.
  Gpus build(const alloc::NodeView& view, std::shared_ptr<const GpuLayout> layout, PoolGpus& pools) {
    Gpus live;
    NodeState& s = live.state;
    s.model = layout->model;
    const alloc::Snapshot& snap = view.snapshot();
    // The freest kMaxGpus GPUs (milli left), sorted, as the GPUs come: a view
    // may see thousands of GPUs; the compact view keeps a few.
    std::array<int32_t, kMaxGpus> best{};
    int kept = 0;
    auto offer = [&](int32_t m) {
      if (kept == kMaxGpus && m <= best[kMaxGpus - 1]) return;
      int i = kept < kMaxGpus ? kept++ : kMaxGpus - 1;
      for (; i > 0 && best[i - 1] < m; --i) best[i] = best[i - 1];
      best[i] = m;
    };
    constexpr int32_t kNoCounter = std::numeric_limits<int32_t>::max();
    if (pools.versions.size() != view.pools().size()) {
      pools.versions.assign(view.pools().size(), 0);  // versions start at 1
      pools.left.assign(view.pools().size(), {});
    }
    for (uint32_t pi = 0; pi < view.pools().size(); ++pi) {
      const alloc::PoolView& pool = view.pools()[pi];
      if (pool.counter_set.empty()) continue;
      std::vector<int32_t>& left = pools.left[pi];
      if (pools.versions[pi] != view.pool_version(pi)) {
        pools.versions[pi] = view.pool_version(pi);
        // Per counter set: its smallest fraction left.
        left.assign(pool.counter_set.back() + 1, kNoCounter);
        for (size_t c = 0; c < pool.total.size(); ++c) {
          int32_t& l = left[pool.counter_set[c]];
          l = std::min(l, milli_of(pool.available[c], pool.total[c]));
        }
        std::erase(left, kNoCounter);
      }
      for (int32_t m : left) offer(m);
    }
    for (uint32_t i : layout->plain) {
      const alloc::Candidate& c = view.candidates()[i];
      const api::Device& dev = snap.device(c.device);
      const alloc::AllocatedState::InUse* in_use = view.allocated().in_use(snap.devices()[c.device].key);
      int32_t l = kMilli;
      if (in_use != nullptr && in_use->dedicated) {
        l = 0;
      } else if (in_use != nullptr && in_use->has_capacity && !dev.capacity.empty()) {
        const auto& [cap_name, cap] = *dev.capacity.begin();
        auto used_cap = in_use->capacity.find(cap_name);
        __int128 consumed = used_cap == in_use->capacity.end() ? 0 : used_cap->second;
        l = kMilli - milli_of(consumed, cap.value.nanos());
      }
      offer(l);
    }
    // The freest GPUs when there are more than the compact view holds.
    s.gpus = kept;
    for (int i = 0; i < kept; ++i) s.left[i] = best[i];
    live.layout = std::move(layout);
    return live;
  }

  // The pod's demand on the node whose allocation `results` are.
  Demand demand(const api::Pod& pod, const std::vector<api::AllocationResult>& results, const LiveNode& node) {
    const Gpus& live = *node.gpus;
    Demand d;
    ClusterCache::Requests r = pod_requests(pod);
    d.cpu = r.cpu_milli;
    d.memory = r.memory / kMiB;
    const alloc::Snapshot& snap = h_.cache->snapshot();
    for (const auto& result : results) {
      for (const auto& dev : result.devices.results) {
        int32_t m = kMilli;
        auto key = snap.find_key(dev.driver, dev.pool, dev.device);
        const auto& shares = live.layout->devices;
        auto it = key ? shares.find(*key) : shares.end();
        if (it != shares.end()) {
          m = it->second.milli;
          const api::Device& device = *it->second.device;
          if (!dev.consumedCapacity.empty() && !device.capacity.empty()) {
            const auto& [cap_name, cap] = *device.capacity.begin();
            auto c = dev.consumedCapacity.find(cap_name);
            if (c != dev.consumedCapacity.end()) m = milli_of(c->second.nanos(), cap.value.nanos());
          }
        }
        ++d.num;
        d.milli = std::max(d.milli, std::max<int32_t>(m, 1));
      }
    }
    d.shape = -1;
    return d;
  }

  static constexpr size_t kMaxObserved = 1 << 20;
  framework::Handle h_;
  PolicyKind kind_;
  placement::Rng rng_;
  placement::ModelTable models_;
  placement::ShapeLearner learner_;
  std::vector<placement::TypicalShape> shapes_;
  placement::FragmentationMemo memo_;
  std::unordered_map<std::string, LiveNode> nodes_;
  struct ViewSig {
    const alloc::NodeView* view = nullptr;
    int64_t builds = -1;
    uint64_t hash = 0;
  };
  std::unordered_map<std::string, ViewSig> sigs_;
  struct Shared {
    std::string node;
    uint64_t epoch = 0;
    size_t candidates = 0;
    std::shared_ptr<const Gpus> gpus;
    std::shared_ptr<const GpuLayout> layout;
    int64_t layout_snapshot = -1;  // ClusterCache::snapshot_builds() it was made at
    PoolGpus pools;
  };
  std::unordered_map<uint64_t, Shared> shared_;  // by ViewSig::hash
  std::string demand_pod_;
  std::unordered_map<const Gpus*, std::pair<std::vector<api::AllocationResult>, Demand>> demands_;
  std::unordered_map<const std::vector<api::AllocationResult>*, Demand> borrowed_demands_;  // by NodeFit::borrowed
  uint64_t borrowed_generation_ = 0;
  std::unordered_set<std::string> observed_;
};

}  // namespace

std::unique_ptr<framework::Plugin> new_placement_score(framework::Handle h, placement::PolicyKind kind) {
  return std::make_unique<PlacementScore>(h, kind);
}

}  // namespace draplane::sched::plugins
