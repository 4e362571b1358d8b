#include "controllers/job_controller.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>

#include "api/codec.h"
#include "api/validation.h"
#include "client/get_optional.h"
#include "client/resource_path.h"
#include "common/rfc3339.h"
#include "controllers/job_logic.h"
#include "controllers/replica_set_logic.h"

namespace draplane::controllers {
namespace {

using client::resources::kPodGroups;
using client::resources::kPods;
using client::resources::kJobs;
using client::resources::kWorkloads;
// Pods created but not yet in the cache are waited for at most this long.
constexpr auto kExpectationTimeout = std::chrono::seconds(30);
constexpr size_t kUidMemo = 4096;

std::string key_of(const api::ObjectMeta& m) { return m.namespace_ + "/" + m.name; }

bool terminal(const api::Pod& p) { return p.status.phase == "Succeeded" || p.status.phase == "Failed"; }
bool has_finalizer(const api::Pod& p) {
  return std::find(p.metadata.finalizers.begin(), p.metadata.finalizers.end(), kJobTrackingFinalizer) !=
         p.metadata.finalizers.end();
}
// Active: neither finished nor being deleted.
bool active(const api::Pod& p) { return !terminal(p) && p.metadata.deletionTimestamp.empty(); }

const api::PodCondition* condition(const api::JobStatus& s, const std::string& type) {
  for (const auto& c : s.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}
bool condition_true(const api::JobStatus& s, const std::string& type) {
  const auto* c = condition(s, type);
  return c != nullptr && c->status == "True";
}
// Sets (or adds) the condition; lastTransitionTime moves only when the status changes.
bool set_condition(api::JobStatus& s, const std::string& type, const std::string& status, const std::string& reason,
                   const std::string& message, const std::string& now) {
  for (auto& c : s.conditions) {
    if (c.type != type) continue;
    if (c.status == status && c.reason == reason && c.message == message) return false;
    if (c.status != status) c.lastTransitionTime = now;
    c.status = status;
    c.reason = reason;
    c.message = message;
    c.lastProbeTime = now;
    return true;
  }
  s.conditions.push_back({type, status, now, now, reason, message});
  return true;
}

int64_t rv_number(const std::string& rv) {
  int64_t v = 0;
  for (char c : rv) {
    if (c < '0' || c > '9') return 0;
    v = v * 10 + (c - '0');
  }
  return v;
}

// status.uncountedTerminatedPods (kept in status.extra).
struct Uncounted {
  std::set<std::string> succeeded, failed;
  bool empty() const { return succeeded.empty() && failed.empty(); }
};

Uncounted read_uncounted(const api::JobStatus& s) {
  Uncounted u;
  rapidjson::Document d;
  d.Parse(s.extra.text.empty() ? "{}" : s.extra.text.c_str());
  if (d.HasParseError() || !d.IsObject() || !d.HasMember("uncountedTerminatedPods")) return u;
  const auto& v = d["uncountedTerminatedPods"];
  for (auto [name, set] : {std::pair{"succeeded", &u.succeeded}, std::pair{"failed", &u.failed}}) {
    if (!v.IsObject() || !v.HasMember(name) || !v[name].IsArray()) continue;
    for (const auto& uid : v[name].GetArray()) {
      if (uid.IsString()) set->insert(uid.GetString());
    }
  }
  return u;
}

void write_uncounted(api::JobStatus& s, const Uncounted& u) {
  rapidjson::Document d;
  d.Parse(s.extra.text.empty() ? "{}" : s.extra.text.c_str());
  if (d.HasParseError() || !d.IsObject()) d.SetObject();
  auto& a = d.GetAllocator();
  if (d.HasMember("uncountedTerminatedPods")) d.RemoveMember("uncountedTerminatedPods");
  rapidjson::Value v(rapidjson::kObjectType);
  for (auto [name, set] : {std::pair{"succeeded", &u.succeeded}, std::pair{"failed", &u.failed}}) {
    if (set->empty()) continue;
    rapidjson::Value arr(rapidjson::kArrayType);
    for (const auto& uid : *set) arr.PushBack(rapidjson::Value(uid.c_str(), a), a);
    v.AddMember(rapidjson::StringRef(name), arr, a);
  }
  d.AddMember("uncountedTerminatedPods", v, a);
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer> w(b);
  d.Accept(w);
  s.extra.text = b.GetString();
}

}  // namespace

// The state of one sync_job call.
struct JobController::Sync {
  std::string key;
  api::Job job;                  // status updated as the sync goes
  std::vector<api::Pod> pods;    // the Job's pods (controlling ownerReference)
  std::string now;               // RFC 3339
  int64_t now_unix = 0;
  bool indexed = false;
  std::optional<int> completions;
  int parallelism = 1;
  bool per_index = false;
  std::optional<std::chrono::milliseconds> requeue;
  std::string fail_job_message;  // a FailJob rule matched
  // Pods created and not yet seen, read before `pods` was listed (see sync_job).
  std::set<std::string> expected;
  void requeue_after(std::chrono::milliseconds d) {
    d = std::max(d, std::chrono::milliseconds(1));
    if (!requeue || d < *requeue) requeue = d;
  }
};

JobController::JobController(client::RestClient& rest, JobControllerOptions options)
    : QueueController(rest, {"job-controller", "job", options.workers, options.informers, options.logger},
                      [this](const std::string& key) { return sync_job(key).status(); }),
      options_(std::move(options)),
      jobs_(informers_->jobs()),
      pods_(informers_->pods()) {
  if (!options_.clock) options_.clock = common::real_clock();
  jobs_.add_handler([this](client::EventType, const api::Job*, const api::Job& job) { workers_.queue().add(key_of(job.metadata)); });
  pods_.add_handler([this](client::EventType, const api::Pod*, const api::Pod& pod) { on_pod(pod); });
}

void JobController::on_pod(const api::Pod& pod) {
  for (const auto& r : pod.metadata.ownerReferences) {
    if (r.kind != "Job" || r.apiVersion != "batch/v1" || !r.controller.value_or(false)) continue;
    std::string key = pod.metadata.namespace_ + "/" + r.name;
    {
      std::lock_guard<std::mutex> l(mu_);
      auto it = expected_.find(key);
      if (it != expected_.end()) it->second.erase(pod.metadata.name);
    }
    workers_.queue().add(key);
  }
}

void JobController::event(const api::Job& job, const char* type, const char* reason, const std::string& message) {
  client::ObjectReference ref{"batch/v1", "Job", job.metadata.namespace_, job.metadata.name, job.metadata.uid, "", ""};
  events_.record(ref, type, reason, "", message);
}

std::vector<api::Pod> JobController::pods_of(const api::Job& job) {
  std::vector<api::Pod> out;
  for (auto& p : pods_.list()) {
    if (p.metadata.namespace_ != job.metadata.namespace_) continue;
    bool owned = std::any_of(p.metadata.ownerReferences.begin(), p.metadata.ownerReferences.end(), [&](const auto& r) {
      return r.uid == job.metadata.uid && r.controller.value_or(false);
    });
    if (owned && (!job.spec.selector || api::selector_matches(*job.spec.selector, p.metadata.labels))) out.push_back(std::move(p));
  }
  return out;
}

Result<void> JobController::write_status(Sync& s) {
  const client::Path path = kJobs.ns(s.job.metadata.namespace_).name(s.job.metadata.name).sub("status");
  ASSIGN_OR_RETURN(std::string body, rest_.put(path, api::to_json(api::Object(s.job))));
  ASSIGN_OR_RETURN(api::Job written, api::decode_as<api::Job>(body));
  s.job = written;
  std::lock_guard<std::mutex> l(mu_);
  written_[s.key] = std::move(written);
  return {};
}

// Drops the job-tracking finalizer (read-modify-write; a pod already gone is fine).
Result<void> JobController::release_pod(const api::Pod& cached) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (released_uids_.contains(cached.metadata.uid)) return {};
  }
  const client::Path path = kPods.ns(cached.metadata.namespace_).name(cached.metadata.name);
  api::Pod pod = cached;
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (pod.metadata.uid != cached.metadata.uid || !has_finalizer(pod)) break;
    auto& f = pod.metadata.finalizers;
    f.erase(std::remove(f.begin(), f.end(), kJobTrackingFinalizer), f.end());
    auto out = rest_.put(path, api::to_json(api::Object(pod)));
    if (out.has_value() || out.error().code() == Code::kNotFound) break;
    if (out.error().code() != Code::kConflict) return out.error();
    ASSIGN_OR_RETURN(auto fresh, client::get_optional<api::Pod>(rest_, path));
    if (!fresh) break;
    pod = std::move(*fresh);
  }
  std::lock_guard<std::mutex> l(mu_);
  released_uids_.add(cached.metadata.uid);
  return {};
}

