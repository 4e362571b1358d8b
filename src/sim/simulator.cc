#include "sim/simulator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>

#include "sim/dra.h"
#include "sim/draplane_policy.h"

namespace draplane::sim {
namespace {

// Score of one node for one task shape, valid while the node's version is unchanged.
struct Cached {
  uint32_t version = 0;
  bool fits = false;
  int64_t score = 0;
};

// The cluster after one arrival (or departure).
struct Event {
  int64_t arrived = 0, allocated = 0;
  double fragmented = 0, idle = 0;
};

// Dense shape ids: tasks of one shape score alike on a node.
int assign_shapes(std::vector<Demand>& demands) {
  std::map<std::tuple<int64_t, int64_t, int, int32_t, std::string>, int> ids;
  for (auto& d : demands) {
    auto [it, added] = ids.try_emplace({d.cpu, d.memory, d.num, d.milli, d.model_text}, static_cast<int>(ids.size()));
    d.shape = it->second;
  }
  return static_cast<int>(ids.size());
}

// The mean of the events at each percent from 0 to `last`; pct[i] is event i's
// percent (of arrived workload, or of the time span).
std::vector<CurvePoint> make_curve(const std::vector<Event>& events, const std::vector<int>& pct, int64_t capacity,
                                   int last) {
  std::vector<CurvePoint> curve;
  if (capacity <= 0) return curve;
  for (int p = 0; p <= last; ++p) {
    for (int width : {0, 1}) {  // the analysis script widens to +-1 when a percent has no arrival
      CurvePoint point{p, 0, 0, 0};
      size_t n = 0;
      for (size_t i = 0; i < events.size(); ++i) {
        if (std::abs(pct[i] - p) > width) continue;
        const Event& e = events[i];
        point.allocated += static_cast<double>(e.allocated) / capacity;
        point.fragmented += e.fragmented / capacity;
        point.frag_rate += e.idle > 0 ? e.fragmented / e.idle : 0;
        ++n;
      }
      if (n == 0) continue;
      auto count = static_cast<double>(n);
      point.allocated /= count;
      point.fragmented /= count;
      point.frag_rate /= count;
      curve.push_back(point);
      break;
    }
  }
  return curve;
}

class Simulation {
 public:
  Simulation(const std::vector<NodeSpec>& nodes, const std::vector<TaskSpec>& tasks, const FillOptions& options)
      : nodes_(nodes),
        tasks_(tasks),
        options_(options),
        rng_(options.seed),
        frag_(&shapes_),
        learned_frag_(&learned_shapes_),
        dra_(nodes) {
    for (const auto& n : nodes) {
      state_.push_back(make_node_state(n, models_));
      capacity_ += int64_t{state_.back().gpus} * kMilli;
    }
    for (const auto& t : tasks) demands_.push_back(make_demand(t, models_));
    shape_count_ = assign_shapes(demands_);
    shapes_ = typical_shapes(demands_);
    cache_.resize(state_.size() * static_cast<size_t>(shape_count_));
    node_frag_.resize(state_.size());
    for (size_t n = 0; n < state_.size(); ++n) {
      node_frag_[n] = frag_(state_[n]);
      frag_total_ += node_frag_[n];
    }
    if (learns()) node_learned_frag_.assign(state_.size(), 0.0);
  }

  Result<FillResult> run() {
    FillResult r;
    r.policy = std::string(policy_name(options_.policy));
    r.seed = options_.seed;
    r.capacity_milli = capacity_;
    if (options_.mode == Mode::kReplay) {
      RETURN_IF_ERROR(replay(r));
    } else {
      RETURN_IF_ERROR(fill(r));
    }
    if (options_.verify) RETURN_IF_ERROR(verify_all());
    r.arrived_milli = arrived_;
    r.allocated_milli = allocated_;
    r.allocator_calls = dra_.allocations();
    if (capacity_ > 0) {
      r.gpu_allocation_ratio = static_cast<double>(allocated_) / capacity_;
      r.fragmented_gpu_ratio = frag_total_ / capacity_;
      double idle = static_cast<double>(capacity_ - allocated_);
      r.fragmentation_rate = idle > 0 ? frag_total_ / idle : 0;
    }
    return r;
  }

 private:
  // The random node order that breaks score ties.
  void draw_node_order() {
    rank_.resize(state_.size());
    std::iota(rank_.begin(), rank_.end(), 0);
    for (size_t i = rank_.size(); i > 1; --i) std::swap(rank_[i - 1], rank_[rng_.below(i)]);
  }

  Event snapshot() const {
    return Event{arrived_, allocated_, frag_total_, static_cast<double>(capacity_ - allocated_)};
  }

  void report_progress(size_t done, size_t total) const {
    if (options_.progress && options_.progress_every > 0 && done % options_.progress_every == 0) {
      options_.progress(done, total);
    }
  }

