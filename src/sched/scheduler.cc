// Scheduler: events, queue hand-off and the run loop (cycle.cc holds one
// scheduling cycle, bind.cc the API writes).
#include "sched/scheduler.h"

#include <spdlog/spdlog.h>

#include <pthread.h>

#include <algorithm>
#include <chrono>

#include <type_traits>

#include "api/validation.h"
#include "sched/framework.h"
#include "sched/plugins/dynamic_resources.h"
#include "sched/plugins/gang_scheduling.h"
#include "sched/plugins/plugins.h"
#include "sched/plugins/preemption.h"
#include "sched/plugins/queues.h"
#include "sched/pod_claims.h"

namespace draplane::sched {
namespace {

// A pod update that may change where (or whether) it fits; status-only changes
// written by the scheduler itself (conditions) do not.
bool scheduling_relevant_change(const api::Pod& a, const api::Pod& b) {
  return !(a.spec == b.spec && a.metadata.labels == b.metadata.labels &&
           a.status.resourceClaimStatuses == b.status.resourceClaimStatuses &&
           a.status.extendedResourceClaimStatus == b.status.extendedResourceClaimStatus);
}

// A claim change that frees something a waiting pod may need: its devices
// (deallocated), or a place in a full reservedFor (Kubernetes' limit: 256).
bool claim_frees(const api::ResourceClaim& old_claim, const api::ResourceClaim& claim) {
  if (old_claim.status.allocation && !claim.status.allocation) return true;
  return old_claim.status.reservedFor.size() >= static_cast<size_t>(api::kResourceClaimReservedForMaxSize) &&
         claim.status.reservedFor.size() < old_claim.status.reservedFor.size();
}

// A Node update that may let a waiting pod fit: anything the node filter reads
// (labels, taints, unschedulable, allocatable). Heartbeats (conditions, times)
// do not, and with many nodes they would retry every pending pod many times a
// second (kube-scheduler's queueing hints skip them likewise).
bool node_change_may_help(const api::Node& old_node, const api::Node& node) {
  return old_node.metadata.labels != node.metadata.labels || old_node.spec.taints != node.spec.taints ||
         old_node.spec.unschedulable != node.spec.unschedulable || old_node.status.allocatable != node.status.allocatable;
}

std::unique_ptr<framework::Framework> make_framework(framework::Handle handle) {
  auto fw = std::make_unique<framework::Framework>(handle);
  plugins::register_defaults(*fw);
  return fw;
}

}  // namespace

Scheduler::Scheduler(Binder& binder, Clock& clock, SchedulerOptions options, std::shared_ptr<spdlog::logger> logger)
    : binder_(binder),
      clock_(clock),
      options_(std::move(options)),
      log_(logger ? std::move(logger) : spdlog::default_logger()),
      fw_(make_framework(framework::Handle{&cache_, &options_, &stats_, &binder_, &clock_})),
      dra_(fw_->plugin<plugins::DynamicResources>()),
      gang_(fw_->plugin<plugins::GangScheduling>()),
      preempt_(fw_->plugin<plugins::DefaultPreemption>()),
      queues_(fw_->plugin<plugins::KaiQueues>()),
      queue_(options_.queue, fw_->queue_sort()),
      last_flush_(clock_.now()) {
  if (options_.node_classes && dra_ != nullptr && options_.node_policy != placement::PolicyKind::kRandom) {
    node_classes_ = std::make_unique<NodeClasses>(cache_, *dra_);
    if (preempt_ != nullptr) {
      preempt_->set_node_groups([this](const CycleState& cs, const std::string& node) { return node_group(cs, node); });
    }
  }
  for (int i = 0; i < options_.bind_workers; ++i) bind_threads_.emplace_back([this] { bind_worker(); });
}

Scheduler::~Scheduler() {
  {
    std::lock_guard<std::mutex> lock(bind_mu_);
    bind_stop_ = true;
  }
  bind_cv_.notify_all();
  for (auto& t : bind_threads_) t.join();
}

void Scheduler::bind_worker() {
  pthread_setname_np(pthread_self(), "sched-bind");
  // The first queued status write for a pod with none running (a pod's writes
  // land in the order they were queued; a newer message replaces a queued one).
  auto next_status = [this] {
    return std::find_if(status_order_.begin(), status_order_.end(),
                        [this](const std::string& key) { return status_in_flight_.count(key) == 0; });
  };
  while (true) {
    std::function<void()> job;
    std::string status_key;
    {
      std::unique_lock<std::mutex> lock(bind_mu_);
      bind_cv_.wait(lock, [&] { return bind_stop_ || !bind_jobs_.empty() || next_status() != status_order_.end(); });
      if (bind_stop_) return;
      if (!bind_jobs_.empty()) {
        job = std::move(bind_jobs_.front());
        bind_jobs_.pop_front();
      } else {
        auto pos = next_status();
        status_key = *pos;
        status_order_.erase(pos);
        auto it = status_writes_.find(status_key);
        job = [this, w = std::move(it->second)] { write_unschedulable(w.pod, w.message, w.now, w.at); };
        status_writes_.erase(it);
        status_in_flight_.insert(status_key);
      }
      ++bind_busy_;
    }
    job();
    bool idle = false;
    {
      std::lock_guard<std::mutex> lock(bind_mu_);
      --bind_busy_;
      if (!status_key.empty()) status_in_flight_.erase(status_key);
      idle = bind_idle();
    }
    // A status write that waited for this pod's is this worker's next job
    // (it looks again before it sleeps): no other worker needs waking.
    if (idle) idle_cv_.notify_all();
  }
}

void Scheduler::quiesce() {
  if (options_.bind_workers > 0) {
    std::unique_lock<std::mutex> lock(bind_mu_);
    idle_cv_.wait(lock, [&] { return bind_idle(); });
  }
  apply_completions();
}

size_t Scheduler::apply_completions() {
  std::deque<std::function<void()>> done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done.swap(completions_);
  }
  for (const auto& f : done) f();
  return done.size();
}

