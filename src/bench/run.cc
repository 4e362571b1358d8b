// The driver: builds the workload's plan, creates it in the mode's target,
// measures the measured phase as scheduler_perf does and checks the result.
#include <algorithm>
#include <thread>

#include "bench/bench.h"
#include "bench/check.h"

#include "bench/modes.h"
#include "bench/workloads.h"

namespace draplane::bench {

std::string pod_key(const api::Pod& pod) { return pod.metadata.namespace_ + "/" + pod.metadata.name; }

void Tracker::created(const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  auto& t = pods_[key];
  t.created = Clock::now();
  t.is_created = true;
}

void Tracker::record(const std::string& key, const std::string* unschedulable) {
  const auto now = Clock::now();
  std::lock_guard<std::mutex> l(mu_);
  auto& t = pods_[key];
  if (t.is_bound) return;  // a binding is final
  const bool was_settled = t.is_unschedulable;
  if (unschedulable == nullptr) {
    t.bound = now;
    t.is_bound = true;
    t.is_unschedulable = false;
  } else {
    t.is_unschedulable = true;
    t.message = *unschedulable;
  }
  if (!t.awaited) return;
  if (!was_settled) --unsettled_;
  if (unsettled_ == 0) cv_.notify_all();
}

void Tracker::bound(const std::string& key) { record(key, nullptr); }

void Tracker::unschedulable(const std::string& key, const std::string& message) { record(key, &message); }

std::string Tracker::progress(const std::vector<std::string>& keys) {
  std::lock_guard<std::mutex> l(mu_);
  int bound = 0;
  std::string first;
  for (const auto& k : keys) {
    auto it = pods_.find(k);
    if (it == pods_.end()) continue;
    if (it->second.is_bound) ++bound;
    if (first.empty() && it->second.is_unschedulable) first = k + " is Unschedulable: " + it->second.message;
  }
  return std::to_string(bound) + " of " + std::to_string(keys.size()) + " bound" + (first.empty() ? "" : "; " + first);
}

bool Tracker::wait(const std::vector<std::string>& keys, Clock::time_point deadline, int allow_unschedulable) {
  std::unique_lock<std::mutex> l(mu_);
  std::vector<Times*> awaited;
  awaited.reserve(keys.size());
  unsettled_ = 0;
  for (const auto& k : keys) {
    Times& t = pods_[k];
    if (t.awaited) continue;  // a key given twice
    t.awaited = true;
    awaited.push_back(&t);
    if (!t.is_bound && !t.is_unschedulable) ++unsettled_;
  }
  // Woken once every pod is bound or Unschedulable, then at each change of
  // one of them (an Unschedulable pod bound on a retry).
  const bool done = cv_.wait_until(l, deadline, [&] {
    if (unsettled_ != 0) return false;
    int unsched = 0;
    for (const Times* t : awaited) unsched += t->is_bound ? 0 : 1;
    return unsched == allow_unschedulable;
  });
  for (Times* t : awaited) t->awaited = false;
  unsettled_ = 0;
  return done;
}

std::map<std::string, Tracker::Times> Tracker::snapshot() {
  std::lock_guard<std::mutex> l(mu_);
  return {pods_.begin(), pods_.end()};
}

namespace {

std::vector<std::string> keys_of(const std::vector<api::Pod>& pods) {
  std::vector<std::string> v;
  v.reserve(pods.size());
  for (const auto& p : pods) v.push_back(pod_key(p));
  return v;
}

Result<void> setup(Target& t, const Plan& plan, Tracker& tracker, Clock::time_point deadline) {
  for (const auto& o : plan.cluster) {
    if (auto r = t.create(o); !r.has_value()) return r;
  }
  for (const auto& c : plan.allocated) {
    if (auto r = t.create_allocated(c); !r.has_value()) return r;
  }
  for (const auto& c : plan.init_claims) {
    if (auto r = t.create(c); !r.has_value()) return r;
  }
  if (auto r = t.create_pods(plan.init_pods); !r.has_value()) return r;
  if (!tracker.wait(keys_of(plan.init_pods), deadline)) {
    return Status(Code::kDeadlineExceeded,
                  "the init pods were not all bound before the timeout (" + tracker.progress(keys_of(plan.init_pods)) + ")");
  }
  for (const auto& c : plan.claims) {
    if (auto r = t.create(c); !r.has_value()) return r;
  }
  return {};
}

// The measured phase; returns the measured pods' keys.
Result<std::vector<std::string>> measure(Target& t, const Plan& plan, Tracker& tracker, Clock::time_point start,
                                         Clock::time_point deadline) {
  if (!plan.steady) {
    if (auto r = t.create_pods(plan.pods); !r.has_value()) return r.error();
    auto keys = keys_of(plan.pods);
    if (!tracker.wait(keys, deadline, plan.expect_unschedulable)) {
      return Status(Code::kDeadlineExceeded,
                    "the measured pods were not all placed before the timeout (" + tracker.progress(keys) + ")");
    }
    return keys;
  }
  std::vector<std::string> all;
  const auto until = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(plan.duration_s));
  for (int round = 0;; ++round) {
    std::vector<api::Pod> pods;
    for (int i = 0; i < plan.batch; ++i) pods.push_back(plan.steady_pod(round * plan.batch + i));
    if (auto r = t.create_pods(pods); !r.has_value()) return r.error();
    auto keys = keys_of(pods);
    all.insert(all.end(), keys.begin(), keys.end());
    if (!tracker.wait(keys, deadline)) {
      return Status(Code::kDeadlineExceeded, "round " + std::to_string(round) +
                                                " was not bound before the timeout (" + tracker.progress(keys) + ")");
    }
    if (Clock::now() >= until) break;  // the last round stays for the check
    if (auto r = t.delete_pods(pods); !r.has_value()) return r.error();
  }
  return all;
}

void fill_figures(Report& rep, Tracker& tracker, const std::vector<std::string>& keys, Clock::time_point start) {
  auto times = tracker.snapshot();
  std::vector<double> bound_at, latency;
  Clock::time_point last = start;
  for (const auto& k : keys) {
    const auto& t = times[k];
    if (t.is_unschedulable && !t.is_bound) ++rep.unschedulable;
    if (!t.is_bound) continue;
    ++rep.bound;
    bound_at.push_back(std::chrono::duration<double>(t.bound - start).count());
    latency.push_back(std::chrono::duration<double, std::milli>(t.bound - t.created).count());
    last = std::max(last, t.bound);
  }
  std::sort(latency.begin(), latency.end());
  rep.pods = static_cast<int>(keys.size());
  rep.seconds = std::chrono::duration<double>(last - start).count();
  rep.throughput = sample_throughput(bound_at);
  rep.pods_per_second = rep.throughput.samples > 0 ? rep.throughput.average
                        : rep.seconds > 0         ? rep.bound / rep.seconds
                                                  : 0;
  rep.p50_ms = percentile(latency, 50);
  rep.p99_ms = percentile(latency, 99);
}

}  // namespace