  // draplane learns the task distribution from the arrivals; FGD and the
  // others read the trace's, as the paper's simulator does.
  bool learns() const { return options_.policy == PolicyKind::kDraplane; }
  FragmentationMemo& policy_frag() { return learns() ? learned_frag_ : frag_; }
  double policy_frag(size_t n) const { return learns() ? node_learned_frag_[n] : node_frag_[n]; }

  // A task arrived: what the scheduler knows of the distribution grows; when it
  // has moved enough, every node's measure and cached score is redone.
  void learn(const Demand& d) {
    learner_.observe(d);
    if (!learner_.refresh_due()) return;
    apply_learned(learner_, learned_shapes_, learned_frag_);
    for (size_t n = 0; n < state_.size(); ++n) {
      node_learned_frag_[n] = learned_frag_(state_[n]);
      ++state_[n].version;  // invalidates the cached scores
    }
  }

  Result<void> arrive(size_t t, FillResult& r) {
    if (learns()) learn(demands_[t]);
    arrived_ += demands_[t].total_milli();
    ASSIGN_OR_RETURN(bool placed, place(t));
    ++(placed ? r.scheduled : r.failed);
    if (!placed && demands_[t].num > 0) ++r.gpu_tasks_failed;
    ++r.tasks;
    return {};
  }

  Result<void> fill(FillResult& r) {
    std::vector<size_t> sequence;
    if (options_.in_trace_order) {
      sequence.resize(tasks_.size());
      std::iota(sequence.begin(), sequence.end(), 0);
    } else {
      sequence = fill_sequence(tasks_, capacity_, options_.inflate, rng_);
    }
    if (options_.max_tasks > 0 && sequence.size() > options_.max_tasks) sequence.resize(options_.max_tasks);
    draw_node_order();  // after the task sequence, as the paper's simulator draws it
    std::vector<Event> events;
    std::vector<int> pct;
    events.reserve(sequence.size());
    for (size_t i = 0; i < sequence.size(); ++i) {
      RETURN_IF_ERROR(arrive(sequence[i], r));
      if (options_.stop_at_first_failure && r.failed > 0) break;
      events.push_back(snapshot());
      // Python's round(): half to even, as nearbyint in the default rounding mode.
      pct.push_back(capacity_ > 0 ? static_cast<int>(std::nearbyint(100.0 * static_cast<double>(arrived_) / capacity_)) : 0);
      report_progress(i + 1, sequence.size());
    }
    r.curve = make_curve(events, pct, capacity_, static_cast<int>(std::ceil(options_.inflate * 100)));
    for (const auto& p : r.curve) {
      if (p.arrived_pct == 100) r.allocation_ratio_at_100 = p.allocated;
    }
    return {};
  }

  Result<void> replay(FillResult& r) {
    r.mode = "replay";
    struct Step {
      int64_t time;
      int kind;  // 0 departure, 1 arrival: departures first at equal times
      size_t task;
      bool operator<(const Step& o) const { return std::tie(time, kind, task) < std::tie(o.time, o.kind, o.task); }
    };
    std::vector<Step> steps;
    for (size_t t = 0; t < tasks_.size(); ++t) {
      const TaskSpec& task = tasks_[t];
      if (!task.creation_time) {
        return invalid_error("task " + task.name + ": replay needs creation_time (the trace has no such column)");
      }
      steps.push_back(Step{*task.creation_time, 1, t});
      if (task.deletion_time && *task.deletion_time > *task.creation_time) {
        steps.push_back(Step{*task.deletion_time, 0, t});
      }
    }
    std::sort(steps.begin(), steps.end());
    draw_node_order();
    placed_.resize(tasks_.size());
    std::vector<Event> events;
    std::vector<int64_t> times;
    size_t arrivals = 0;
    for (const Step& step : steps) {
      if (step.kind == 1) {
        if (options_.max_tasks > 0 && arrivals == options_.max_tasks) break;
        RETURN_IF_ERROR(arrive(step.task, r));
        report_progress(++arrivals, tasks_.size());
      } else {
        RETURN_IF_ERROR(release(step.task));
      }
      events.push_back(snapshot());
      times.push_back(step.time);
    }
    if (events.empty() || capacity_ <= 0) return {};
    int64_t t0 = times.front(), span = std::max<int64_t>(1, times.back() - t0);
    std::vector<int> pct;
    double weighted = 0;
    r.peak_allocation_ratio = 0;
    for (size_t i = 0; i < events.size(); ++i) {
      pct.push_back(static_cast<int>(std::nearbyint(100.0 * static_cast<double>(times[i] - t0) / span)));
      if (i + 1 < events.size()) weighted += static_cast<double>(events[i].allocated) * (times[i + 1] - times[i]);
      r.peak_allocation_ratio = std::max(r.peak_allocation_ratio, static_cast<double>(events[i].allocated) / capacity_);
    }
    r.mean_allocation_ratio = weighted / (static_cast<double>(span) * capacity_);
    r.curve = make_curve(events, pct, capacity_, 100);
    return {};
  }

