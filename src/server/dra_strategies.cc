// The resource.k8s.io kinds (all versions): DeviceClass, ResourceClaim,
// ResourceClaimTemplate, ResourceSlice, DeviceTaintRule.
#include <algorithm>

#include "api/codec_tree.h"
#include "server/strategies.h"
#include "server/typed_strategy.h"

namespace draplane::server {
namespace {

class DeviceClassStrategy final : public TypedStrategy {};

// A kind whose status is written only through /status: a create's status is
// dropped (ResourceClaim, DeviceTaintRule).
class StatusSubresourceStrategy : public TypedStrategy {
 public:
  // Clients do not set status. It is dropped, but kube-apiserver decodes it
  // first: its unknown and repeated fields are reported under Strict and Warn.
  std::optional<ApiError> prepare_for_create(const StrategyContext& c, Json& obj,
                                             std::vector<std::string>& late_warnings) const override {
    if (auto e = status_field_problems(c, obj, late_warnings)) return e;
    remove_member(obj, "status");
    return std::nullopt;
  }

 private:
  // The strict-decoding problems of a created object's status (`problems`, for
  // Warn), or under Strict the 400 of decoding the whole object. Decodes only
  // when there is a status to look at.
  static std::optional<ApiError> status_field_problems(const StrategyContext& c, const Json& obj,
                                                       std::vector<std::string>& problems) {
    const JsonValue* st = find(obj, {"status"});
    FieldValidation fv = c.field_validation;
    if (fv == FieldValidation::kIgnore || st == nullptr || !st->IsObject() || st->MemberCount() == 0) {
      return std::nullopt;
    }
    auto lenient = api::decode_tree_lenient(obj);
    if (!lenient.has_value()) return std::nullopt;  // validate_create reports it
    bool any = false;
    for (const std::string& p : lenient->dropped) {
      if (p.find("field \"status.") == std::string::npos) continue;
      any = true;
      problems.push_back(p);
    }
    if (!any || fv != FieldValidation::kStrict) return std::nullopt;
    auto strict = api::decode_tree(obj);  // every problem, in document order
    std::string why = strict.has_value() ? std::string() : strict.error().message();
    const ResourceInfo& r = c.resource;
    return bad_request(r.kind + " in version \"" + r.version + "\" cannot be handled as a " + r.kind + ": " + why);
  }
};

// ResourceClaim: status only through /status (validated there as
// ValidateResourceClaimStatusUpdate).
class ResourceClaimStrategy final : public StatusSubresourceStrategy {
 public:
  std::vector<std::vector<const char*>> empty_structs() const override { return {{"spec", "devices"}}; }

  std::vector<TableColumn> table_columns() const override {
    return {{"Name", "string", 0, "name"}, {"State", "string", 0}, {"Age", "string", 0}};
  }
  std::vector<TableCell> table_cells(const JsonValue& o, int64_t now) const override {
    return {get_string(o, {"metadata", "name"}), state(o), table_age(o, now)};
  }

 protected:
  // dropDeallocatedStatusDevices: the status.devices entries of devices the
  // old allocation had and the new one has not go with them.
  void prepare_typed_update(const StrategyContext&, const api::Object& old, api::Object& object,
                            const std::string& subresource) const override {
    if (subresource != "status") return;
    const auto& was = std::get<api::ResourceClaim>(old).status;
    auto& now = std::get<api::ResourceClaim>(object).status;
    if (!was.allocation || now.devices.empty()) return;
    auto in = [](const std::optional<api::AllocationResult>& a, const api::AllocatedDeviceStatus& d) {
      if (!a) return false;
      return std::any_of(a->devices.results.begin(), a->devices.results.end(), [&](const auto& r) {
        return r.driver == d.driver && r.pool == d.pool && r.device == d.device && r.shareID == d.shareID;
      });
    };
    std::erase_if(now.devices, [&](const api::AllocatedDeviceStatus& d) {
      return in(was.allocation, d) && !in(now.allocation, d);
    });
  }

  api::FieldErrorList validate_typed_update(const StrategyContext& c, const api::Object& old, const api::Object& obj,
                                            const std::string& subresource) const override {
    if (subresource == "status") {
      return api::validate_claim_status_update(std::get<api::ResourceClaim>(obj), std::get<api::ResourceClaim>(old));
    }
    return TypedStrategy::validate_typed_update(c, old, obj, subresource);
  }