Result<Report> run(const Options& options) {
  if (options.mode == "e2e") return run_e2e(options);
  auto w = find_workload(options.workload);
  if (!w.has_value()) return w.error();
  if (options.mode != "inprocess" && options.mode != "api") {
    return Status(Code::kInvalid, "--mode: must be inprocess, api or e2e, not \"" + options.mode + "\"");
  }
  WorkloadParams params;
  params.nodes = options.nodes > 0 ? options.nodes : (*w)->default_nodes;
  params.duration_s = options.duration_s;
  if (options.devices > 0) params.devices = options.devices;
  auto plan = (*w)->build(params);
  if (!plan.has_value()) return plan.error();

  Tracker tracker;
  std::unique_ptr<Target> target;
  if (options.mode == "inprocess") {
    auto t = make_inprocess_target(tracker, options);
    if (!t.has_value()) return t.error();
    target = std::move(*t);
  } else {
    auto t = make_api_target(tracker, options);
    if (!t.has_value()) return t.error();
    target = std::move(*t);
  }
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(options.timeout_s));
  if (auto r = setup(*target, *plan, tracker, deadline); !r.has_value()) return r.error();

  const int64_t requests_start = target->api_requests();
  const auto start = Clock::now();
  const double cpu_start = cpu_seconds();
  auto keys = measure(*target, *plan, tracker, start, deadline);
  if (!keys.has_value()) return keys.error();
  const double cpu_used = cpu_seconds() - cpu_start;
  const int64_t requests_end = target->api_requests();

  Report rep;
  rep.workload = (*w)->name;
  rep.mode = options.mode;
  rep.store = options.store;
  rep.nodes = params.nodes;
  rep.devices = plan->devices;
  fill_figures(rep, tracker, *keys, start);
  rep.cpu_ms_per_pod = rep.pods > 0 ? 1000 * cpu_used / rep.pods : 0;
  if (requests_start >= 0 && requests_end >= requests_start && rep.pods > 0) {
    rep.api_requests_per_pod = static_cast<double>(requests_end - requests_start) / rep.pods;
  }

  auto state = target->final_state();
  rep.allocator_calls = target->stop();
  rep.scheduler = target->scheduler_stats();
  if (!state.has_value()) return state.error();
  Expectation expect;
  expect.bound = plan->steady ? plan->batch : static_cast<int>(plan->pods.size()) - plan->expect_unschedulable;
  expect.unschedulable = plan->steady ? 0 : plan->expect_unschedulable;
  auto errors = check_state(state->pods, state->claims, expect);
  if (!errors.empty()) {
    std::string msg = "wrong result (" + std::to_string(errors.size()) + " problems):";
    for (size_t i = 0; i < errors.size() && i < 20; ++i) msg += "\n  " + errors[i];
    return Status(Code::kInternal, msg);
  }
  rep.peak_rss_mb = peak_rss_mb();
  if (plan->steady) rep.note = "steady state: rounds of " + std::to_string(plan->batch) + " pods for " +
                               std::to_string(options.duration_s).substr(0, 4) + " s";
  return rep;
}

}  // namespace draplane::bench
