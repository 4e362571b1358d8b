// apps/v1 Deployment, ReplicaSet, StatefulSet, DaemonSet and batch/v1 Job: typed
// (but StatefulSet and DaemonSet, stored untyped) (api/types.h), status
// through /status only (reset on create, as upstream's PrepareForCreate), the
// Job's generated selector, and kubectl's columns (upstream
// pkg/printers/internalversion). Their controllers are not part of the server.
#include "common/rfc3339.h"
#include "server/internal/api_impl.h"
#include "server/pod_set_validation.h"
#include "server/strategies.h"
#include "server/typed_strategy.h"

namespace draplane::server {
namespace {

int64_t get_int(const JsonValue& o, std::initializer_list<std::string_view> path, int64_t fallback = 0) {
  const JsonValue* v = find(o, path);
  return v != nullptr && v->IsInt64() ? v->GetInt64() : fallback;
}

// "a,b" of the template's containers' names or images (the wide columns).
std::string containers(const JsonValue& o, const char* member) {
  std::string out;
  const JsonValue* list = find(o, {"spec", "template", "spec", "containers"});
  if (list == nullptr || !list->IsArray()) return out;
  for (const JsonValue& c : list->GetArray()) out += (out.empty() ? "" : ",") + get_string(c, {member});
  return out;
}

// A kind whose status is written only through /status: dropped on create.
class WorkloadStrategy : public TypedStrategy {
 public:
  std::optional<ApiError> prepare_for_create(const StrategyContext& c, Json& obj,
                                             std::vector<std::string>& late_warnings) const override {
    remove_member(obj, "status");
    return std::nullopt;
  }
  std::vector<std::string> categories() const override { return {"all"}; }
};

class DeploymentStrategy final : public WorkloadStrategy {
 public:
  std::vector<TableColumn> table_columns() const override {
    return {{"Name", "string", 0, "name"}, {"Ready", "string", 0},      {"Up-to-date", "integer", 0},
            {"Available", "integer", 0},   {"Age", "string", 0},        {"Containers", "string", 1},
            {"Images", "string", 1},       {"Selector", "string", 1}};
  }
  std::vector<TableCell> table_cells(const JsonValue& o, int64_t now) const override {
    std::string ready = std::to_string(get_int(o, {"status", "readyReplicas"})) + "/" +
                        std::to_string(get_int(o, {"spec", "replicas"}));
    return {get_string(o, {"metadata", "name"}), ready, get_int(o, {"status", "updatedReplicas"}),
            get_int(o, {"status", "availableReplicas"}), table_age(o, now), containers(o, "name"),
            containers(o, "image"), or_none(label_selector_text(o))};
  }
};

class ReplicaSetStrategy final : public WorkloadStrategy {
 public:
  std::vector<TableColumn> table_columns() const override {
    return {{"Name", "string", 0, "name"}, {"Desired", "integer", 0}, {"Current", "integer", 0},
            {"Ready", "integer", 0},       {"Age", "string", 0},      {"Containers", "string", 1},
            {"Images", "string", 1},       {"Selector", "string", 1}};
  }
  std::vector<TableCell> table_cells(const JsonValue& o, int64_t now) const override {
    return {get_string(o, {"metadata", "name"}), get_int(o, {"spec", "replicas"}), get_int(o, {"status", "replicas"}),
            get_int(o, {"status", "readyReplicas"}), table_age(o, now), containers(o, "name"),
            containers(o, "image"), or_none(label_selector_text(o))};
  }
};

class JobStrategy final : public WorkloadStrategy {
 public:
  // Upstream's generateSelector (unless spec.manualSelector): the template is
  // labelled with the Job's uid and name, and the selector selects the uid.
  std::optional<ApiError> prepare_for_create(const StrategyContext& c, Json& obj,
                                             std::vector<std::string>& late_warnings) const override {
    WorkloadStrategy::prepare_for_create(c, obj, late_warnings);
    const JsonValue* manual = find(obj, {"spec", "manualSelector"});
    if (manual != nullptr && manual->IsBool() && manual->GetBool()) return std::nullopt;
    std::string uid = get_string(obj, {"metadata", "uid"});
    std::string name = get_string(obj, {"metadata", "name"});
    auto& a = obj.GetAllocator();
    JsonValue& spec = ensure_object(obj, "spec", a);
    JsonValue& labels = ensure_object(ensure_object(ensure_object(spec, "template", a), "metadata", a), "labels", a);
    for (const auto& [key, value] : {std::pair{api::kJobControllerUid, uid},
                                     std::pair{api::kJobName, name}, std::pair{"controller-uid", uid},
                                     std::pair{"job-name", name}}) {
      if (find(labels, {key}) == nullptr && !value.empty()) set_string(labels, key, value, a);
    }
    JsonValue& match = ensure_object(ensure_object(spec, "selector", a), "matchLabels", a);
    if (find(match, {api::kJobControllerUid}) == nullptr && !uid.empty()) {
      set_string(match, api::kJobControllerUid, uid, a);
    }
    return std::nullopt;
  }

