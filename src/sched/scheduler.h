// Scheduler: places pending pods that use DRA claims (and any other pending
// pod addressed to it) on nodes, one scheduling cycle per pod (one per gang),
// after kube-scheduler's framework (framework.h; the plugins in plugins/):
//   PreFilter (resolve claims) -> per node Filter (node filters, allocated-claim
//   node check, allocation of the pending claims on the cache's shared
//   snapshot) -> Score (upstream's firstAvailable score, then packing: the node
//   left with the fewest free devices) -> PostFilter when no node fits ->
//   Reserve (assume the claims in the cache so the next pod sees the devices
//   taken) -> Permit (a gang's members wait for each other) -> the binding
//   cycle: write the claims (finalizer, then allocation + reservedFor in one
//   status update, with resourceVersion preconditions) -> bind.
// A conflict or API error unreserves (the written reservations are taken back)
// and retries the pod after a backoff; a pod no node fits gets PodScheduled=False
// (reason Unschedulable) and waits for a cluster change.
//
// Events (informer adds/updates/deletes) reach it through handle() on the
// scheduling thread or post() from any thread.
//
// Thread-safety: post() and stop notification are thread-safe; everything else
// runs on one thread (the one calling run() or the test).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <unordered_map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "alloc/allocator.h"
#include "api/types.h"
#include "sched/binder.h"
#include "common/clock.h"
#include "sched/cluster_cache.h"
#include "sched/framework.h"
#include "sched/node_classes.h"
#include "sched/queue.h"
#include "placement/policy.h"

namespace spdlog {
class logger;
}

namespace draplane::sched {
struct GangSpec;
namespace plugins {
class DynamicResources;
class GangScheduling;
class DefaultPreemption;
class KaiQueues;
struct QueueReport;
}  // namespace plugins

struct SchedulerOptions {
  // spec.schedulerName this scheduler serves; "" and "default-scheduler" too
  // when serve_default is set (draplane is the only scheduler of its cluster).
  std::string name = "draplane";
  bool serve_default = true;
  // Device choice within a node: packing keeps whole devices and counter sets
  // free; first-fit gives the upstream allocator's exact answer.
  alloc::Policy policy = alloc::Policy::kPacking;
  // Which of the nodes that fit (--policy, sched/policy_flag.h): one of the
  // simulator's placement policies, scored by the PlacementScore plugin with
  // the simulator's own code; nullopt: DevicePacking (the node left with the
  // fewest free devices, the "packing" policy).
  std::optional<placement::PolicyKind> node_policy = placement::PolicyKind::kDraplane;
  // Allocator search budget per (pod, node).
  int64_t max_steps = 200'000;
  SchedulingQueue::Options queue;
  // Explanations listed in an Unschedulable message.
  int max_detail_lines = 3;
  // Threads that write reservations and bindings (kube-scheduler's binding
  // cycle, one goroutine per pod): the next pod's scheduling cycle runs while
  // earlier pods' API writes are in flight. 0: written in the scheduling
  // thread before the next cycle (deterministic; what unit tests use). The
  // Binder must be thread-safe when this is > 0.
  int bind_workers = 0;
  // Run Filter and Score on one node per group of interchangeable nodes
  // (node_classes.h) for pods that read no node labels; false: node by node
  // (the same answers, at a cost that grows with the nodes; tests compare them).
  bool node_classes = true;
  // Nodes whose views hold more candidate devices than this are grouped only
  // with nodes whose views have the same structure (the same pools, e.g. pools
  // every node sees), not by a full comparison of their devices and their use:
  // that comparison's signature, rebuilt after every allocation in such pools,
  // was a third of a cycle with 12,000 devices seen by every node.
  size_t max_signature_candidates = 4096;
};

// One informer event.
struct Event {
  enum class Op { kUpsert, kDelete };
  Op op = Op::kUpsert;
  api::Object object;
};

// kBinding: reserved, the binding cycle's writes are in flight (bind_workers > 0).
enum class Outcome { kIdle, kBound, kBinding, kUnschedulable, kRetry, kSkipped };

struct CycleResult {
  Outcome outcome = Outcome::kIdle;
  std::string pod;   // key
  std::string node;  // kBound
  std::string message;  // kUnschedulable / kRetry: why
};

struct SchedulerStats {
  int64_t cycles = 0, bound = 0, unschedulable = 0, retries = 0, conflicts = 0;
  int64_t allocator_runs = 0;  // (pod, node) allocations tried
  int64_t shape_memo_hits = 0;  // (pod, node) failures known from another pod of the same claim shape
  int64_t equivalent_node_hits = 0;  // (pod, node) answers reused from a node with the same devices
  int64_t node_group_cycles = 0;     // pods placed by trying one node per node group
  // Preemption: what-if checks run (Filter with some pods taken out), and
  // candidate nodes whose victims were read off an alike node's checks.
  int64_t preemption_checks = 0, preemption_reused_nodes = 0;
  double preemption_seconds = 0;  // in victim searches (PostFilter's, a gang's), evictions not included
  // Time on the scheduling thread (profiling the whole system): applying
  // events, and scheduling cycles.
  double event_seconds = 0, cycle_seconds = 0;
  int64_t events = 0;
  // What retried waiting pods: node changes and flushes (all of them), releases (a few).
  int64_t node_wakeups = 0, flushes = 0, releases = 0;
};

class Scheduler {
 public:
  // `binder`, `clock` and `logger` (null: spdlog's default) must outlive it.
  Scheduler(Binder& binder, Clock& clock, SchedulerOptions options = {},
            std::shared_ptr<spdlog::logger> logger = nullptr);
  ~Scheduler();