void Scheduler::bind_async(CycleState cs, NodeFit fit, Reservation reservation) {
  struct Job {
    CycleState cs;
    NodeFit fit;
    Reservation reservation;
    BindOutcome out;
  };
  auto job = std::make_shared<Job>(Job{std::move(cs), std::move(fit), std::move(reservation), {}});
  std::vector<std::string> claim_keys;
  for (const auto& w : job->reservation.writes) claim_keys.push_back(object_key(w.claim.metadata));
  for (const auto& k : claim_keys) ++in_flight_claims_[k];
  ++in_flight_;
  auto complete = [this, job, claim_keys] {
    finish_binding(job->cs, job->fit, job->reservation, job->out);
    --in_flight_;
    auto now = clock_.now();
    for (const auto& k : claim_keys) {
      auto it = in_flight_claims_.find(k);
      if (it == in_flight_claims_.end() || --it->second > 0) continue;
      in_flight_claims_.erase(it);
      auto w = waiting_on_claim_.find(k);
      if (w == waiting_on_claim_.end()) continue;
      for (const auto& pod_key : w->second) {
        queue_.remove(pod_key);
        const api::Pod* p = cache_.pod(pod_key);
        if (p != nullptr && is_ours_pending(*p)) queue_.add(pod_key, p->spec.priority.value_or(0), now, false);
      }
      waiting_on_claim_.erase(w);
    }
  };
  {
    std::lock_guard<std::mutex> lock(bind_mu_);
    bind_jobs_.push_back([this, job, complete] {
      job->out = write_reservation(job->cs, job->fit, job->reservation);
      {
        std::lock_guard<std::mutex> l(mu_);
        completions_.push_back(complete);
      }
      cv_.notify_one();
    });
  }
  bind_cv_.notify_one();
}

bool Scheduler::wait_for_in_flight_claim(const CycleState& cs) {
  if (in_flight_claims_.empty()) return false;
  ResolvedClaims rc = resolve_claims(cs.pod, cache_);
  for (const auto& k : rc.keys) {
    if (in_flight_claims_.count(k)) {
      waiting_on_claim_[k].push_back(cs.pod_key);
      return true;
    }
  }
  return false;
}