Result<void> JobController::delete_pod(Sync& s, const api::Pod& pod) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (deleted_uids_.contains(pod.metadata.uid)) return {};
    deleted_uids_.add(pod.metadata.uid);
  }
  std::string opts = "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"preconditions\":{\"uid\":\"" +
                     pod.metadata.uid + "\"}}";
  ASSIGN_OR_RETURN(client::Response r,
                   rest_.request("DELETE", kPods.ns(pod.metadata.namespace_).name(pod.metadata.name).str(), opts));
  if (r.status >= 300 && r.status != 404 && r.status != 409) return client::status_from_response(r);
  event(s.job, "Normal", "SuccessfulDelete", "Deleted pod: " + pod.metadata.name);
  return {};
}

Result<void> JobController::create_pod(Sync& s, std::optional<int> index, int index_failures) {
  api::Pod pod = pod_from_job(s.job, index, index_failures);
  auto body = rest_.post(kPods.ns(s.job.metadata.namespace_).str(), api::to_json(api::Object(pod)));
  if (!body.has_value()) {
    event(s.job, "Warning", "FailedCreate", "Error creating: " + body.error().message());
    return body.error();
  }
  ASSIGN_OR_RETURN(api::Pod created, api::decode_as<api::Pod>(*body));
  {
    std::lock_guard<std::mutex> l(mu_);
    expected_[s.key][created.metadata.name] = options_.clock->now();
  }
  event(s.job, "Normal", "SuccessfulCreate", "Created pod: " + created.metadata.name);
  return {};
}

