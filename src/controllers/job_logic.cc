#include "controllers/job_logic.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <charconv>

#include "common/parse_int.h"
#include "common/split.h"

namespace draplane::controllers {
namespace {

// A non-negative int (an index), or no value.
std::optional<int> parse_int(std::string_view s) {
  auto v = common::parse_int64(s);
  if (!v || *v < 0 || *v > INT32_MAX) return std::nullopt;
  return static_cast<int>(*v);
}

rapidjson::Document parse_object(const api::RawJson& raw) {
  rapidjson::Document d;
  d.Parse(raw.text.empty() ? "{}" : raw.text.c_str());
  if (d.HasParseError() || !d.IsObject()) d.SetObject();
  return d;
}

std::string write(const rapidjson::Value& v) {
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer> w(b);
  v.Accept(w);
  return b.GetString();
}

std::string string_member(const rapidjson::Value& v, const char* name) {
  if (!v.IsObject()) return "";
  auto it = v.FindMember(name);
  return it != v.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}

// Sets spec.hostname unless the template has one.
void default_hostname(api::PodSpec& spec, const std::string& hostname) {
  rapidjson::Document d = parse_object(spec.extra);
  if (!string_member(d, "hostname").empty()) return;
  if (d.HasMember("hostname")) d.RemoveMember("hostname");
  d.AddMember("hostname", rapidjson::Value(hostname.c_str(), d.GetAllocator()), d.GetAllocator());
  spec.extra.text = write(d);
}

void add_index_env(std::vector<api::Container>& containers) {
  for (auto& c : containers) {
    bool has = std::any_of(c.env.begin(), c.env.end(), [](const api::EnvVar& e) { return e.name == "JOB_COMPLETION_INDEX"; });
    if (has) continue;
    api::EnvVar e;
    e.name = "JOB_COMPLETION_INDEX";
    e.valueFrom.text = std::string(R"({"fieldRef":{"fieldPath":"metadata.annotations['batch.kubernetes.io/job-completion-index']"}})");
    c.env.push_back(std::move(e));
  }
}

// The terminated exit codes of the pod's containers (and init containers), by name.
std::vector<std::pair<std::string, int>> terminated_exit_codes(const api::Pod& pod) {
  std::vector<std::pair<std::string, int>> out;
  for (const std::string* text : {&pod.status.containerStatuses.text}) {
    rapidjson::Document d;
    d.Parse(text->empty() ? "[]" : text->c_str());
    if (d.HasParseError() || !d.IsArray()) continue;
    for (const auto& s : d.GetArray()) {
      if (!s.IsObject() || !s.HasMember("state") || !s["state"].IsObject()) continue;
      const auto& st = s["state"];
      if (!st.HasMember("terminated") || !st["terminated"].IsObject()) continue;
      const auto& t = st["terminated"];
      if (!t.HasMember("exitCode") || !t["exitCode"].IsInt()) continue;
      out.emplace_back(string_member(s, "name"), t["exitCode"].GetInt());
    }
  }
  return out;
}

FailureAction action_of(const std::string& a) {
  if (a == "FailJob") return FailureAction::kFailJob;
  if (a == "Ignore") return FailureAction::kIgnore;
  if (a == "FailIndex") return FailureAction::kFailIndex;
  return FailureAction::kCount;
}

// "Container c for pod ns/p failed with exit code 42", or "" when the rule's
// onExitCodes requirement does not match.
std::string exit_code_match(const rapidjson::Value& req, const api::Pod& pod) {
  std::string container = string_member(req, "containerName");
  std::string op = string_member(req, "operator");
  std::set<int> values;
  if (req.HasMember("values") && req["values"].IsArray()) {
    for (const auto& v : req["values"].GetArray()) {
      if (v.IsInt()) values.insert(v.GetInt());
    }
  }
  for (const auto& [name, code] : terminated_exit_codes(pod)) {
    if (code == 0 || (!container.empty() && name != container)) continue;
    bool in = values.count(code) > 0;
    if ((op == "In" && in) || (op == "NotIn" && !in)) {
      return "Container " + name + " for pod " + pod.metadata.namespace_ + "/" + pod.metadata.name +
             " failed with exit code " + std::to_string(code);
    }
  }
  return "";
}

std::string condition_match(const rapidjson::Value& patterns, const api::Pod& pod) {
  if (!patterns.IsArray()) return "";
  for (const auto& p : patterns.GetArray()) {
    std::string type = string_member(p, "type");
    std::string status = string_member(p, "status");
    if (status.empty()) status = "True";
    for (const auto& c : pod.status.conditions) {
      if (c.type == type && c.status == status) {
        return "Pod " + pod.metadata.namespace_ + "/" + pod.metadata.name + " has condition " + type;
      }
    }
  }
  return "";
}

}  // namespace

std::set<int> parse_indexes(const std::string& text, int limit) {
  std::set<int> out;
  for (const auto& part : common::split(text, ',')) {
    size_t dash = part.find('-');
    auto first = parse_int(std::string_view(part).substr(0, dash));
    auto last = dash == std::string::npos ? first : parse_int(std::string_view(part).substr(dash + 1));
    if (!first || !last) continue;
    for (int i = *first; i <= *last && i < limit; ++i) out.insert(i);
  }
  return out;
}

std::string format_indexes(const std::set<int>& indexes) {
  std::string out;
  for (auto it = indexes.begin(); it != indexes.end();) {
    int first = *it, last = *it;
    for (++it; it != indexes.end() && *it == last + 1; ++it) last = *it;
    out += (out.empty() ? "" : ",") + std::to_string(first) + (last > first ? "-" + std::to_string(last) : "");
  }
  return out;
}

std::optional<int> completion_index(const api::Pod& pod) {
  auto it = pod.metadata.annotations.find(kJobCompletionIndex);
  if (it != pod.metadata.annotations.end()) return parse_int(it->second);
  it = pod.metadata.labels.find(kJobCompletionIndex);
  if (it != pod.metadata.labels.end()) return parse_int(it->second);
  return std::nullopt;
}

int index_failure_count(const api::Pod& pod) {
  auto it = pod.metadata.annotations.find(kJobIndexFailureCount);
  if (it == pod.metadata.annotations.end()) return 0;
  return parse_int(it->second).value_or(0);
}

api::Pod pod_from_job(const api::Job& job, std::optional<int> index, int index_failures) {
  api::Pod pod;
  pod.typeMeta = {"v1", "Pod"};
  const api::PodTemplateSpec& t = job.spec.template_;
  pod.metadata.labels = t.metadata.labels;
  pod.metadata.annotations = t.metadata.annotations;
  pod.metadata.finalizers = t.metadata.finalizers;
  pod.metadata.namespace_ = job.metadata.namespace_;
  pod.spec = t.spec;
  pod.metadata.labels[kJobControllerUid] = job.metadata.uid;
  pod.metadata.labels[kJobName] = job.metadata.name;
  pod.metadata.labels["controller-uid"] = job.metadata.uid;
  pod.metadata.labels["job-name"] = job.metadata.name;
  pod.metadata.generateName = job.metadata.name + "-";
  if (index) {
    const std::string i = std::to_string(*index);
    pod.metadata.generateName = job.metadata.name + "-" + i + "-";
    pod.metadata.annotations[kJobCompletionIndex] = i;
    pod.metadata.labels[kJobCompletionIndex] = i;
    if (job.spec.backoffLimitPerIndex) pod.metadata.annotations[kJobIndexFailureCount] = std::to_string(index_failures);
    add_index_env(pod.spec.initContainers);
    add_index_env(pod.spec.containers);
    default_hostname(pod.spec, job.metadata.name + "-" + i);
  }
  for (const char* a : {kGangAnnotation, kGangMinMemberAnnotation}) {
    auto it = job.metadata.annotations.find(a);
    if (it != job.metadata.annotations.end() && !pod.metadata.annotations.count(a)) pod.metadata.annotations[a] = it->second;
  }
  if (std::find(pod.metadata.finalizers.begin(), pod.metadata.finalizers.end(), kJobTrackingFinalizer) ==
      pod.metadata.finalizers.end()) {
    pod.metadata.finalizers.push_back(kJobTrackingFinalizer);
  }
  api::OwnerReference ref{"batch/v1", "Job", job.metadata.name, job.metadata.uid, true, true};
  pod.metadata.ownerReferences = {ref};
  if (job.spec.scheduling) pod.spec.schedulingGroup = api::PodSchedulingGroup{job.metadata.name};
  return pod;
}

namespace {

api::PodGroupSchedulingPolicy job_policy(const api::Job& job) {
  api::PodGroupSchedulingPolicy p;
  const auto& sp = job.spec.scheduling ? job.spec.scheduling->schedulingPolicy : std::nullopt;
  if (sp && sp->gang) {
    p.gang = api::GangSchedulingPolicy{sp->gang->minCount.value_or(job.spec.parallelism.value_or(1))};
  } else {
    p.basic = api::BasicSchedulingPolicy{};
  }
  return p;
}

// Namespace, name and the Job as controlling owner (deleted with it).
api::ObjectMeta owned_by_job(const api::Job& job) {
  api::ObjectMeta m;
  m.name = job.metadata.name;
  m.namespace_ = job.metadata.namespace_;
  m.ownerReferences = {api::OwnerReference{"batch/v1", "Job", job.metadata.name, job.metadata.uid, true, true}};
  return m;
}

}  // namespace

api::Workload workload_for_job(const api::Job& job) {
  api::Workload w;
  w.typeMeta = {"scheduling.k8s.io/v1beta1", "Workload"};
  w.metadata = owned_by_job(job);
  w.spec.controllerRef = api::TypedLocalObjectReference{"batch", "Job", job.metadata.name};
  api::PodGroupTemplate t;
  t.name = kJobPodGroupTemplate;
  t.schedulingPolicy = job_policy(job);
  if (job.spec.scheduling) {
    t.disruptionMode = job.spec.scheduling->disruptionMode;
    t.resourceClaims = job.spec.scheduling->resourceClaims;
  }
  w.spec.podGroupTemplates.push_back(std::move(t));
  return w;
}

api::PodGroup pod_group_for_job(const api::Job& job) {
  api::PodGroup g;
  g.typeMeta = {"scheduling.k8s.io/v1beta1", "PodGroup"};
  g.metadata = owned_by_job(job);
  g.spec.workloadRef = api::WorkloadReference{job.metadata.name, kJobPodGroupTemplate};
  g.spec.schedulingPolicy = job_policy(job);
  if (job.spec.scheduling) {
    g.spec.disruptionMode = job.spec.scheduling->disruptionMode;
    g.spec.resourceClaims = job.spec.scheduling->resourceClaims;
  }
  return g;
}

FailureVerdict match_pod_failure_policy(const api::Job& job, const api::Pod& pod) {
  rapidjson::Document d = parse_object(job.spec.podFailurePolicy);
  if (!d.HasMember("rules") || !d["rules"].IsArray()) return {};
  int i = 0;
  for (const auto& rule : d["rules"].GetArray()) {
    std::string what;
    if (rule.IsObject() && rule.HasMember("onExitCodes") && rule["onExitCodes"].IsObject()) {
      what = exit_code_match(rule["onExitCodes"], pod);
    } else if (rule.IsObject() && rule.HasMember("onPodConditions")) {
      what = condition_match(rule["onPodConditions"], pod);
    }
    if (!what.empty()) {
      std::string action = string_member(rule, "action");
      return {action_of(action), what + " matching " + action + " rule at index " + std::to_string(i)};
    }
    ++i;
  }
  return {};
}

std::chrono::milliseconds pod_failure_backoff(int failures, std::chrono::milliseconds base,
                                              std::chrono::milliseconds cap) {
  if (failures <= 0) return std::chrono::milliseconds(0);
  auto d = base;
  for (int i = 1; i < failures && d < cap; ++i) d *= 2;
  return std::min(d, cap);
}

std::optional<int64_t> job_spec_extra_int(const api::Job& job, const char* name) {
  rapidjson::Document d = parse_object(job.spec.extra);
  auto it = d.FindMember(name);
  if (it == d.MemberEnd() || !it->value.IsInt64()) return std::nullopt;
  return it->value.GetInt64();
}

}  // namespace draplane::controllers