bool Scheduler::is_ours_pending(const api::Pod& pod) const {
  const std::string& s = pod.spec.schedulerName;
  bool ours = s == options_.name || (options_.serve_default && (s.empty() || s == "default-scheduler"));
  return ours && pod.spec.nodeName.empty() && pod.metadata.deletionTimestamp.empty() && pod_is_active(pod) &&
         cache_.bound_node(object_key(pod.metadata)).empty();
}

// True when the active pod at `key` is bound to a node whose pod slots are all
// taken: its end frees a slot someone may wait for. (Its devices free up when
// its claims are released, which is a claim event.)
bool Scheduler::holds_last_pod_slot(const std::string& key, const api::Pod* cached) const {
  if (cached == nullptr || !pod_is_active(*cached)) return false;
  const std::string node = cache_.bound_node(key);
  const api::Node* n = node.empty() ? nullptr : cache_.node(node);
  if (n == nullptr) return false;
  auto it = n->status.allocatable.find("pods");
  if (it == n->status.allocatable.end()) return false;
  return cache_.pods_on_node(node) >= it->second.value();
}

void Scheduler::on_pod(const api::Pod* old_pod, api::Pod pod, bool deleted) {
  auto now = clock_.now();
  std::string key = object_key(pod.metadata);
  if (deleted) {
    bool frees_slot = holds_last_pod_slot(key, cache_.pod(key));
    cache_.delete_pod(key);
    queue_.remove(key);
    dra_->forget_pod(key);
    condition_written_.erase(key);
    if (preempt_ != nullptr) {
      preempt_->track(key, nullptr);
      wake_nominated(now);  // a victim may have gone
    }
    if (frees_slot) devices_freed(now);
    return;
  }
  // What the old object (the cache's, replaced below) tells is read first.
  bool was_active_bound = old_pod != nullptr && pod_is_active(*old_pod) && !cache_.bound_node(key).empty();
  bool frees_slot = holds_last_pod_slot(key, cache_.pod(key));
  bool relevant = old_pod == nullptr || scheduling_relevant_change(*old_pod, pod);
  old_pod = nullptr;
  cache_.upsert_pod(std::move(pod));
  const api::Pod* cached = cache_.pod(key);
  if (preempt_ != nullptr) preempt_->track(key, is_ours_pending(*cached) ? cached : nullptr);
  if (is_ours_pending(*cached)) {
    if (relevant) dra_->forget_pod(key);
    queue_.add(key, cached->spec.priority.value_or(0), now, relevant);
  } else {
    queue_.remove(key);
    dra_->forget_pod(key);
    condition_written_.erase(key);
    if (was_active_bound && !pod_is_active(*cached) && frees_slot) devices_freed(now);
  }
}

void Scheduler::handle(const Event& event) { handle(Event(event)); }