// Finished pods are counted in three persisted steps: their UIDs go to
// status.uncountedTerminatedPods, their finalizers are removed, then the
// counts (and completed/failed indexes) take them in.
Result<void> JobController::count_finished(Sync& s) {
  api::JobStatus& st = s.job.status;
  Uncounted unc = read_uncounted(st);
  std::set<int> completed = parse_indexes(st.completedIndexes, s.completions.value_or(0));
  std::set<int> failed_idx = parse_indexes(st.failedIndexes.value_or(""), s.completions.value_or(0));
  std::vector<const api::Pod*> release;
  bool added = false;
  int new_failures = 0, new_successes = 0;
  for (const auto& p : s.pods) {
    if (!has_finalizer(p) || unc.succeeded.count(p.metadata.uid) || unc.failed.count(p.metadata.uid)) continue;
    bool ours;
    {
      std::lock_guard<std::mutex> l(mu_);
      ours = deleted_uids_.contains(p.metadata.uid);
      if (released_uids_.contains(p.metadata.uid)) continue;
    }
    if (p.status.phase == "Succeeded") {
      unc.succeeded.insert(p.metadata.uid);
      ++new_successes;
      added = true;
    } else if (p.status.phase == "Failed" || !p.metadata.deletionTimestamp.empty()) {
      // Pods this controller deleted (suspend, excess, a finished Job) are not failures.
      if (ours) {
        release.push_back(&p);
        continue;
      }
      FailureVerdict v;
      if (p.status.phase == "Failed") v = match_pod_failure_policy(s.job, p);
      if (v.action == FailureAction::kIgnore) {
        release.push_back(&p);
        continue;
      }
      if (v.action == FailureAction::kFailJob && s.fail_job_message.empty()) s.fail_job_message = v.message;
      auto idx = completion_index(p);
      if (s.per_index && idx && *idx < s.completions.value_or(0) &&
          (v.action == FailureAction::kFailIndex || index_failure_count(p) + 1 > *s.job.spec.backoffLimitPerIndex)) {
        failed_idx.insert(*idx);
      }
      unc.failed.insert(p.metadata.uid);
      ++new_failures;
      added = true;
    }
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    Backoff& b = backoff_[s.key];
    if (new_successes > 0) b.failures = 0;
    if (new_failures > 0) {
      b.failures += new_failures;
      b.last_failure = options_.clock->now();
    }
  }
  if (added) {
    write_uncounted(st, unc);
    if (s.per_index) st.failedIndexes = format_indexes(failed_idx);
    RETURN_IF_ERROR(write_status(s));
  }
  for (const api::Pod* p : release) RETURN_IF_ERROR(release_pod(*p));
  if (unc.empty()) return {};
  std::map<std::string, const api::Pod*> by_uid;
  for (const auto& p : s.pods) by_uid[p.metadata.uid] = &p;
  for (const auto& uid : unc.succeeded) {
    auto it = by_uid.find(uid);
    if (it == by_uid.end()) continue;
    RETURN_IF_ERROR(release_pod(*it->second));
    auto idx = completion_index(*it->second);
    if (s.indexed && idx && *idx < s.completions.value_or(0)) {
      if (completed.insert(*idx).second) ++st.succeeded;
    } else if (!s.indexed) {
      ++st.succeeded;
    }
  }
  for (const auto& uid : unc.failed) {
    auto it = by_uid.find(uid);
    if (it != by_uid.end()) RETURN_IF_ERROR(release_pod(*it->second));
    ++st.failed;
  }
  if (s.indexed) st.completedIndexes = format_indexes(completed);
  write_uncounted(st, Uncounted{});
  return write_status(s);
}