 private:
  static std::string state(const JsonValue& o) {
    std::vector<std::string> states;
    bool deleted = !get_string(o, {"metadata", "deletionTimestamp"}).empty();
    const JsonValue* alloc = find(o, {"status", "allocation"});
    if (deleted) states.push_back("deleted");
    if (alloc == nullptr || alloc->IsNull()) {
      if (!deleted) states.push_back("pending");
    } else {
      states.push_back("allocated");
      if (array_size(o, {"status", "reservedFor"}) > 0) states.push_back("reserved");
      else if (deleted) states.push_back("deallocating");
    }
    std::string out;
    for (size_t i = 0; i < states.size(); ++i) out += (i ? "," : "") + states[i];
    return out;
  }
};

class ResourceClaimTemplateStrategy final : public TypedStrategy {
 public:
  std::vector<std::vector<const char*>> empty_structs() const override {
    return {{"spec", "metadata"}, {"spec", "spec", "devices"}};
  }
};

// ResourceSlice: cluster-scoped, selectable by spec.nodeName and spec.driver
// (its conversion function leaves metadata.namespace out).
class ResourceSliceStrategy final : public TypedStrategy {
 public:
  std::vector<std::vector<const char*>> empty_structs() const override { return {{"spec", "pool"}}; }

  bool selectable_field(const std::string& path) const override {
    return path == "metadata.name" || path == "spec.nodeName" || path == "spec.driver";
  }
  std::string unsupported_field(const ResourceInfo& r, const std::string& label) const override {
    return "field label not supported for " + r.group_version() + ", Kind=" + r.kind + ": " + label;
  }

  std::vector<TableColumn> table_columns() const override {
    return {{"Name", "string", 0, "name"}, {"Node", "string", 0}, {"Driver", "string", 0}, {"Pool", "string", 0},
            {"Age", "string", 0}};
  }
  std::vector<TableCell> table_cells(const JsonValue& o, int64_t now) const override {
    return {get_string(o, {"metadata", "name"}), or_none(get_string(o, {"spec", "nodeName"})),
            get_string(o, {"spec", "driver"}), get_string(o, {"spec", "pool", "name"}), table_age(o, now)};
  }
};

// DeviceTaintRule (cluster-scoped, status through /status): the taint's
// timeAdded is stamped on create and update when unset, and again on an update
// that changes the effect but keeps the old time (upstream's strategy: the
// eviction's grace periods count from it).
class DeviceTaintRuleStrategy final : public StatusSubresourceStrategy {
 protected:
  void prepare_typed_update(const StrategyContext& c, const api::Object& old, api::Object& obj,
                            const std::string& subresource) const override {
    if (subresource == "status" || c.now.empty()) return;
    const api::DeviceTaint& was = std::get<api::DeviceTaintRule>(old).spec.taint;
    api::DeviceTaint& taint = std::get<api::DeviceTaintRule>(obj).spec.taint;
    if (taint.effect != was.effect && taint.timeAdded == was.timeAdded) taint.timeAdded = c.now;
  }
  api::FieldErrorList validate_typed_update(const StrategyContext& c, const api::Object& old, const api::Object& obj,
                                            const std::string& subresource) const override {
    if (subresource == "status") {
      return api::validate_device_taint_rule_status_update(std::get<api::DeviceTaintRule>(obj),
                                                           std::get<api::DeviceTaintRule>(old));
    }
    return TypedStrategy::validate_typed_update(c, old, obj, subresource);
  }
};

}  // namespace

const Strategy& device_taint_rule_strategy() { return the_strategy<DeviceTaintRuleStrategy>(); }
const Strategy& device_class_strategy() { return the_strategy<DeviceClassStrategy>(); }
const Strategy& resource_claim_strategy() { return the_strategy<ResourceClaimStrategy>(); }
const Strategy& resource_claim_template_strategy() { return the_strategy<ResourceClaimTemplateStrategy>(); }
const Strategy& resource_slice_strategy() { return the_strategy<ResourceSliceStrategy>(); }

}  // namespace draplane::server
