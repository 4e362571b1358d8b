// Node (core/v1): spec.unschedulable selectable; kubectl's node columns.
#include "server/strategies.h"
#include "server/typed_strategy.h"

namespace draplane::server {
namespace {

class NodeStrategy final : public TypedStrategy {
 public:
  bool selectable_field(const std::string& path) const override {
    return Strategy::selectable_field(path) || path == "spec.unschedulable";
  }
  std::string field_value(const JsonValue& o, const std::string& path) const override {
    if (path == "spec.unschedulable") {
      const JsonValue* u = find(o, {"spec", "unschedulable"});
      return u && u->IsBool() && u->GetBool() ? "true" : "false";
    }
    return Strategy::field_value(o, path);
  }
  std::string unsupported_field(const ResourceInfo&, const std::string& label) const override {
    return core_unsupported_field(label);
  }

  std::vector<TableColumn> table_columns() const override {
    return {{"Name", "string", 0, "name"}, {"Status", "string", 0}, {"Roles", "string", 0}, {"Age", "string", 0},
            {"Version", "string", 0}, {"Internal-IP", "string", 1}, {"External-IP", "string", 1},
            {"OS-Image", "string", 1}, {"Kernel-Version", "string", 1}, {"Container-Runtime", "string", 1}};
  }
  std::vector<TableCell> table_cells(const JsonValue& o, int64_t now) const override {
    std::string status = "Unknown";
    const JsonValue* conds = find(o, {"status", "conditions"});
    if (conds && conds->IsArray()) {
      for (const auto& c : conds->GetArray()) {
        if (get_string(c, {"type"}) == "Ready") status = get_string(c, {"status"}) == "True" ? "Ready" : "NotReady";
      }
    }
    const JsonValue* unsched = find(o, {"spec", "unschedulable"});
    if (unsched && unsched->IsBool() && unsched->GetBool()) status += ",SchedulingDisabled";
    std::string roles;
    if (const JsonValue* labels = find(o, {"metadata", "labels"}); labels && labels->IsObject()) {
      for (auto& m : labels->GetObject()) {
        std::string k(m.name.GetString());
        const std::string p = "node-role.kubernetes.io/";
        if (k.rfind(p, 0) == 0) roles += (roles.empty() ? "" : ",") + k.substr(p.size());
      }
    }
    std::string internal_ip, external_ip;
    if (const JsonValue* addrs = find(o, {"status", "addresses"}); addrs && addrs->IsArray()) {
      for (const auto& a : addrs->GetArray()) {
        if (get_string(a, {"type"}) == "InternalIP" && internal_ip.empty()) internal_ip = get_string(a, {"address"});
        if (get_string(a, {"type"}) == "ExternalIP" && external_ip.empty()) external_ip = get_string(a, {"address"});
      }
    }
    return {get_string(o, {"metadata", "name"}), status, or_none(roles), table_age(o, now),
            get_string(o, {"status", "nodeInfo", "kubeletVersion"}), or_none(internal_ip), or_none(external_ip),
            get_string(o, {"status", "nodeInfo", "osImage"}), get_string(o, {"status", "nodeInfo", "kernelVersion"}),
            get_string(o, {"status", "nodeInfo", "containerRuntimeVersion"})};
  }
};

}  // namespace

const Strategy& node_strategy() { return the_strategy<NodeStrategy>(); }

}  // namespace draplane::server