// Sets FailureTarget or SuccessCriteriaMet when the Job has just reached an end.
void JobController::decide_terminal(Sync& s) {
  api::JobStatus& st = s.job.status;
  if (condition_true(st, "FailureTarget") || condition_true(st, "SuccessCriteriaMet")) return;
  std::string reason, message;
  std::set<int> failed_idx = parse_indexes(st.failedIndexes.value_or(""), s.completions.value_or(0));
  std::set<int> completed = parse_indexes(st.completedIndexes, s.completions.value_or(0));
  auto max_failed = job_spec_extra_int(s.job, "maxFailedIndexes");
  if (!s.fail_job_message.empty()) {
    reason = "PodFailurePolicy";
    message = s.fail_job_message;
  } else if (!s.per_index && st.failed > s.job.spec.backoffLimit.value_or(6)) {
    reason = "BackoffLimitExceeded";
    message = "Job has reached the specified backoff limit";
  } else if (s.per_index && max_failed && static_cast<int64_t>(failed_idx.size()) > *max_failed) {
    reason = "MaxFailedIndexesExceeded";
    message = "Job has exceeded the specified maximum number of failed indexes";
  } else if (s.job.spec.activeDeadlineSeconds && !st.startTime.empty() && !s.job.spec.suspend.value_or(false)) {
    auto start = common::parse_rfc3339(st.startTime);
    int64_t left = start ? *start + *s.job.spec.activeDeadlineSeconds - s.now_unix : 0;
    if (left <= 0) {
      reason = "DeadlineExceeded";
      message = "Job was active longer than specified deadline";
    } else {
      s.requeue_after(std::chrono::seconds(left));
    }
  }
  if (reason.empty() && s.per_index && !failed_idx.empty() &&
      static_cast<int>(failed_idx.size() + completed.size()) >= s.completions.value_or(0)) {
    reason = "FailedIndexes";
    message = "Job has failed indexes";
  }
  if (!reason.empty()) {
    set_condition(st, "FailureTarget", "True", reason, message, s.now);
    event(s.job, "Warning", reason.c_str(), message);
    return;
  }
  bool done;
  if (s.indexed) {
    done = static_cast<int>(completed.size()) >= s.completions.value_or(0);
  } else if (s.completions) {
    done = st.succeeded >= *s.completions;
  } else {
    done = st.succeeded > 0 &&
           std::none_of(s.pods.begin(), s.pods.end(), [](const api::Pod& p) { return active(p); });
  }
  if (done) set_condition(st, "SuccessCriteriaMet", "True", "CompletionsReached", "Reached expected number of succeeded pods", s.now);
}

// The Job has reached its end: its remaining pods go; once none is left with
// the finalizer, the final condition (Complete or Failed) is added.
Result<void> JobController::finish(Sync& s) {
  api::JobStatus& st = s.job.status;
  int left = 0;
  for (const auto& p : s.pods) {
    if (active(p)) RETURN_IF_ERROR(delete_pod(s, p));
    if (has_finalizer(p)) RETURN_IF_ERROR(release_pod(p));
    if (!terminal(p)) ++left;
  }
  st.active = 0;
  st.ready = 0;
  st.terminating = left;
  const bool success = condition_true(st, "SuccessCriteriaMet");
  const api::PodCondition* target = condition(st, success ? "SuccessCriteriaMet" : "FailureTarget");
  set_condition(st, success ? "Complete" : "Failed", "True", target->reason, target->message, s.now);
  if (success) {
    st.completionTime = s.now;
    event(s.job, "Normal", "Completed", "Job completed");
  }
  return write_status(s);
}