  // Applies one event to the cache and the queue (scheduling thread).
  void handle(const Event& event);
  void handle(Event&& event);
  // Queues an event for the scheduling thread (any thread).
  void post(Event event);
  // Applies queued events; returns how many.
  size_t drain();

  // One cycle for the next ready pod (kIdle when none is ready).
  CycleResult schedule_one();
  // drain + schedule_one until no pod is ready; returns cycles run.
  int run_until_idle(int max_cycles = 1'000'000);
  // Loops until *stop: drains events, schedules, sleeps until an event arrives
  // or a backoff ends.
  void run(const std::atomic<bool>& stop);
  // Wakes run() (after setting its stop flag).
  void wake();
  // Idle time: builds the inventory snapshot and the node views when the
  // snapshot is stale and no slice or class changed for kWarmQuiet, so the
  // first pod after start-up or an inventory change does not wait for them
  // (100 nodes of MIG-capable GPUs: ~0.5 s). Returns whether it built; run()
  // calls it when no pod is ready.
  bool warm_up();

  ClusterCache& cache() { return cache_; }
  // Binding cycles whose API writes have not been applied yet.
  int in_flight() const { return in_flight_; }
  // Waits until the bind workers have nothing queued or running, then applies
  // the finished bindings (scheduling thread; tests and shutdown).
  void quiesce();
  const SchedulingQueue& queue() const { return queue_; }
  const SchedulerStats& stats() const { return stats_; }
  // A KAI Queue (scheduling.run.ai/v2, its JSON) added, changed or deleted
  // (any thread; applied on the scheduling thread).
  void post_queue(std::string json, bool deleted);
  // The queues' allocation, demand and fair share as published about once a
  // second by run() (any thread).
  std::vector<plugins::QueueReport> queue_reports();
  // The same computed now (scheduling thread only: tests, tools).
  std::vector<plugins::QueueReport> current_queue_reports();
  // True when the pod is addressed to this scheduler and waits for a node.
  bool is_ours_pending(const api::Pod& pod) const;

 private:
  using CycleState = framework::CycleState;
  using NodeFit = framework::NodeFit;
  using Reservation = framework::Reservation;