  std::vector<TableColumn> table_columns() const override {
    return {{"Name", "string", 0, "name"}, {"Status", "string", 0},  {"Completions", "string", 0},
            {"Duration", "string", 0},     {"Age", "string", 0},     {"Containers", "string", 1},
            {"Images", "string", 1},       {"Selector", "string", 1}};
  }
  std::vector<TableCell> table_cells(const JsonValue& o, int64_t now) const override {
    return {get_string(o, {"metadata", "name"}), status(o), completions(o), duration(o, now), table_age(o, now),
            containers(o, "name"), containers(o, "image"), or_none(label_selector_text(o))};
  }

 private:
  // kubectl's Status column: the last true terminal condition, else Suspended or Running.
  static std::string status(const JsonValue& o) {
    std::string out = "Running";
    const JsonValue* conds = find(o, {"status", "conditions"});
    if (conds == nullptr || !conds->IsArray()) return out;
    for (const JsonValue& c : conds->GetArray()) {
      if (get_string(c, {"status"}) != "True") continue;
      std::string type = get_string(c, {"type"});
      if (type == "Complete" || type == "Failed" || type == "Suspended" || type == "FailureTarget" ||
          type == "SuccessCriteriaMet") {
        out = type;
      }
    }
    return out;
  }
  // "1/3" of completions, or "1/1 of 3" by parallelism when completions is unset.
  static std::string completions(const JsonValue& o) {
    int64_t succeeded = get_int(o, {"status", "succeeded"});
    const JsonValue* want = find(o, {"spec", "completions"});
    if (want != nullptr && want->IsInt64()) return std::to_string(succeeded) + "/" + std::to_string(want->GetInt64());
    int64_t parallelism = get_int(o, {"spec", "parallelism"});
    return std::to_string(succeeded) + "/1" + (parallelism > 1 ? " of " + std::to_string(parallelism) : "");
  }
  static std::string duration(const JsonValue& o, int64_t now) {
    auto start = common::parse_rfc3339(get_string(o, {"status", "startTime"}));
    if (!start) return "";
    auto end = common::parse_rfc3339(get_string(o, {"status", "completionTime"}));
    return human_duration((end ? *end : now) - *start);
  }
};

// StatefulSet and DaemonSet (apps/v1): stored untyped, with the main members
// defaulted and validated (pod_set_validation.h); kubectl's columns.
template <PodSetKind kKind>
class PodSetStrategy : public Strategy {
 public:
  std::optional<ApiError> validate_create(const StrategyContext& c, Json& object,
                                          std::vector<std::string>&) const override {
    return validate_pod_set(kKind, c.resource, object);
  }
  std::optional<ApiError> validate_update(const StrategyContext& c, const JsonValue&, Json& object,
                                          const std::string& subresource, std::vector<std::string>&) const override {
    if (subresource == "status") return std::nullopt;
    return validate_pod_set(kKind, c.resource, object);
  }
};

class StatefulSetStrategy final : public PodSetStrategy<PodSetKind::kStatefulSet> {
 public:
  std::vector<TableColumn> table_columns() const override {
    return {{"Name", "string", 0, "name"}, {"Ready", "string", 0}, {"Age", "string", 0},
            {"Containers", "string", 1},   {"Images", "string", 1}};
  }
  std::vector<TableCell> table_cells(const JsonValue& o, int64_t now) const override {
    std::string ready = std::to_string(get_int(o, {"status", "readyReplicas"})) + "/" +
                        std::to_string(get_int(o, {"spec", "replicas"}, 1));
    return {get_string(o, {"metadata", "name"}), ready, table_age(o, now), containers(o, "name"),
            containers(o, "image")};
  }
  std::vector<std::string> categories() const override { return {"all"}; }
};

class DaemonSetStrategy final : public PodSetStrategy<PodSetKind::kDaemonSet> {
 public:
  std::vector<TableColumn> table_columns() const override {
    return {{"Name", "string", 0, "name"},    {"Desired", "integer", 0},      {"Current", "integer", 0},
            {"Ready", "integer", 0},          {"Up-to-date", "integer", 0},   {"Available", "integer", 0},
            {"Node Selector", "string", 0},   {"Age", "string", 0},           {"Containers", "string", 1},
            {"Images", "string", 1},          {"Selector", "string", 1}};
  }
  std::vector<TableCell> table_cells(const JsonValue& o, int64_t now) const override {
    return {get_string(o, {"metadata", "name"}),
            get_int(o, {"status", "desiredNumberScheduled"}),
            get_int(o, {"status", "currentNumberScheduled"}),
            get_int(o, {"status", "numberReady"}),
            get_int(o, {"status", "updatedNumberScheduled"}),
            get_int(o, {"status", "numberAvailable"}),
            or_none(node_selector(o)),
            table_age(o, now),
            containers(o, "name"),
            containers(o, "image"),
            or_none(label_selector_text(o))};
  }
  std::vector<std::string> categories() const override { return {"all"}; }