bool JobController::awaiting_created_pods(Sync& s) {
  // Pods created but not in the cache yet: wait for them (or a timeout).
  std::lock_guard<std::mutex> l(mu_);
  auto& exp = expected_[s.key];
  for (const auto& p : s.pods) {  // also pods that already finished
    exp.erase(p.metadata.name);
    s.expected.erase(p.metadata.name);
  }
  if (s.expected.empty()) return false;
  s.requeue_after(std::chrono::seconds(1));
  return true;
}

namespace {

api::GangSchedulingPolicy* gang_of(api::Workload& w) {
  return w.spec.podGroupTemplates.empty() ? nullptr : w.spec.podGroupTemplates[0].schedulingPolicy.gang ? &*w.spec.podGroupTemplates[0].schedulingPolicy.gang : nullptr;
}
api::GangSchedulingPolicy* gang_of(api::PodGroup& g) {
  return g.spec.schedulingPolicy.gang ? &*g.spec.schedulingPolicy.gang : nullptr;
}

// Creates the Job's Workload or PodGroup, or checks the one of that name: it
// must be controlled by this Job (a Job recreated under the same name while the
// garbage collector removes the old one's, or a user's object, is not adopted),
// and its gang.minCount, the one mutable member of the policy, follows the Job's.
template <typename T>
Result<void> create_or_sync(client::RestClient& rest, const client::ResourcePath& kind, T want, const std::string& job_uid) {
  const std::string& ns = want.metadata.namespace_;
  auto created = rest.post(kind.ns(ns).str(), api::to_json(api::Object(want)));
  if (created.has_value()) return {};
  if (created.error().code() != Code::kAlreadyExists && created.error().code() != Code::kConflict) return created.error();
  const client::Path path = kind.ns(ns).name(want.metadata.name);
  const std::string what = want.typeMeta.kind + " " + ns + "/" + want.metadata.name;
  ASSIGN_OR_RETURN(std::string body, rest.get(path));
  ASSIGN_OR_RETURN(T have, api::decode_as<T>(body));
  auto ref = controller_of(have.metadata);
  if (!ref || ref->uid != job_uid) return Status(Code::kAlreadyExists, what + " exists and is not controlled by this Job");
  if (!have.metadata.deletionTimestamp.empty()) return Status(Code::kUnavailable, what + " is being deleted");
  api::GangSchedulingPolicy* have_gang = gang_of(have);
  const api::GangSchedulingPolicy* want_gang = gang_of(want);
  if (have_gang == nullptr || want_gang == nullptr || have_gang->minCount == want_gang->minCount) return {};
  have_gang->minCount = want_gang->minCount;
  have.typeMeta = want.typeMeta;
  auto updated = rest.put(path, api::to_json(api::Object(have)));
  if (!updated.has_value()) return updated.error();
  return {};
}

}  // namespace

Result<void> JobController::ensure_pod_group(Sync& s) {
  if (!s.job.spec.scheduling) return {};
  const auto& sp = s.job.spec.scheduling->schedulingPolicy;
  // A gang without minCount takes parallelism: a paused Job (parallelism 0)
  // gets its objects when it is resumed (a gang of 0 is invalid).
  if (sp && sp->gang && !sp->gang->minCount && s.job.spec.parallelism.value_or(1) < 1) return {};
  api::PodGroup group = pod_group_for_job(s.job);
  const int32_t min_count = group.spec.schedulingPolicy.gang ? group.spec.schedulingPolicy.gang->minCount : 0;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = grouped_.find(s.job.metadata.uid);
    if (it != grouped_.end() && it->second == min_count) return {};
  }
  // Workload, then PodGroup, then pods (KEP-5547's order): the scheduler
  // holds a pod whose PodGroup is missing.
  Result<void> r = create_or_sync(rest_, kWorkloads, workload_for_job(s.job), s.job.metadata.uid);
  if (r.has_value()) r = create_or_sync(rest_, kPodGroups, std::move(group), s.job.metadata.uid);
  if (!r.has_value()) {
    event(s.job, "Warning", "FailedCreate", "Error creating the Job's scheduling objects: " + r.error().message());
    return r.error();
  }
  std::lock_guard<std::mutex> l(mu_);
  if (grouped_.size() >= kUidMemo) grouped_.clear();
  grouped_[s.job.metadata.uid] = min_count;
  return {};
}

