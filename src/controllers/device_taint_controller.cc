#include "controllers/device_taint_controller.h"

#include <pthread.h>
#include <spdlog/sinks/null_sink.h>

#include <set>
#include <utility>

#include "api/codec.h"
#include "client/get_optional.h"
#include "client/resource_path.h"
#include "common/rfc3339.h"
#include "controllers/informer_options.h"

namespace draplane::controllers {
namespace {

using namespace client::resources;

constexpr const char* kPlanKey = "plan";
constexpr const char* kEvictPrefix = "evict:";
constexpr const char* kRulePrefix = "rule:";

// kube-controller-manager records through tools/record as the controller.
// Runs f on this thread named `name` (as top and debuggers show it).
template <class F>
void run_named(const char* name, F f) {
  pthread_setname_np(pthread_self(), name);
  f();
}

std::string key_of(const api::ObjectMeta& m) { return m.namespace_.empty() ? m.name : m.namespace_ + "/" + m.name; }

std::chrono::milliseconds until(WallTime when) {
  auto d = std::chrono::duration_cast<std::chrono::milliseconds>(when - std::chrono::system_clock::now());
  return d.count() > 0 ? d + std::chrono::milliseconds(1) : std::chrono::milliseconds(0);
}

client::ObjectReference pod_ref(const std::string& ns, const std::string& name, const std::string& uid) {
  return client::ObjectReference{"v1", "Pod", ns, name, uid, "", ""};
}

// Keeps a typed copy of each object in `objs` (under `mu`), then queues a new plan.
template <class T>
void mirror(client::Informer<T>& informer, std::mutex& mu, std::map<std::string, T>& objs,
            std::optional<TaintInventory>* inventory, WorkQueue& queue) {
  informer.add_handler(
      [&mu, &objs, inventory, &queue](client::EventType type, const T*, const T& obj) {
        {
          std::lock_guard<std::mutex> l(mu);
          if (type == client::EventType::kDeleted) objs.erase(key_of(obj.metadata));
          else objs.insert_or_assign(key_of(obj.metadata), obj);
          if (inventory != nullptr) inventory->reset();
        }
        queue.add(kPlanKey);
      });
}

}  // namespace

DeviceTaintController::DeviceTaintController(client::RestClient& rest, DeviceTaintOptions options)
    : options_(std::move(options)),
      rest_(rest),
      events_(rest, event_options("device-taint-eviction")),
      informers_(rest, options_.informers),
      // Asked for in this order, so that own informers start in it: inventory
      // first, then claims and pods, and the first plan sees every taint.
      rules_(informers_->device_taint_rules()),
      slices_(informers_->slices()),
      claims_(informers_->claims()),
      pods_(informers_->pods()) {
  if (!options_.logger) {
    options_.logger = std::make_shared<spdlog::logger>("device-taint", std::make_shared<spdlog::sinks::null_sink_mt>());
  }
  // Only pods that name claims can be evicted; the others stay out of the plan.
  pods_.add_handler(
      [this](client::EventType type, const api::Pod*, const api::Pod& pod) {
        if (pod.spec.resourceClaims.empty()) return;
        {
          std::lock_guard<std::mutex> l(mu_);
          if (type == client::EventType::kDeleted) pod_objs_.erase(key_of(pod.metadata));
          else pod_objs_.insert_or_assign(key_of(pod.metadata), pod);
        }
        queue_.add(kPlanKey);
      });
  mirror(claims_, mu_, claim_objs_, nullptr, queue_);
  mirror(slices_, mu_, slice_objs_, &inventory_, queue_);
  mirror(rules_, mu_, rule_objs_, &inventory_, queue_);
  // Every rule's status is written at least once, and again when it changes.
  rules_.add_handler(
      [this](client::EventType type, const api::DeviceTaintRule*, const api::DeviceTaintRule& rule) {
        if (type != client::EventType::kDeleted) {
          queue_.add(kRulePrefix + rule.metadata.name);
          return;
        }
        std::lock_guard<std::mutex> l(mu_);
        evicted_.erase(rule.metadata.uid);
      });
}

DeviceTaintController::~DeviceTaintController() { stop(); }

void DeviceTaintController::start() {
  if (std::exchange(started_, true)) return;
  informers_.start();
  // One worker: plans and evictions never run at the same time.
  worker_ = std::thread([this] { run_named("taint-evict", [this] { worker(); }); });
}

void DeviceTaintController::stop() {
  if (!std::exchange(started_, false)) return;
  queue_.shutdown();
  worker_.join();
  informers_.stop();
  events_.stop();
}

bool DeviceTaintController::wait_synced(int timeout_ms) {
  bool synced = true;
  for_each_informer([&](auto& informer) { synced = synced && informer.wait_synced(timeout_ms); });
  return synced;
}

int64_t DeviceTaintController::evicted_by_rule(const std::string& uid) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = evicted_.find(uid);
  return it == evicted_.end() ? 0 : it->second;
}