  const Cached& cached(size_t n, const Demand& d) {
    Cached& c = cache_[n * static_cast<size_t>(shape_count_) + static_cast<size_t>(d.shape)];
    if (c.version != state_[n].version) {
      c.version = state_[n].version;
      c.fits = state_[n].fits(d);
      c.score = c.fits ? score_node(options_.policy, state_[n], d, policy_frag(), policy_frag(n)) : 0;
    }
    return c;
  }

  // The node the policy picks; -1 when the task fits nowhere.
  long choose_node(const Demand& d) {
    if (options_.policy == PolicyKind::kFirstFit) {
      for (size_t n = 0; n < state_.size(); ++n) {
        if (state_[n].fits(d)) return static_cast<long>(n);
      }
      return -1;
    }
    if (options_.policy == PolicyKind::kRandom) return random_node(d);
    // The best score; among equal ones the node first in the run's random node
    // order. The paper's simulator names nodes "<random rank>-<name>" and its
    // kube-scheduler fork breaks ties by the smallest name ("for
    // reproducibility", vendor/k8s.io/kubernetes/pkg/scheduler/core), so ties
    // go to a fixed random order per seed, not to a fresh random pick.
    long chosen = -1;
    int64_t best = 0;
    for (size_t n = 0; n < state_.size(); ++n) {
      const Cached& c = cached(n, d);
      if (!c.fits) continue;
      if (chosen < 0 || c.score > best || (c.score == best && rank_[n] < rank_[static_cast<size_t>(chosen)])) {
        chosen = static_cast<long>(n);
        best = c.score;
      }
    }
    return chosen;
  }

  // RandomScore: a uniformly random feasible node.
  long random_node(const Demand& d) {
    std::vector<size_t> feasible;
    for (size_t n = 0; n < state_.size(); ++n) {
      if (cached(n, d).fits) feasible.push_back(n);
    }
    if (feasible.empty()) return -1;
    return static_cast<long>(feasible[rng_.below(feasible.size())]);
  }

  Result<bool> place(size_t t) {
    const Demand& d = demands_[t];
    long chosen = choose_node(d);
    if (chosen < 0) return false;
    auto n = static_cast<size_t>(chosen);
    NodeState& node = state_[n];
    if (d.num > 0) {
      std::vector<int> gpus = choose_gpus(options_.policy, node, d, rng_, policy_frag(), policy_frag(n));
      ASSIGN_OR_RETURN(auto result, dra_.allocate(n, tasks_[t], gpus));
      if (!result) {
        return internal_error("allocator found no devices for task " + tasks_[t].name + " on node " +
                              nodes_[n].name + " where the simulator's filter found room");
      }
      RETURN_IF_ERROR(apply(n, *result, +1));
      dra_.commit(n, *result);
      if (options_.mode == Mode::kReplay) placed_[t] = Placed{n, std::move(*result)};
    } else if (options_.mode == Mode::kReplay) {
      placed_[t] = Placed{n, std::nullopt};
    }
    RETURN_IF_ERROR(changed(n, d, +1));
    return true;
  }

  // A task leaves: its devices, CPU and memory return to the node.
  Result<void> release(size_t t) {
    if (!placed_[t]) return {};  // never placed
    Placed p = std::move(*placed_[t]);
    placed_[t].reset();
    if (p.result) {
      RETURN_IF_ERROR(apply(p.node, *p.result, -1));
      dra_.release(p.node, *p.result);
    }
    return changed(p.node, demands_[t], -1);
  }

  // Node `n` gained (+1) or lost (-1) task `d`: CPU, memory, kinds, fragmentation.
  Result<void> changed(size_t n, const Demand& d, int sign) {
    NodeState& node = state_[n];
    node.cpu_left -= sign * d.cpu;
    node.mem_left -= sign * d.memory;
    if (d.affinity() >= 0) node.affinity[d.affinity()] += sign;
    ++node.version;
    frag_total_ -= node_frag_[n];
    node_frag_[n] = frag_(node);
    frag_total_ += node_frag_[n];
    if (learns()) node_learned_frag_[n] = learned_frag_(node);
    if (options_.verify) RETURN_IF_ERROR(verify(n));
    return {};
  }

