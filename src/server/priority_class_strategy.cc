// PriorityClass (scheduling.k8s.io/v1): typed (api/types.h), validated as
// upstream; kubectl's priority class columns. The one-default rule and the
// pods' priority resolution are admission (priority_admission.cc).
#include "server/strategies.h"
#include "server/typed_strategy.h"

namespace draplane::server {
namespace {

class PriorityClassStrategy final : public TypedStrategy {
 public:
  std::vector<TableColumn> table_columns() const override {
    return {{"Name", "string", 0, "name"}, {"Value", "integer", 0}, {"Global-Default", "string", 0},
            {"Age", "string", 0}, {"PreemptionPolicy", "string", 0}};
  }
  std::vector<TableCell> table_cells(const JsonValue& o, int64_t now) const override {
    const JsonValue* v = find(o, {"value"});
    const JsonValue* gd = find(o, {"globalDefault"});
    std::string pp = get_string(o, {"preemptionPolicy"});
    return {get_string(o, {"metadata", "name"}), v && v->IsInt64() ? v->GetInt64() : int64_t{0},
            gd && gd->IsBool() && gd->GetBool() ? "true" : "false", table_age(o, now),
            pp.empty() ? "PreemptLowerPriority" : pp};
  }
};

}  // namespace

const Strategy& priority_class_strategy() { return the_strategy<PriorityClassStrategy>(); }

}  // namespace draplane::server