void DeviceTaintController::worker() {
  while (auto item = queue_.get()) {
    const std::string& k = *item;
    Result<std::chrono::milliseconds> again = std::chrono::milliseconds(0);
    if (k == kPlanKey) {
      sync_plan();
    } else if (k.rfind(kEvictPrefix, 0) == 0) {
      again = evict(k.substr(std::string_view(kEvictPrefix).size()));
    } else if (k.rfind(kRulePrefix, 0) == 0) {
      again = sync_rule_status(k.substr(std::string_view(kRulePrefix).size()));
    }
    if (!again.has_value()) {
      int failures = ++failures_[k];
      auto delay = retry_backoff(failures);
      options_.logger->info("{} failed (retry in {} ms): {}", k, delay.count(), again.error().to_string());
      queue_.add_after(k, delay);
    } else {
      failures_.erase(k);
      if (again->count() > 0) queue_.add_after(k, *again);
    }
    queue_.done(k);
  }
}

void DeviceTaintController::sync_plan() {
  std::vector<std::string> cancelled, rules;
  std::map<std::string, WallTime> due;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!inventory_) {
      // The slices as they are kept (copying every slice after each slice
      // event made publishing N nodes cost N^2 slice copies).
      std::vector<const api::ResourceSlice*> slices;
      slices.reserve(slice_objs_.size());
      for (const auto& [k, s] : slice_objs_) slices.push_back(&s);
      std::vector<api::DeviceTaintRule> rs;
      for (const auto& [k, r] : rule_objs_) rs.push_back(r);
      inventory_ = taint_inventory(slices, rs);
    }
    auto plan = plan_evictions(pod_objs_, claim_objs_, *inventory_);
    for (const auto& [key, old] : planned_) {
      if (plan.count(key)) continue;
      // A pod that went away or is being deleted needs no word; one that stays does.
      auto p = pod_objs_.find(key);
      if (p != pod_objs_.end() && p->second.metadata.uid == old.uid && p->second.metadata.deletionTimestamp.empty()) {
        cancelled.push_back(key);
      }
    }
    std::set<std::string> rule_names;
    for (const auto& [key, e] : plan) {
      auto old = planned_.find(key);
      if (old == planned_.end() || old->second.when != e.when || old->second.uid != e.uid) due[key] = e.when;
      for (const auto& r : e.reasons) {
        if (!r.rule.empty()) rule_names.insert(r.rule);
      }
    }
    rules.assign(rule_names.begin(), rule_names.end());
    for (const auto& key : cancelled) {
      const auto& e = planned_.at(key);
      events_.record(pod_ref(e.ns, e.name, e.uid), "Normal", "DeviceTaintManagerEviction", "", "Cancelling deletion");
    }
    planned_ = std::move(plan);
  }
  for (const auto& key : cancelled) options_.logger->info("pod {}: eviction cancelled", key);
  for (const auto& [key, when] : due) queue_.add_after(kEvictPrefix + key, until(when));
  // Pending evictions show in the rules' status (paced by sync_rule_status).
  for (const auto& r : rules) queue_.add(kRulePrefix + r);
}

