#include "server/priority_admission.h"

#include "api/codec.h"
#include "api/validation.h"
#include "server/internal/priority_class_cache.h"

namespace draplane::server {
namespace {

}  // namespace

PriorityClassInfo priority_class_info(const JsonValue& o) {
  PriorityClassInfo pc;
  pc.name = get_string(o, {"metadata", "name"});
  const JsonValue* v = find(o, {"value"});
  if (v != nullptr && v->IsInt()) pc.value = v->GetInt();
  const JsonValue* gd = find(o, {"globalDefault"});
  pc.global_default = gd != nullptr && gd->IsBool() && gd->GetBool();
  pc.preemption_policy = get_string(o, {"preemptionPolicy"});
  return pc;
}

namespace {

std::string policy_of(const PriorityClassInfo& pc) {
  return pc.preemption_policy.empty() ? std::string(api::kPreemptLowerPriority) : pc.preemption_policy;
}

// getDefaultPriorityClass: the default class of lowest value.
const PriorityClassInfo* default_class(const std::vector<PriorityClassInfo>& classes) {
  const PriorityClassInfo* best = nullptr;
  for (const PriorityClassInfo& pc : classes) {
    if (pc.global_default && (best == nullptr || pc.value < best->value)) best = &pc;
  }
  return best;
}

}  // namespace

std::optional<std::string> admit_pod_priority(const std::vector<PriorityClassInfo>& classes, Json& pod) {
  auto& a = pod.GetAllocator();
  JsonValue& spec = ensure_object(pod, "spec", a);
  std::string class_name = get_string(spec, {"priorityClassName"});
  int32_t priority = 0;
  std::string policy = api::kPreemptLowerPriority;
  if (class_name.empty()) {
    if (const PriorityClassInfo* d = default_class(classes)) {
      class_name = d->name;
      priority = d->value;
      policy = policy_of(*d);
    }
  } else {
    const PriorityClassInfo* found = nullptr;
    for (const PriorityClassInfo& pc : classes) {
      if (pc.name == class_name) found = &pc;
    }
    if (found == nullptr) return "no PriorityClass with name " + class_name + " was found";
    priority = found->value;
    policy = policy_of(*found);
  }
  const JsonValue* given = find(spec, {"priority"});
  if (given != nullptr && !given->IsNull() && !(given->IsInt() && given->GetInt() == priority)) {
    return "the integer value of priority (" + to_string(*given) +
           ") must not be provided in pod spec; priority admission controller computed " + std::to_string(priority) +
           " from the given PriorityClass name";
  }
  const JsonValue* given_policy = find(spec, {"preemptionPolicy"});
  if (given_policy != nullptr && given_policy->IsString() && given_policy->GetString() != policy) {
    return "the string value of PreemptionPolicy (" + std::string(given_policy->GetString()) +
           ") must not be provided in pod spec; priority admission controller computed " + policy +
           " from the given PriorityClass name";
  }
  if (!class_name.empty()) set_string(spec, "priorityClassName", class_name, a);
  set_member(spec, "priority", JsonValue(priority), a);
  set_string(spec, "preemptionPolicy", policy, a);
  return std::nullopt;
}

std::optional<std::string> admit_priority_class(const std::vector<PriorityClassInfo>& classes, const JsonValue& pc,
                                                bool update) {
  PriorityClassInfo info = priority_class_info(pc);
  if (!info.global_default) return std::nullopt;
  const PriorityClassInfo* d = default_class(classes);
  if (d == nullptr || (update && d->name == info.name)) return std::nullopt;
  return "PriorityClass " + d->name + " is already marked as default. Only one default can exist";
}

Result<std::vector<PriorityClassInfo>> load_priority_classes(store::Store& store) {
  auto listed = store.list("/registry/priorityclasses/");
  if (!listed.has_value()) return listed.error();
  std::vector<PriorityClassInfo> out;
  for (const store::KeyValue& kv : listed->items) {
    auto o = parse_json(kv.value);
    if (o.has_value()) out.push_back(priority_class_info(*o));
  }
  return out;
}

std::optional<ApiError> admit_priority(store::Store& store, const PriorityClassCache* cache, const ResourceInfo& r,
                                       const std::string& name, Json& obj, bool update) {
  const bool pod = r.group.empty() && r.resource == "pods" && !update;
  const bool pc = r.group == "scheduling.k8s.io" && r.resource == "priorityclasses";
  if (!pod && !pc) return std::nullopt;
  if (pod && cache != nullptr) {
    if (auto cached = cache->classes()) {
      const std::string named = get_string(obj, {"spec", "priorityClassName"});
      bool known = named.empty();
      for (const PriorityClassInfo& c : *cached) known = known || c.name == named;
      if (known) {
        std::optional<std::string> why = admit_pod_priority(*cached, obj);
        if (why) return forbidden(r, name, *why);
        return std::nullopt;
      }
    }
  }
  auto classes = load_priority_classes(store);
  if (!classes.has_value()) return from_code(classes.error().code(), classes.error().message());
  std::optional<std::string> why = pod ? admit_pod_priority(*classes, obj) : admit_priority_class(*classes, obj, update);
  if (why) return forbidden(r, name, *why);
  return std::nullopt;
}

Status create_system_priority_classes(store::Store& store, const std::function<std::string()>& new_uid,
                                      const std::string& now) {
  for (api::PriorityClass pc : api::system_priority_classes()) {
    std::string key = "/registry/priorityclasses/" + pc.metadata.name;
    if (store.get(key).has_value()) continue;
    pc.metadata.uid = new_uid();
    pc.metadata.creationTimestamp = now;
    pc.metadata.generation = 1;
    auto created = store.create(key, api::to_json(api::Object(pc)));
    if (!created.has_value() && created.error().code() != Code::kAlreadyExists) return created.error();
  }
  return Status();
}

}  // namespace draplane::server
