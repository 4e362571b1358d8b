// Pod (core/v1): Pending on create; spec.nodeName and status.phase selectable;
// kubectl's pod columns; in the "all" category.
#include "server/strategies.h"
#include "server/typed_strategy.h"

namespace draplane::server {
namespace {

class PodStrategy final : public TypedStrategy {
 public:
  std::optional<ApiError> prepare_for_create(const StrategyContext&, Json& obj, std::vector<std::string>&) const override {
    JsonValue st(rapidjson::kObjectType);
    st.AddMember("phase", "Pending", obj.GetAllocator());
    set_member(obj, "status", std::move(st), obj.GetAllocator());
    return std::nullopt;
  }

  bool selectable_field(const std::string& path) const override {
    return Strategy::selectable_field(path) || path == "spec.nodeName" || path == "status.phase";
  }
  std::string unsupported_field(const ResourceInfo&, const std::string& label) const override {
    return core_unsupported_field(label);
  }

  std::vector<TableColumn> table_columns() const override {
    return {{"Name", "string", 0, "name"}, {"Ready", "string", 0}, {"Status", "string", 0}, {"Restarts", "string", 0},
            {"Age", "string", 0}, {"IP", "string", 1}, {"Node", "string", 1}, {"Nominated Node", "string", 1},
            {"Readiness Gates", "string", 1}};
  }
  std::vector<TableCell> table_cells(const JsonValue& o, int64_t now) const override {
    int64_t total = array_size(o, {"spec", "containers"}), ready = 0, restarts = 0;
    const JsonValue* cs = find(o, {"status", "containerStatuses"});
    if (cs && cs->IsArray()) {
      for (const auto& c : cs->GetArray()) {
        const JsonValue* rd = find(c, {"ready"});
        if (rd && rd->IsBool() && rd->GetBool()) ++ready;
        const JsonValue* rc = find(c, {"restartCount"});
        if (rc && rc->IsInt64()) restarts += rc->GetInt64();
      }
    }
    std::string status = get_string(o, {"status", "reason"});
    if (status.empty()) status = get_string(o, {"status", "phase"});
    if (!get_string(o, {"metadata", "deletionTimestamp"}).empty()) status = "Terminating";
    return {get_string(o, {"metadata", "name"}), std::to_string(ready) + "/" + std::to_string(total), status,
            std::to_string(restarts), table_age(o, now), or_none(get_string(o, {"status", "podIP"})),
            or_none(get_string(o, {"spec", "nodeName"})), or_none(get_string(o, {"status", "nominatedNodeName"})),
            "<none>"};
  }
  std::vector<std::string> categories() const override { return {"all"}; }
};

}  // namespace

const Strategy& pod_strategy() { return the_strategy<PodStrategy>(); }

}  // namespace draplane::server
