// KAI Scheduler's Queue (scheduling.run.ai/v2), served as KAI's CRD serves it
// (deployments/kai-scheduler/crds/scheduling.run.ai_queues.yaml): cluster
// scoped, status through /status, the CRD's structural schema (the types of
// spec and status members, quantities in status), KAI's queue-validation
// webhook's rule (spec.resources is required), and the CRD's printer columns.
// Stored as sent otherwise (the CRD's pruning of unknown fields is not done:
// docs/compat.md).
#include <cmath>

#include "api/quantity.h"
#include "server/strategies.h"

namespace draplane::server {
namespace {

// The JSON type name kube-apiserver's schema validation prints for a value.
std::string json_type(const JsonValue& v) {
  if (v.IsString()) return "string";
  if (v.IsBool()) return "boolean";
  if (v.IsNull()) return "null";
  if (v.IsArray()) return "array";
  if (v.IsObject()) return "object";
  if (v.IsInt64() || v.IsUint64()) return "integer";
  return "number";
}

bool has_type(const JsonValue& v, std::string_view want) {
  std::string got = json_type(v);
  if (want == "number") return got == "integer" || got == "number";
  if (want == "integer") return got == "integer" || (got == "number" && std::trunc(v.GetDouble()) == v.GetDouble());
  return got == want;
}

// `v` (at `path`) of the schema's `type`, as the CRD validation reports it.
bool check_type(const JsonValue& v, const api::FieldPath& path, std::string_view type, api::FieldErrorList& errs) {
  if (has_type(v, type)) return true;
  std::string got = json_type(v);
  errs.push_back(api::field_invalid(path, got,
                                    path.str() + " in body must be of type " + std::string(type) + ": \"" + got +
                                        "\""));
  return false;
}

// Members of object `o` named in `fields` (name, type); others are not checked.
void check_members(const JsonValue& o, const api::FieldPath& path,
                   std::initializer_list<std::pair<const char*, const char*>> fields, api::FieldErrorList& errs) {
  for (const auto& [name, type] : fields) {
    const JsonValue* m = find(o, {name});
    if (m != nullptr) check_type(*m, path.child(name), type, errs);
  }
}

void check_spec(const JsonValue& object, api::FieldErrorList& errs) {
  const JsonValue* spec = find(object, {"spec"});
  if (spec == nullptr || !check_type(*spec, api::FieldPath("spec"), "object", errs)) return;
  api::FieldPath sp("spec");
  check_members(*spec, sp,
                {{"displayName", "string"}, {"parentQueue", "string"}, {"priority", "integer"},
                 {"preemptMinRuntime", "string"}, {"reclaimMinRuntime", "string"}, {"resources", "object"}},
                errs);
  const JsonValue* resources = find(*spec, {"resources"});
  if (resources == nullptr || !resources->IsObject()) return;
  for (const char* r : {"gpu", "cpu", "memory"}) {
    const JsonValue* res = find(*resources, {r});
    api::FieldPath rp = sp.child("resources").child(r);
    if (res == nullptr || !check_type(*res, rp, "object", errs)) continue;
    check_members(*res, rp, {{"quota", "number"}, {"limit", "number"}, {"overQuotaWeight", "number"}}, errs);
  }
}

void check_quantities(const JsonValue& status, const char* name, api::FieldErrorList& errs) {
  const JsonValue* list = find(status, {name});
  api::FieldPath path = api::FieldPath("status").child(name);
  if (list == nullptr || !check_type(*list, path, "object", errs)) return;
  for (const auto& m : list->GetObject()) {
    api::FieldPath p = path.child(m.name.GetString());
    if (m.value.IsInt64() || m.value.IsUint64()) continue;
    if (!m.value.IsString()) {
      check_type(m.value, p, "string", errs);
      continue;
    }
    if (!api::Quantity::parse(m.value.GetString()).has_value()) {
      errs.push_back(api::field_invalid(p, std::string(m.value.GetString()),
                                        p.str() +
                                            " in body should match '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|"
                                            "[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$'"));
    }
  }
}

void check_status(const JsonValue& object, api::FieldErrorList& errs) {
  const JsonValue* status = find(object, {"status"});
  if (status == nullptr || !check_type(*status, api::FieldPath("status"), "object", errs)) return;
  for (const char* q : {"allocated", "allocatedNonPreemptible", "requested", "fairShare"}) {
    check_quantities(*status, q, errs);
  }
  const JsonValue* children = find(*status, {"childQueues"});
  api::FieldPath cp = api::FieldPath("status").child("childQueues");
  if (children != nullptr && check_type(*children, cp, "array", errs)) {
    for (size_t i = 0; i < children->Size(); ++i) check_type((*children)[i], cp.index(i), "string", errs);
  }
  const JsonValue* conditions = find(*status, {"conditions"});
  api::FieldPath cdp = api::FieldPath("status").child("conditions");
  if (conditions == nullptr || !check_type(*conditions, cdp, "array", errs)) return;
  for (size_t i = 0; i < conditions->Size(); ++i) {
    const JsonValue& c = (*conditions)[i];
    if (!check_type(c, cdp.index(i), "object", errs)) continue;
    for (const char* required : {"type", "status"}) {
      if (find(c, {required}) == nullptr) errs.push_back(api::field_required(cdp.index(i).child(required), ""));
    }
    check_members(c, cdp.index(i),
                  {{"type", "string"}, {"status", "string"}, {"reason", "string"}, {"message", "string"},
                   {"lastProbeTime", "string"}, {"lastTransitionTime", "string"}},
                  errs);
  }
}

// KAI's queue-validation webhook: a queue must say what resources it has.
std::optional<ApiError> webhook_check(const JsonValue& object) {
  const JsonValue* resources = find(object, {"spec", "resources"});
  if (resources != nullptr && !resources->IsNull()) return std::nullopt;
  ApiError e = from_code(Code::kForbidden, "admission webhook \"queue-validation.kai.scheduler\" denied the request: "
                                           "resources must be specified");
  e.reason = "";  // a webhook's denial carries no reason
  return e;
}

// "[\"a\",\"b\"]" as kubectl's JSONPath prints a list in a string column.
std::string json_list(const JsonValue* v) {
  if (v == nullptr || !v->IsArray()) return "<none>";
  return to_string(*v);
}

class QueueStrategy final : public Strategy {
 public:
  std::optional<ApiError> validate_create(const StrategyContext& c, Json& object,
                                          std::vector<std::string>&) const override {
    return check(c, object, "");
  }
  std::optional<ApiError> validate_update(const StrategyContext& c, const JsonValue&, Json& object,
                                          const std::string& subresource, std::vector<std::string>&) const override {
    return check(c, object, subresource);
  }
  std::vector<TableColumn> table_columns() const override {
    // KAI's CRD columns, then draplane's: the GPUs its scheduler reports in
    // status (docs/compat.md).
    return {{"Name", "string", 0, "name"},  {"Priority", "string", 0},       {"Parent", "string", 0},
            {"Children", "string", 0},      {"DisplayName", "string", 0},    {"GPU Allocated", "string", 0},
            {"GPU Fair Share", "string", 0}, {"GPU Requested", "string", 0}};
  }
  std::vector<TableCell> table_cells(const JsonValue& o, int64_t) const override {
    const JsonValue* priority = find(o, {"spec", "priority"});
    return {get_string(o, {"metadata", "name"}), priority != nullptr ? to_string(*priority) : "<none>",
            or_none(get_string(o, {"spec", "parentQueue"})), json_list(find(o, {"status", "childQueues"})),
            or_none(get_string(o, {"spec", "displayName"})),
            or_none(get_string(o, {"status", "allocated", "nvidia.com/gpu"})),
            or_none(get_string(o, {"status", "fairShare", "nvidia.com/gpu"})),
            or_none(get_string(o, {"status", "requested", "nvidia.com/gpu"}))};
  }

 private:
  static std::optional<ApiError> check(const StrategyContext& c, const JsonValue& object, const std::string& subresource) {
    api::FieldErrorList errs;
    check_spec(object, errs);
    check_status(object, errs);
    if (!errs.empty()) return invalid(c.resource, get_string(object, {"metadata", "name"}), std::move(errs));
    if (subresource.empty()) return webhook_check(object);
    return std::nullopt;
  }
};

}  // namespace

const Strategy& queue_strategy() { return the_strategy<QueueStrategy>(); }

}  // namespace draplane::server