  // Takes what the allocator gave (sign +1) or a release (-1) into the simulator's view.
  Result<void> apply(size_t n, const api::AllocationResult& result, int sign) {
    NodeState& node = state_[n];
    for (const auto& dev : result.devices.results) {
      int g = gpu_index(dev.device);
      auto it = dev.consumedCapacity.find(std::string(kMilliCapacity));
      if (dev.pool != nodes_[n].name || g < 0 || g >= node.gpus || it == dev.consumedCapacity.end()) {
        return internal_error("allocation result for node " + nodes_[n].name + " names device " + dev.pool + "/" +
                              dev.device + " without milli consumed capacity");
      }
      int64_t milli = sign * it->second.value();
      node.left[g] -= static_cast<int32_t>(milli);
      allocated_ += milli;
    }
    return {};
  }

  Result<void> verify(size_t n) const {
    const NodeState& node = state_[n];
    if (node.cpu_left < 0 || node.mem_left < 0) {
      return internal_error("node " + nodes_[n].name + " has CPU or memory over-allocated");
    }
    for (int g = 0; g < node.gpus; ++g) {
      int64_t consumed = dra_.consumed_milli(n, g);
      if (node.left[g] < 0 || consumed != kMilli - node.left[g]) {
        return internal_error("node " + nodes_[n].name + " gpu" + std::to_string(g) + ": simulator has " +
                              std::to_string(kMilli - node.left[g]) + " milli used, the allocator's state " +
                              std::to_string(consumed));
      }
    }
    return {};
  }

  Result<void> verify_all() const {
    for (size_t n = 0; n < state_.size(); ++n) RETURN_IF_ERROR(verify(n));
    return {};
  }

  const std::vector<NodeSpec>& nodes_;
  const std::vector<TaskSpec>& tasks_;
  FillOptions options_;
  Rng rng_;
  ModelTable models_;
  std::vector<NodeState> state_;
  std::vector<Demand> demands_;
  int shape_count_ = 0;
  std::vector<TypicalShape> shapes_;
  FragmentationMemo frag_;  // the trace's measure: what every run reports
  ShapeLearner learner_;   // draplane: the distribution seen so far, and its measure
  std::vector<TypicalShape> learned_shapes_;
  FragmentationMemo learned_frag_;
  std::vector<double> node_learned_frag_;
  DraCluster dra_;
  std::vector<Cached> cache_;
  std::vector<size_t> rank_;  // node -> position in the tie-breaking order
  // Replay: where each task runs and what the allocator gave it (no result for a CPU-only task).
  struct Placed {
    size_t node = 0;
    std::optional<api::AllocationResult> result;
  };
  std::vector<std::optional<Placed>> placed_;
  std::vector<double> node_frag_;
  double frag_total_ = 0;
  int64_t capacity_ = 0, arrived_ = 0, allocated_ = 0;
};

}  // namespace

std::vector<size_t> fill_sequence(const std::vector<TaskSpec>& tasks, int64_t capacity_milli, double inflate,
                                  Rng& rng) {
  // By name, then shuffled (the FGD simulator's SortClusterPods with shufflePod).
  std::vector<size_t> by_name(tasks.size());
  std::iota(by_name.begin(), by_name.end(), 0);
  std::stable_sort(by_name.begin(), by_name.end(), [&](size_t a, size_t b) { return tasks[a].name < tasks[b].name; });
  std::vector<size_t> order = by_name;
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  if (tasks.empty() || inflate <= 0) return order;
  int64_t total = 0;
  for (const auto& t : tasks) total += t.total_gpu_milli();
  double target = inflate * static_cast<double>(capacity_milli);
  bool any_gpu = std::any_of(tasks.begin(), tasks.end(), [](const TaskSpec& t) { return t.gpu_milli > 0; });
  if (static_cast<double>(total) < target && any_gpu) {
    // TunePodsByNodeTotalResource/tuneUpPods: random copies until the next one
    // would pass the target. Like the paper's simulator, the test compares the
    // copy's per-GPU milli, not its total, so a multi-GPU copy may overshoot by
    // a few GPUs (kept: the published curves were made that way). Without any
    // GPU task there is nothing to fill with (the loop would never end).
    for (;;) {
      size_t pick = by_name[rng.below(by_name.size())];
      if (static_cast<double>(total + tasks[pick].gpu_milli) > target) break;
      total += tasks[pick].total_gpu_milli();
      order.push_back(pick);
    }
  } else {
    // tuneDownPods: drop random tasks until the total is within the target.
    while (static_cast<double>(total) > target && !order.empty()) {
      size_t k = rng.below(order.size());
      total -= tasks[order[k]].total_gpu_milli();
      order.erase(order.begin() + static_cast<long>(k));
    }
  }
  return order;
}

Result<FillResult> run_fill(const std::vector<NodeSpec>& nodes, const std::vector<TaskSpec>& tasks,
                            const FillOptions& options) {
  // Timed from the DRA objects' construction (Snapshot, views) on; loading the files is not counted.
  auto start = std::chrono::steady_clock::now();
  Simulation simulation(nodes, tasks, options);
  ASSIGN_OR_RETURN(FillResult r, simulation.run());
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace draplane::sim