Result<void> JobController::manage_pods(Sync& s) {
  RETURN_IF_ERROR(ensure_pod_group(s));
  api::JobStatus& st = s.job.status;
  std::vector<const api::Pod*> running;
  for (const auto& p : s.pods) {
    if (active(p)) running.push_back(&p);
  }
  if (awaiting_created_pods(s)) return {};
  std::chrono::milliseconds wait{0};
  {
    std::lock_guard<std::mutex> l(mu_);
    const Backoff& b = backoff_[s.key];
    auto delay = pod_failure_backoff(b.failures, options_.pod_failure_backoff, options_.max_pod_failure_backoff);
    auto since = std::chrono::duration_cast<std::chrono::milliseconds>(options_.clock->now() - b.last_failure);
    if (b.failures > 0 && since < delay) wait = delay - since;
  }
  if (!s.indexed) {
    int want = s.parallelism;
    if (s.completions) want = std::min(want, std::max(0, *s.completions - st.succeeded));
    if (!s.completions && st.succeeded > 0) want = std::min<int>(want, static_cast<int>(running.size()));
    for (int i = want; i < static_cast<int>(running.size()); ++i) RETURN_IF_ERROR(delete_pod(s, *running[running.size() - 1 - (i - want)]));
    int create = want - static_cast<int>(running.size());
    if (create > 0 && wait.count() > 0) {
      s.requeue_after(wait);
      return {};
    }
    for (int i = 0; i < create; ++i) RETURN_IF_ERROR(create_pod(s, std::nullopt, 0));
    return {};
  }
  const int completions = s.completions.value_or(0);
  std::set<int> done = parse_indexes(st.completedIndexes, completions);
  std::set<int> failed = parse_indexes(st.failedIndexes.value_or(""), completions);
  std::map<int, const api::Pod*> by_index;
  int keep = 0;
  for (const auto* p : running) {
    auto idx = completion_index(*p);
    bool valid = idx && *idx < completions && !done.count(*idx) && !failed.count(*idx) && !by_index.count(*idx);
    if (!valid) {
      RETURN_IF_ERROR(delete_pod(s, *p));
      continue;
    }
    by_index[*idx] = p;
    ++keep;
  }
  // The failures of an index so far: the most recorded on its finished pods.
  std::map<int, int> index_failures;
  for (const auto& p : s.pods) {
    auto idx = completion_index(p);
    if (!idx || p.status.phase != "Failed") continue;
    index_failures[*idx] = std::max(index_failures[*idx], index_failure_count(p) + 1);
  }
  int room = s.parallelism - keep;
  for (int i = 0; i < completions && room > 0; ++i) {
    if (done.count(i) || failed.count(i) || by_index.count(i)) continue;
    if (wait.count() > 0) {
      s.requeue_after(wait);
      return {};
    }
    RETURN_IF_ERROR(create_pod(s, i, index_failures[i]));
    --room;
  }
  return {};
}