// The event's object is moved into the cache (a copy of every pod and claim
// was a sixth of the scheduling thread's time).
void Scheduler::handle(Event&& event) {
  if (queues_ != nullptr) queues_->on_event(event);  // allocation, demand or capacity may move
  bool del = event.op == Event::Op::kDelete;
  auto now = clock_.now();
  std::visit(
      [&](auto& obj) {
        using T = std::decay_t<decltype(obj)>;
        std::string key = object_key(obj.metadata);
        if constexpr (std::is_same_v<T, api::Pod>) {
          on_pod(cache_.pod(key), std::move(obj), del);
        } else if constexpr (std::is_same_v<T, api::ResourceClaim>) {
          // What the API said before (not our assumption: our own writes
          // arriving one by one must not look like releases).
          const api::ResourceClaim* old = cache_.observed_claim(key);
          const bool appeared = !del && cache_.claim(key) == nullptr;
          const bool frees = old != nullptr && (del ? old->status.allocation.has_value() : claim_frees(*old, obj));
          if (del) {
            cache_.delete_claim(key, obj);
          } else {
            cache_.upsert_claim(std::move(obj));
            if (appeared) wake_pods_using(*cache_.observed_claim(key), now);
          }
          if (frees) devices_freed(now);
        } else if constexpr (std::is_same_v<T, api::Node>) {
          const api::Node* old = cache_.node(key);
          bool wake = del || old == nullptr || node_change_may_help(*old, obj);
          if (del) cache_.delete_node(key);
          else cache_.upsert_node(obj);
          if (wake) {
            ++stats_.node_wakeups;
            queue_.move_all(now);
          }
        } else if constexpr (std::is_same_v<T, api::ResourceSlice>) {
          if (del) cache_.delete_slice(key);
          else cache_.upsert_slice(obj);
          inventory_changed_at_ = now;
          queue_.move_all(now);
        } else if constexpr (std::is_same_v<T, api::DeviceClass>) {
          if (del) cache_.delete_class(key);
          else cache_.upsert_class(obj);
          inventory_changed_at_ = now;
          queue_.move_all(now);
        } else if constexpr (std::is_same_v<T, api::DeviceTaintRule>) {
          // A rule's taint may block devices or, removed, free them; its
          // status (written by the eviction controller) changes neither.
          if (del) cache_.delete_rule(key);
          else if (!cache_.upsert_rule(obj)) return;
          inventory_changed_at_ = now;
          queue_.move_all(now);
        } else if constexpr (std::is_same_v<T, api::ResourceClaimTemplate>) {
          if (del) cache_.delete_template(key);
          else cache_.upsert_template(obj);
        } else if constexpr (std::is_same_v<T, api::PodGroup>) {
          // A new PodGroup or a changed policy (minCount may change) concerns
          // its waiting members; a status write (ours) does not.
          const api::PodGroup* old = cache_.pod_group(key);
          const bool wake = !del && (old == nullptr || !(old->spec == obj.spec));
          if (del) {
            cache_.delete_pod_group(key);
            group_condition_written_.erase(key);
          } else {
            cache_.upsert_pod_group(obj);
          }
          if (wake) queue_.move_all(now);
        }
      },
      event.object);
}

// A new claim helps the pods that use it (kube-scheduler's queueing hint for
// claim adds), not every waiting pod.
// The pods come from the cache's claim-name index and the claim's owners (a
// scan of every waiting pod per new claim was quadratic in a burst).
void Scheduler::wake_pods_using(const api::ResourceClaim& claim, Clock::TimePoint now) {
  std::set<std::string> keys;
  if (const auto* naming = cache_.pods_naming_claim(object_key(claim.metadata))) keys = *naming;
  for (const auto& ref : claim.metadata.ownerReferences) {
    const std::string key = claim.metadata.namespace_ + "/" + ref.name;
    const api::Pod* p = ref.kind == "Pod" ? cache_.pod(key) : nullptr;
    if (p != nullptr && p->metadata.uid == ref.uid) keys.insert(key);
  }
  for (const auto& key : keys) {
    if (queue_.is_unschedulable(key)) queue_.wake(key, now);
  }
}

// Freed devices are offered to the pods parked longest, one at a time: a pod
// placed wakes the next, a pod that fails too while the budget (a few
// failures per release) lasts (see after_cycle), so a release costs a few
// cycles rather than one per waiting pod. Every parked pod is retried by the
// next flush (kFlushInterval) after a release; other changes (nodes, slices,
// classes, pods leaving nodes) retry them all at once, as before.
void Scheduler::devices_freed(Clock::TimePoint now) {
  ++stats_.releases;
  wake_budget_ = std::min(wake_budget_ + kWakeBudget, 4 * kWakeBudget);
  wake_round_start_ = now;
  freed_since_flush_ = true;
  wake_nominated(now);
  queue_.wake_oldest(now, 1, now, true);
}

void Scheduler::wake_nominated(Clock::TimePoint now) {
  if (preempt_ == nullptr) return;
  for (const auto& [key, nom] : preempt_->nominations()) {
    if (queue_.is_unschedulable(key)) queue_.wake(key, now);
  }
}

void Scheduler::after_cycle(Outcome outcome, Clock::TimePoint now) {
  if (outcome != Outcome::kBound && outcome != Outcome::kBinding && outcome != Outcome::kUnschedulable) return;
  // The next pod parked before this round of wake-ups (not one tried in it):
  // after a placement for free (devices may remain), after a failure while
  // the budget lasts.
  const bool placed = outcome != Outcome::kUnschedulable;
  if (placed || wake_budget_ > 0) {
    if (queue_.wake_oldest(now, 1, wake_round_start_, false) > 0 && !placed) --wake_budget_;
  }
  maybe_flush(now);
}