Result<std::chrono::milliseconds> DeviceTaintController::evict(const std::string& pod_key) {
  PodEviction e;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = planned_.find(pod_key);
    if (it == planned_.end()) return std::chrono::milliseconds(0);  // no longer needed
    e = it->second;
  }
  if (auto wait = until(e.when); wait.count() > 0) return wait;
  ASSIGN_OR_RETURN(bool evicted, delete_pod(e));
  std::set<std::pair<std::string, std::string>> rules;  // (uid, name)
  for (const auto& r : e.reasons) {
    if (!r.rule.empty() && evicted) rules.insert({r.rule_uid, r.rule});
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    planned_.erase(pod_key);
    for (const auto& [uid, name] : rules) ++evicted_[uid];
  }
  // The rule's count shows after the status period, as upstream schedules it
  // (an earlier write would race the informers' view of the deletion).
  for (const auto& [uid, name] : rules) queue_.add_after(kRulePrefix + name, options_.rule_status_period);
  return std::chrono::milliseconds(0);
}

Result<bool> DeviceTaintController::delete_pod(const PodEviction& e) {
  const client::Path path = kPods.ns(e.ns).name(e.name);
  ASSIGN_OR_RETURN(auto found, client::get_optional<api::Pod>(rest_, path));
  if (!found) return false;
  api::Pod& pod = *found;
  // Replaced by a pod of the same name: not ours. Already going: done (upstream
  // counts it as evicted).
  if (pod.metadata.uid != e.uid) return false;
  if (!pod.metadata.deletionTimestamp.empty()) return true;
  std::string why;
  for (const auto& r : e.reasons) why += (why.empty() ? "" : ", ") + describe(r);
  events_.record(pod_ref(e.ns, e.name, e.uid), "Normal", "DeviceTaintManagerEviction", "",
                 "Marking for deletion: NoExecute taint on device " + why);
  options_.logger->info("evicting pod {}/{}: {}", e.ns, e.name, why);
  if (auto status = with_disruption_target(pod.status, common::format_rfc3339(std::chrono::system_clock::now()))) {
    pod.status = std::move(*status);
    auto out = rest_.put(path.sub("status"), api::to_json(api::Object(pod)));
    if (!out.has_value()) {
      if (out.error().code() == Code::kNotFound) return false;
      return out.error();
    }
  }
  const std::string opts =
      "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"preconditions\":{\"uid\":\"" + e.uid + "\"}}";
  ASSIGN_OR_RETURN(client::Response r, rest_.request("DELETE", path, opts));
  if (r.status == 404) return false;
  if (r.status >= 200 && r.status < 300) return true;
  return client::status_from_response(r);
}

Result<std::chrono::milliseconds> DeviceTaintController::sync_rule_status(const std::string& name) {
  api::DeviceTaintRule rule;
  std::optional<api::DeviceTaintRuleStatus> status;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = rule_objs_.find(name);
    if (it == rule_objs_.end()) return std::chrono::milliseconds(0);
    rule = it->second;
    const auto now = std::chrono::system_clock::now();
    // Upstream writes a rule's status at most once per period while its
    // generation stays the same; lastTransitionTime marks the last write.
    for (const auto& c : rule.status.conditions) {
      if (c.type != kEvictionInProgress || c.observedGeneration != rule.metadata.generation) continue;
      auto last = common::parse_rfc3339_time(c.lastTransitionTime);
      if (!last) continue;
      auto since = std::chrono::duration_cast<std::chrono::milliseconds>(now - *last);
      if (since < options_.rule_status_period) return options_.rule_status_period - since;
    }
    std::vector<api::ResourceSlice> slices;
    for (const auto& [k, s] : slice_objs_) slices.push_back(s);
    std::vector<api::DeviceTaintRule> rules;
    for (const auto& [k, r] : rule_objs_) rules.push_back(r);
    auto ev = evicted_.find(rule.metadata.uid);
    RuleCounts counts = rule_counts(rule, pod_objs_, claim_objs_, slices, rules, ev == evicted_.end() ? 0 : ev->second);
    status = updated_rule_status(rule, rule_condition(rule, counts), common::format_rfc3339(now));
  }
  if (!status) return std::chrono::milliseconds(0);
  rule.status = std::move(*status);
  // The cached resourceVersion guards the write; a conflict is retried from the newer rule.
  auto out = rest_.put(kDeviceTaintRules.all().name(name).sub("status"), api::to_json(api::Object(rule)));
  if (!out.has_value() && out.error().code() != Code::kNotFound) return out.error();
  return std::chrono::milliseconds(0);
}

}  // namespace draplane::controllers
