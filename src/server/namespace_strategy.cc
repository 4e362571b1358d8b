// Namespace (core/v1): labelled with its name and Active on create; status is
// written through the main resource as well; deleting one deletes its contents.
#include "server/strategies.h"
#include "server/typed_strategy.h"

namespace draplane::server {
namespace {

class NamespaceStrategy final : public TypedStrategy {
 public:
  std::optional<ApiError> prepare_for_create(const StrategyContext&, Json& obj, std::vector<std::string>&) const override {
    auto& a = obj.GetAllocator();
    JsonValue& meta = ensure_object(obj, "metadata", a);
    std::string name = get_string(meta, {"name"});
    JsonValue& labels = ensure_object(meta, "labels", a);
    set_string(labels, "kubernetes.io/metadata.name", name, a);
    // After `meta` is done with: a member added to obj may move obj's members.
    JsonValue& st = ensure_object(obj, "status", a);
    set_string(st, "phase", "Active", a);
    return std::nullopt;
  }
  bool main_resource_resets_status(const ResourceInfo&) const override { return false; }

  void before_remove(RegistryHooks& hooks, const std::string& name) const override {
    hooks.delete_namespace_contents(name);
  }
  void after_delete(RegistryHooks& hooks, const std::string& name, int64_t revision) const override {
    hooks.namespace_changed(name, revision);
  }

  bool selectable_field(const std::string& path) const override {
    return Strategy::selectable_field(path) || path == "status.phase";
  }
  std::string unsupported_field(const ResourceInfo&, const std::string& label) const override {
    return core_unsupported_field(label);
  }

  std::vector<TableColumn> table_columns() const override {
    return {{"Name", "string", 0, "name"}, {"Status", "string", 0}, {"Age", "string", 0}};
  }
  std::vector<TableCell> table_cells(const JsonValue& o, int64_t now) const override {
    return {get_string(o, {"metadata", "name"}), get_string(o, {"status", "phase"}), table_age(o, now)};
  }
  // kube-apiserver's namespace storage has no DeleteCollection.
  bool deletes_collections() const override { return false; }
};

}  // namespace

const Strategy& namespace_strategy() { return the_strategy<NamespaceStrategy>(); }

}  // namespace draplane::server
