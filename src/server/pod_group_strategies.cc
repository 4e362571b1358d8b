// scheduling.k8s.io/v1beta1 Workload and PodGroup (KEP-4671; api/types.h,
// api/workload.h): typed, validated as upstream; a PodGroup's status is
// written only through /status (the scheduler's PodGroupInitiallyScheduled
// condition) and dropped on create. Upstream prints both with the default
// Name/Age columns; draplane adds the PodGroup's policy and scheduling state
// (docs/compat.md).
#include "api/workload.h"
#include "server/strategies.h"
#include "server/typed_strategy.h"

namespace draplane::server {
namespace {

class WorkloadStrategy final : public TypedStrategy {};

class PodGroupStrategy final : public TypedStrategy {
 public:
  std::optional<ApiError> prepare_for_create(const StrategyContext&, Json& obj, std::vector<std::string>&) const override {
    remove_member(obj, "status");
    return std::nullopt;
  }

  std::vector<TableColumn> table_columns() const override {
    return {{"Name", "string", 0, "name"}, {"Policy", "string", 0}, {"Min-Count", "string", 0},
            {"Scheduled", "string", 0},    {"Age", "string", 0},    {"Reason", "string", 1},
            {"Message", "string", 1}};
  }
  std::vector<TableCell> table_cells(const JsonValue& o, int64_t now) const override {
    const JsonValue* gang = find(o, {"spec", "schedulingPolicy", "gang"});
    const JsonValue* min = gang != nullptr ? find(*gang, {"minCount"}) : nullptr;
    std::string scheduled = "Unknown", reason, message;
    const JsonValue* conds = find(o, {"status", "conditions"});
    if (conds != nullptr && conds->IsArray()) {
      for (const JsonValue& c : conds->GetArray()) {
        if (get_string(c, {"type"}) != api::kPodGroupInitiallyScheduled) continue;
        scheduled = get_string(c, {"status"});
        reason = get_string(c, {"reason"});
        message = get_string(c, {"message"});
      }
    }
    return {get_string(o, {"metadata", "name"}), gang != nullptr ? "Gang" : "Basic",
            min != nullptr && min->IsInt64() ? std::to_string(min->GetInt64()) : "<none>", scheduled,
            table_age(o, now), or_none(reason), or_none(message)};
  }

 protected:
  api::FieldErrorList validate_typed_update(const StrategyContext& c, const api::Object& old, const api::Object& obj,
                                            const std::string& subresource) const override {
    if (subresource == "status") {
      return api::validate_pod_group_status_update(std::get<api::PodGroup>(obj), std::get<api::PodGroup>(old));
    }
    return TypedStrategy::validate_typed_update(c, old, obj, subresource);
  }
};

}  // namespace

const Strategy& workload_strategy() { return the_strategy<WorkloadStrategy>(); }
const Strategy& pod_group_strategy() { return the_strategy<PodGroupStrategy>(); }

}  // namespace draplane::server