Result<void> JobController::sync_job(const std::string& key) {
  RETURN_IF_ERROR(caches_synced());
  auto cached = jobs_.get(key);
  if (!cached) {
    std::lock_guard<std::mutex> l(mu_);
    backoff_.erase(key);
    written_.erase(key);
    expected_.erase(key);
    return {};
  }
  Sync s;
  s.key = key;
  s.job = std::move(*cached);
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = written_.find(key);
    if (it != written_.end() && it->second.metadata.uid == s.job.metadata.uid &&
        rv_number(it->second.metadata.resourceVersion) > rv_number(s.job.metadata.resourceVersion)) {
      s.job.status = it->second.status;
      s.job.metadata.resourceVersion = it->second.metadata.resourceVersion;
    }
  }
  {
    // The expectations are read before the pods are listed, as upstream's
    // satisfiedExpectations: the pod handler drops one only after the cache holds
    // the pod, so a pod missing from the list below is still expected here. Read
    // after the list, a pod added meanwhile would be neither listed nor expected,
    // and a Job at its end would finish without deleting it.
    std::lock_guard<std::mutex> l(mu_);
    auto& exp = expected_[key];
    for (auto it = exp.begin(); it != exp.end();) {
      it = options_.clock->now() - it->second > kExpectationTimeout ? exp.erase(it) : std::next(it);
    }
    for (const auto& [name, at] : exp) s.expected.insert(name);
  }
  s.pods = pods_of(s.job);
  s.now = common::format_rfc3339(options_.clock->wall());
  s.now_unix = options_.clock->unix_seconds();
  s.indexed = s.job.spec.completionMode.value_or("NonIndexed") == "Indexed";
  s.completions = s.job.spec.completions;
  s.parallelism = s.job.spec.parallelism.value_or(1);
  s.per_index = s.indexed && s.job.spec.backoffLimitPerIndex.has_value();
  api::JobStatus& st = s.job.status;

  // A Job being deleted lets go of its pods (the garbage collector deletes them).
  const bool finished = condition_true(st, "Complete") || condition_true(st, "Failed");
  if (!s.job.metadata.deletionTimestamp.empty() || finished) {
    for (const auto& p : s.pods) {
      if (has_finalizer(p)) RETURN_IF_ERROR(release_pod(p));
    }
    if (!finished || !s.job.spec.ttlSecondsAfterFinished || !s.job.metadata.deletionTimestamp.empty()) return {};
    const api::PodCondition* c = condition(st, condition_true(st, "Complete") ? "Complete" : "Failed");
    auto at = common::parse_rfc3339(st.completionTime.empty() ? c->lastTransitionTime : st.completionTime);
    int64_t left = (at ? *at : s.now_unix) + *s.job.spec.ttlSecondsAfterFinished - s.now_unix;
    if (left > 0) {
      workers_.queue().add_after(key, std::chrono::seconds(left));
      return {};
    }
    std::string opts = "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"propagationPolicy\":\"Background\","
                       "\"preconditions\":{\"uid\":\"" + s.job.metadata.uid + "\"}}";
    ASSIGN_OR_RETURN(client::Response r, rest_.request("DELETE", kJobs.ns(s.job.metadata.namespace_).name(s.job.metadata.name).str(), opts));
    if (r.status >= 300 && r.status != 404 && r.status != 409) return client::status_from_response(r);
    return {};
  }

  RETURN_IF_ERROR(count_finished(s));
  const api::JobStatus before = st;
  const bool suspended = s.job.spec.suspend.value_or(false);
  if (!suspended && st.startTime.empty()) st.startTime = s.now;
  decide_terminal(s);
  if (condition_true(st, "FailureTarget") || condition_true(st, "SuccessCriteriaMet")) {
    bool left = std::any_of(s.pods.begin(), s.pods.end(), [](const api::Pod& p) { return !terminal(p); });
    // A pod created but not yet in the cache is left too: finishing without it
    // would release it later without ever deleting it.
    if (!left && !awaiting_created_pods(s)) return finish(s);
    for (const auto& p : s.pods) {
      if (active(p)) RETURN_IF_ERROR(delete_pod(s, p));
    }
  } else if (suspended) {
    for (const auto& p : s.pods) {
      if (active(p)) RETURN_IF_ERROR(delete_pod(s, p));
    }
    if (set_condition(st, "Suspended", "True", "JobSuspended", "Job suspended", s.now)) {
      event(s.job, "Normal", "Suspended", "Job suspended");
    }
  } else {
    if (condition_true(st, "Suspended")) {
      set_condition(st, "Suspended", "False", "JobResumed", "Job resumed", s.now);
      st.startTime = s.now;  // the deadline counts from the resumption
      event(s.job, "Normal", "Resumed", "Job resumed");
    }
    RETURN_IF_ERROR(manage_pods(s));
  }
  int n_active = 0, n_ready = 0, n_terminating = 0;
  for (const auto& p : s.pods) {
    bool deleted_by_us;
    {
      std::lock_guard<std::mutex> l(mu_);
      deleted_by_us = deleted_uids_.contains(p.metadata.uid);
    }
    if (active(p) && !deleted_by_us) {
      ++n_active;
      if (pod_ready(p)) ++n_ready;
    } else if (!terminal(p)) {
      ++n_terminating;
    }
  }
  st.active = n_active;
  st.ready = n_ready;
  st.terminating = n_terminating;
  if (st != before) RETURN_IF_ERROR(write_status(s));
  if (s.requeue) workers_.queue().add_after(key, *s.requeue);
  return {};
}

}  // namespace draplane::controllers