  // `old_pod`: the cache's object before this event (read before `pod` replaces it).
  void on_pod(const api::Pod* old_pod, api::Pod pod, bool deleted);
  // Builds the cycle state for the pod at `key`; false when it is gone or not ours.
  bool start_cycle(const std::string& key, CycleState& cs);
  // PreFilter + Filter + Score: the best node, or false with the Unschedulable
  // message (and, when `statuses`, every node's Filter status for PostFilter).
  bool find_node(CycleState& cs, NodeFit& best, std::string* message, framework::NodeStatusMap* statuses = nullptr);
  // No node fits: PostFilter (preemption), then the pod is parked with `message`.
  CycleResult unschedulable(CycleState& cs, const std::string& message, const framework::NodeStatusMap& statuses,
                            Clock::TimePoint now);
  // The cycle of a pod in a gang (gang.cc), or nullopt when it is in none
  // (or in a PodGroup of the basic policy). A pod whose PodGroup is missing waits.
  std::optional<CycleResult> gang_cycle(const std::string& key, const api::Pod& pod, Clock::TimePoint now);
  // A gang's cycle (gang.cc): its members through Reserve and Permit against
  // one cache state; bound together or not at all.
  CycleResult schedule_group(const std::string& key, const GangSpec& gang);
  // A member reserved in a gang's cycle.
  struct GangMember {
    CycleState cs;
    NodeFit fit;
    Reservation reservation;
  };
  // A gang that does not fit as preemptor (gang.cc): with `placed` still
  // reserved, members `left_out` are placed in turn until `needed` are,
  // preempting where they must with the earlier members' victims already
  // gone; when enough fit, the victims are evicted and those members
  // nominated for their nodes. Nothing stays reserved or removed. Returns what
  // to add to the gang's message ("" when it preempts nothing).
  std::string preempt_for_gang(const std::string& gang_id, const std::vector<std::unique_ptr<GangMember>>& placed,
                               const std::vector<std::string>& left_out, int needed);
  // The PodGroup's PodGroupInitiallyScheduled condition (a no-op for
  // annotation gangs, or once it is True).
  void set_pod_group_condition(const std::string& ns, const GangSpec& gang, bool scheduled, const std::string& message);
  // Reserve: the plugins assume the claims and the pod is assumed bound; writes nothing.
  bool reserve(CycleState& cs, const NodeFit& fit, Reservation& r);
  void unreserve(CycleState& cs, const NodeFit& fit, Reservation& r);
  // PreBind + Bind of a reservation; on failure unreserves and backs off.
  CycleResult commit(CycleState& cs, const NodeFit& fit, Reservation& reservation);
  // Takes back a failed cycle's reservations: `written` claims (stored object,
  // allocated by this cycle?) get the entry the cycle added (the pod, or its
  // PodGroup) removed from reservedFor (and their
  // allocation cleared when it was ours and nobody else uses it); assumed ones
  // are forgotten.
  struct WrittenClaim {
    api::ResourceClaim stored;
    bool newly_allocated = false;
    bool extended = false;
    api::ResourceClaimConsumerReference consumer;  // the reservedFor entry the write added
  };
  // What a binding cycle's API writes did.
  struct BindOutcome {
    bool ok = false;
    Status status;     // !ok: the failed write's error
    std::string what;  // !ok: which write
    std::vector<WrittenClaim> written;
    // !ok: the written claims with the pod's reservation taken back (stored
    // object, or nullopt when that write failed too).
    std::vector<std::pair<std::string, std::optional<api::ResourceClaim>>> rollback;
  };
  // The API writes of a reservation (PreBind + Bind), and on failure the
  // writes that take it back; touches neither cache nor queue (any thread).
  // Appends the extended-resource claim's write to `reservation.writes`.
  BindOutcome write_reservation(const CycleState& cs, const NodeFit& fit, Reservation& reservation);
  std::vector<std::pair<std::string, std::optional<api::ResourceClaim>>> rollback_writes(
      const api::Pod& pod, const std::vector<WrittenClaim>& written);
  // Applies a binding's outcome to cache, queue and stats (scheduling thread).
  // Consumes `out.written` (the claims move into the assume cache).
  CycleResult finish_binding(const CycleState& cs, const NodeFit& fit, const Reservation& reservation,
                             BindOutcome& out);
  // Hands the reservation to a bind worker.
  void bind_async(CycleState cs, NodeFit fit, Reservation reservation);
  void bind_worker();
  // Pod `key` uses a claim whose write is in flight: park it until that lands.
  bool wait_for_in_flight_claim(const CycleState& cs);
  void mark_unschedulable(const api::Pod& pod, const std::string& message);
  // One scheduling cycle of the popped pod.
  CycleResult cycle(const std::string& key, Clock::TimePoint now);
  void wake_pods_using(const api::ResourceClaim& claim, Clock::TimePoint now);
  void devices_freed(Clock::TimePoint now);
  bool holds_last_pod_slot(const std::string& key, const api::Pod* cached) const;
  // Widens a release's wake-up by one pod; flushes every parked pod now and then.
  void after_cycle(Outcome outcome, Clock::TimePoint now);
  // Retries every parked pod when a release happened kFlushInterval ago or more.
  void maybe_flush(Clock::TimePoint now);
  // Applies the bindings the workers finished (scheduling thread).
  size_t apply_completions();
  // The PodScheduled=False condition write (any thread).
  // `at` is when mark_unschedulable decided to write (its condition_written_
  // entry): a failed write forgets that entry and retries the pod.
  void write_unschedulable(const api::Pod& pod, const std::string& message, const std::string& now,
                           Clock::TimePoint at);

