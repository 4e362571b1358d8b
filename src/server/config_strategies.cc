// core/v1 ConfigMap, Secret, ServiceAccount, Service and PersistentVolumeClaim:
// typed (api/types.h), stored and served; their columns are kubectl's
// (upstream pkg/printers/internalversion). No cluster IP is allocated: a
// Service keeps the clusterIP its manifest gives, unset otherwise (docs/compat.md).
#include "server/strategies.h"
#include "server/typed_strategy.h"

namespace draplane::server {
namespace {

int64_t member_count(const JsonValue& o, std::initializer_list<std::string_view> path) {
  const JsonValue* v = find(o, path);
  return v != nullptr && v->IsObject() ? static_cast<int64_t>(v->MemberCount()) : 0;
}

class ConfigMapStrategy final : public TypedStrategy {
 public:
  std::vector<TableColumn> table_columns() const override {
    return {{"Name", "string", 0, "name"}, {"Data", "string", 0}, {"Age", "string", 0}};
  }
  std::vector<TableCell> table_cells(const JsonValue& o, int64_t now) const override {
    return {get_string(o, {"metadata", "name"}),
            std::to_string(member_count(o, {"data"}) + member_count(o, {"binaryData"})), table_age(o, now)};
  }
};

class SecretStrategy final : public TypedStrategy {
 public:
  std::vector<TableColumn> table_columns() const override {
    return {{"Name", "string", 0, "name"}, {"Type", "string", 0}, {"Data", "string", 0}, {"Age", "string", 0}};
  }
  std::vector<TableCell> table_cells(const JsonValue& o, int64_t now) const override {
    return {get_string(o, {"metadata", "name"}), get_string(o, {"type"}), std::to_string(member_count(o, {"data"})),
            table_age(o, now)};
  }
};

class ServiceAccountStrategy final : public TypedStrategy {
 public:
  std::vector<TableColumn> table_columns() const override {
    return {{"Name", "string", 0, "name"}, {"Secrets", "string", 0}, {"Age", "string", 0}};
  }
  std::vector<TableCell> table_cells(const JsonValue& o, int64_t now) const override {
    return {get_string(o, {"metadata", "name"}), std::to_string(array_size(o, {"secrets"})), table_age(o, now)};
  }
};

// Service and PersistentVolumeClaim: status through /status only; a create's is
// dropped (upstream's PrepareForCreate; the claim's phase is then defaulted).
class StatusResetStrategy : public TypedStrategy {
 public:
  std::optional<ApiError> prepare_for_create(const StrategyContext&, Json& obj, std::vector<std::string>&) const override {
    remove_member(obj, "status");
    return std::nullopt;
  }
};

class ServiceStrategy final : public StatusResetStrategy {
 public:
  std::vector<TableColumn> table_columns() const override {
    return {{"Name", "string", 0, "name"}, {"Type", "string", 0},     {"Cluster-IP", "string", 0},
            {"External-IP", "string", 0},  {"Port(s)", "string", 0},  {"Age", "string", 0},
            {"Selector", "string", 1}};
  }
  std::vector<TableCell> table_cells(const JsonValue& o, int64_t now) const override {
    std::string type = get_string(o, {"spec", "type"});
    std::string external = type == "ExternalName" ? get_string(o, {"spec", "externalName"}) : "";
    return {get_string(o, {"metadata", "name"}), type, or_none(get_string(o, {"spec", "clusterIP"})),
            or_none(external), or_none(ports(o)), table_age(o, now), or_none(selector(o))};
  }
  std::vector<std::string> categories() const override { return {"all"}; }

 private:
  // "80/TCP,443:30443/TCP" as kubectl prints Port(s).
  static std::string ports(const JsonValue& o) {
    std::string out;
    const JsonValue* list = find(o, {"spec", "ports"});
    if (list == nullptr || !list->IsArray()) return out;
    for (const JsonValue& p : list->GetArray()) {
      const JsonValue* port = find(p, {"port"});
      const JsonValue* node_port = find(p, {"nodePort"});
      if (!out.empty()) out += ",";
      out += port != nullptr && port->IsInt64() ? std::to_string(port->GetInt64()) : "0";
      if (node_port != nullptr && node_port->IsInt64() && node_port->GetInt64() != 0) {
        out += ":" + std::to_string(node_port->GetInt64());
      }
      out += "/" + get_string(p, {"protocol"});
    }
    return out;
  }
  static std::string selector(const JsonValue& o) {
    std::string out;
    const JsonValue* sel = find(o, {"spec", "selector"});
    if (sel == nullptr || !sel->IsObject()) return out;
    for (const auto& m : sel->GetObject()) {
      if (!out.empty()) out += ",";
      out += std::string(m.name.GetString()) + "=" + (m.value.IsString() ? m.value.GetString() : "");
    }
    return out;
  }
};

class PersistentVolumeClaimStrategy final : public StatusResetStrategy {
 public:
  std::vector<TableColumn> table_columns() const override {
    return {{"Name", "string", 0, "name"},         {"Status", "string", 0},
            {"Volume", "string", 0},               {"Capacity", "string", 0},
            {"Access Modes", "string", 0},         {"StorageClass", "string", 0},
            {"VolumeAttributesClass", "string", 0}, {"Age", "string", 0},
            {"VolumeMode", "string", 1}};
  }
  std::vector<TableCell> table_cells(const JsonValue& o, int64_t now) const override {
    std::string class_name = get_string(o, {"spec", "storageClassName"});
    std::string attributes_class = get_string(o, {"spec", "volumeAttributesClassName"});
    return {get_string(o, {"metadata", "name"}),
            get_string(o, {"status", "phase"}),
            get_string(o, {"spec", "volumeName"}),
            get_string(o, {"status", "capacity", "storage"}),
            access_modes(o),
            class_name,
            or_unset(attributes_class),
            table_age(o, now),
            get_string(o, {"spec", "volumeMode"})};
  }

 private:
  static std::string or_unset(std::string s) { return s.empty() ? "<unset>" : s; }
  // The bound volume's modes, short: "RWO,ROX" (kubectl's GetAccessModesAsString).
  static std::string access_modes(const JsonValue& o) {
    std::string out;
    const JsonValue* modes = find(o, {"status", "accessModes"});
    if (modes == nullptr || !modes->IsArray()) return out;
    for (const char* mode : {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"}) {
      for (const JsonValue& m : modes->GetArray()) {
        if (!m.IsString() || std::string_view(m.GetString()) != mode) continue;
        static const std::map<std::string_view, const char*> kShort = {
            {"ReadWriteOnce", "RWO"}, {"ReadOnlyMany", "ROX"}, {"ReadWriteMany", "RWX"}, {"ReadWriteOncePod", "RWOP"}};
        out += (out.empty() ? "" : ",") + std::string(kShort.at(mode));
        break;
      }
    }
    return out;
  }
};

}  // namespace

const Strategy& config_map_strategy() { return the_strategy<ConfigMapStrategy>(); }
const Strategy& secret_strategy() { return the_strategy<SecretStrategy>(); }
const Strategy& service_account_strategy() { return the_strategy<ServiceAccountStrategy>(); }
const Strategy& service_strategy() { return the_strategy<ServiceStrategy>(); }
const Strategy& persistent_volume_claim_strategy() { return the_strategy<PersistentVolumeClaimStrategy>(); }

}  // namespace draplane::server