void Scheduler::maybe_flush(Clock::TimePoint now) {
  if (!freed_since_flush_ || now - last_flush_ < kFlushInterval || queue_.unschedulable_size() == 0) return;
  ++stats_.flushes;
  queue_.move_all(now);
  freed_since_flush_ = false;
  last_flush_ = now;
}

void Scheduler::post(Event event) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    inbox_.push_back(std::move(event));
  }
  cv_.notify_one();
}

void Scheduler::wake() { cv_.notify_all(); }

void Scheduler::post_queue(std::string json, bool deleted) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    completions_.push_back([this, json = std::move(json), deleted] {
      if (queues_ == nullptr) return;
      auto q = plugins::parse_queue(json);
      if (!q.has_value()) {
        log_->warn("queue ignored: {}", q.error().message());
        return;
      }
      bool changed = true;
      if (deleted) queues_->erase(q->name);
      else changed = queues_->upsert(std::move(*q));
      // Shares moved: every waiting pod may be judged differently now. Not
      // after a status write (the runner's, every few seconds per queue):
      // that woke every parked pod each time.
      if (changed) queue_.move_all(clock_.now());
    });
  }
  cv_.notify_one();
}

void Scheduler::publish_queue_reports() {
  if (queues_ == nullptr) return;
  auto now = clock_.now();
  if (now - reports_at_ < std::chrono::seconds(1)) return;
  reports_at_ = now;
  auto reports = queues_->reports();
  std::lock_guard<std::mutex> lock(reports_mu_);
  reports_ = std::move(reports);
}

std::vector<plugins::QueueReport> Scheduler::current_queue_reports() {
  return queues_ != nullptr ? queues_->reports() : std::vector<plugins::QueueReport>{};
}

std::vector<plugins::QueueReport> Scheduler::queue_reports() {
  std::lock_guard<std::mutex> lock(reports_mu_);
  return reports_;
}

size_t Scheduler::drain() {
  std::deque<Event> batch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    batch.swap(inbox_);
  }
  auto t0 = std::chrono::steady_clock::now();
  for (auto& e : batch) handle(std::move(e));
  stats_.events += static_cast<int64_t>(batch.size());
  stats_.event_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return batch.size() + apply_completions();
}

int Scheduler::run_until_idle(int max_cycles) {
  int n = 0;
  while (n < max_cycles) {
    drain();
    CycleResult r = schedule_one();
    if (r.outcome == Outcome::kIdle) {
      if (in_flight_ == 0) break;
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return !completions_.empty(); });
      continue;
    }
    ++n;
  }
  return n;
}

bool Scheduler::warm_up() {
  if (!cache_.snapshot_stale() || clock_.now() - inventory_changed_at_ < kWarmQuiet) return false;
  cache_.snapshot();
  // A node whose view cannot be built (a broken slice node selector) is
  // reported by the cycle that needs it.
  for (const auto& [name, node] : cache_.nodes()) (void)cache_.node_view(name);
  return true;
}

void Scheduler::run(const std::atomic<bool>& stop) {
  pthread_setname_np(pthread_self(), "scheduler");
  while (!stop.load()) {
    drain();
    publish_queue_reports();
    CycleResult r = schedule_one();
    if (r.outcome != Outcome::kIdle) continue;
    if (warm_up()) continue;
    std::unique_lock<std::mutex> lock(mu_);
    if (!inbox_.empty() || !completions_.empty() || stop.load()) continue;
    // Sleep until an event, the next backoff, the end of the inventory's quiet
    // period (warm_up), or a periodic check of `stop`.
    auto wait = std::chrono::milliseconds(200);
    if (cache_.snapshot_stale()) {
      auto d = std::chrono::duration_cast<std::chrono::milliseconds>(inventory_changed_at_ + kWarmQuiet - clock_.now());
      if (d < wait) wait = std::max(d, std::chrono::milliseconds(1));
    }
    if (auto next = queue_.next_ready()) {
      auto d = std::chrono::duration_cast<std::chrono::milliseconds>(*next - clock_.now());
      if (d < wait) wait = std::max(d, std::chrono::milliseconds(1));
    }
    cv_.wait_for(lock, wait);
  }
}

}  // namespace draplane::sched