  Binder& binder_;
  Clock& clock_;
  SchedulerOptions options_;
  std::shared_ptr<spdlog::logger> log_;
  ClusterCache cache_;
  SchedulerStats stats_;
  // The plugins (plugins/registry.cc); the queue sorts with its queue sort plugin.
  std::unique_ptr<framework::Framework> fw_;
  plugins::DynamicResources* dra_ = nullptr;
  plugins::GangScheduling* gang_ = nullptr;
  plugins::DefaultPreemption* preempt_ = nullptr;  // null in a profile without it
  plugins::KaiQueues* queues_ = nullptr;
  // Groups of interchangeable nodes; null when options_.node_classes is off or
  // the node score draws at random per node.
  std::unique_ptr<NodeClasses> node_classes_;
  // Whether find_node may try one node per group for this cycle's pod (the
  // groups brought up to date when so).
  bool use_node_groups(const CycleState& cs);
  // The nodes the pod's allocated claims name in their node selectors (their
  // intersection), the only ones that can pass; nullopt when none names any.
  std::optional<std::vector<std::string>> nodes_named_by_allocated_claims(const CycleState& cs) const;
  // Whether the groups give `cs`'s pod the same verdict on every node of one
  // (the groups brought up to date when it may).
  bool node_groups_serve(const CycleState& cs);
  // The group of `node` for `cs`'s pod, the groups brought up to date
  // (preemption's victim search); nullopt when they do not serve the pod.
  std::optional<uint64_t> node_group(const CycleState& cs, const std::string& node);
  // The queues' reports as last published by the scheduling thread (run()).
  std::mutex reports_mu_;
  std::vector<plugins::QueueReport> reports_;
  Clock::TimePoint reports_at_{};
  void publish_queue_reports();
  // Retries the parked pods nominated for a node (their victims went).
  void wake_nominated(Clock::TimePoint now);
  SchedulingQueue queue_;

  // Offering freed devices to waiting pods (see devices_freed).
  static constexpr int kWakeBudget = 2;
  static constexpr std::chrono::milliseconds kFlushInterval{10000};
  int wake_budget_ = 0;
  Clock::TimePoint wake_round_start_{};
  bool freed_since_flush_ = false;
  Clock::TimePoint last_flush_{};

  // Building ahead of the next pod (warm_up): waits for the inventory to be
  // quiet, as agents publish a node's slices one by one.
  static constexpr std::chrono::milliseconds kWarmQuiet{100};
  Clock::TimePoint inventory_changed_at_{};

  // Each waiting pod's Unschedulable condition as last written (or queued).
  struct ConditionWritten {
    Clock::TimePoint at;
    std::string message;
  };
  std::map<std::string, ConditionWritten> condition_written_;
  // Each PodGroup's condition as last written ("status\nreason\nmessage").
  std::map<std::string, std::string> group_condition_written_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Event> inbox_;
  // Finished bindings, applied by drain() on the scheduling thread.
  std::deque<std::function<void()>> completions_;

  // Binding cycles in flight (scheduling thread): how many, the claims they
  // write (another pod using one waits for the write to land, so it never
  // writes on top of an unconfirmed version) and the pods waiting so.
  int in_flight_ = 0;
  std::map<std::string, int> in_flight_claims_;
  std::map<std::string, std::vector<std::string>> waiting_on_claim_;

  std::mutex bind_mu_;
  // Workers wait on bind_cv_ (one woken per job queued), quiesce() on idle_cv_
  // (woken when the last job ends): one condition for both woke every worker
  // after every job, 16 context switches per pod, tripling a pod's CPU.
  std::condition_variable bind_cv_, idle_cv_;
  // No job queued or running (bind_mu_ held).
  bool bind_idle() const { return bind_jobs_.empty() && status_order_.empty() && bind_busy_ == 0; }
  std::deque<std::function<void()>> bind_jobs_;
  // Queued PodScheduled=False writes, by pod key (taken after bind_jobs_).
  struct StatusWrite {
    api::Pod pod;
    std::string message, now;
    Clock::TimePoint at;
  };
  std::map<std::string, StatusWrite> status_writes_;
  std::deque<std::string> status_order_;
  // Pods with a status write running: a pod's next write waits for it, or an
  // older message that retried after a conflict could land over a newer one.
  std::set<std::string> status_in_flight_;
  bool bind_stop_ = false;
  int bind_busy_ = 0;  // workers running a job
  std::vector<std::thread> bind_threads_;
};

}  // namespace draplane::sched