 private:
  static std::string node_selector(const JsonValue& o) {
    std::string out;
    const JsonValue* sel = find(o, {"spec", "template", "spec", "nodeSelector"});
    if (sel == nullptr || !sel->IsObject()) return out;
    for (const auto& m : sel->GetObject()) {
      out += (out.empty() ? "" : ",") + std::string(m.name.GetString()) + "=" +
             (m.value.IsString() ? m.value.GetString() : "");
    }
    return out;
  }
};

}  // namespace

std::string label_selector_text(const JsonValue& obj) {
  std::string out;
  const JsonValue* labels = find(obj, {"spec", "selector", "matchLabels"});
  if (labels != nullptr && labels->IsObject()) {
    for (const auto& m : labels->GetObject()) {
      out += (out.empty() ? "" : ",") + std::string(m.name.GetString()) + "=" +
             (m.value.IsString() ? m.value.GetString() : "");
    }
  }
  const JsonValue* exprs = find(obj, {"spec", "selector", "matchExpressions"});
  if (exprs == nullptr || !exprs->IsArray()) return out;
  for (const JsonValue& e : exprs->GetArray()) {
    std::string op = get_string(e, {"operator"});
    std::string key = get_string(e, {"key"});
    std::string term = op == "Exists" ? key : op == "DoesNotExist" ? "!" + key : key + (op == "In" ? " in (" : " notin (");
    if (op == "In" || op == "NotIn") {
      const JsonValue* values = find(e, {"values"});
      std::string list;
      if (values != nullptr && values->IsArray()) {
        for (const JsonValue& v : values->GetArray()) {
          list += (list.empty() ? "" : ",") + std::string(v.IsString() ? v.GetString() : "");
        }
      }
      term += list + ")";
    }
    out += (out.empty() ? "" : ",") + term;
  }
  return out;
}

const Strategy& deployment_strategy() { return the_strategy<DeploymentStrategy>(); }
const Strategy& replica_set_strategy() { return the_strategy<ReplicaSetStrategy>(); }
const Strategy& job_strategy() { return the_strategy<JobStrategy>(); }
const Strategy& stateful_set_strategy() { return the_strategy<StatefulSetStrategy>(); }
const Strategy& daemon_set_strategy() { return the_strategy<DaemonSetStrategy>(); }

}  // namespace draplane::server
