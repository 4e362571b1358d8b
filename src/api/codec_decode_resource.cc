// Typed decoding: scalars, meta/v1, and the resource.k8s.io/v1 kinds (strict).
#include <algorithm>
#include <limits>

#include "api/decode_limits.h"
#include "api/internal/decoder.h"

namespace draplane::api::internal {

void Decoder::type_error(const FieldPath& path, std::string_view expected, const JsonValue& got) {
  std::string msg = path + ": expected " + std::string(expected) + ", got " +
                    std::string(type_name(got.type));
  if (got.type == JsonValue::Type::kString) {
    msg += " \"" + got.text + "\"";
  } else if (got.type == JsonValue::Type::kNumber) {
    msg += " " + got.text;
  } else if (got.type == JsonValue::Type::kBool) {
    msg += got.boolean ? " true" : " false";
  }
  fail(std::move(msg));
}

Status Decoder::status() const {
  if (error_) return *error_;
  if (strict_.empty()) return Status();
  std::string msg = "strict decoding error: ";
  for (size_t i = 0; i < strict_.size(); ++i) {
    if (i > 0) msg += ", ";
    msg += strict_[i];
  }
  return Status(Code::kBadRequest, msg);
}

// ---------------------------------------------------------------- scalars

void read(Decoder& d, const JsonValue& v, const FieldPath& path, std::string& out) {
  if (v.is_null()) return;
  if (!v.is_string()) {
    if (!v.plain.empty()) {
      out = v.plain;
      return;
    }
    return d.type_error(path, "string", v);
  }
  out = v.text;
}

namespace {
bool parse_integer(const std::string& text, int64_t& out) {
  if (text.empty() || text.find_first_of(".eE") != std::string::npos) return false;
  size_t i = text[0] == '-' ? 1 : 0;
  if (i >= text.size()) return false;
  __int128 v = 0;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    v = v * 10 + (text[i] - '0');
    if (v > static_cast<__int128>(std::numeric_limits<int64_t>::max()) + 1) return false;
  }
  if (text[0] == '-') v = -v;
  if (v > std::numeric_limits<int64_t>::max()) return false;
  out = static_cast<int64_t>(v);
  return true;
}
}  // namespace

void read(Decoder& d, const JsonValue& v, const FieldPath& path, int64_t& out) {
  if (v.is_null()) return;
  int64_t value = 0;
  if (v.type != JsonValue::Type::kNumber || !parse_integer(v.text, value)) {
    return d.type_error(path, "integer", v);
  }
  out = value;
}

void read(Decoder& d, const JsonValue& v, const FieldPath& path, int32_t& out) {
  if (v.is_null()) return;
  int64_t value = 0;
  if (v.type != JsonValue::Type::kNumber || !parse_integer(v.text, value) ||
      value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max()) {
    return d.type_error(path, "32-bit integer", v);
  }
  out = static_cast<int32_t>(value);
}

void read(Decoder& d, const JsonValue& v, const FieldPath& path, bool& out) {
  if (v.is_null()) return;
  if (v.type != JsonValue::Type::kBool) return d.type_error(path, "boolean", v);
  out = v.boolean;
}

void read(Decoder& d, const JsonValue& v, const FieldPath& path, Quantity& out) {
  if (v.is_null()) {
    out = Quantity();
    return;
  }
  if (v.type != JsonValue::Type::kString && v.type != JsonValue::Type::kNumber) {
    return d.type_error(path, "quantity (string or number)", v);
  }
  // Like Quantity.UnmarshalJSON: surrounding whitespace is ignored.
  std::string_view text = v.text;
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\n' ||
                           text.front() == '\r')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\n' ||
                           text.back() == '\r')) {
    text.remove_suffix(1);
  }
  Result<Quantity> q = Quantity::parse(text);
  if (!q.has_value()) return d.fail(path + ": " + q.error().message());
  out = std::move(q).value();
}

void read_time(Decoder& d, const JsonValue& v, const FieldPath& path, std::string& out) {
  if (v.is_null()) {
    out.clear();
    return;
  }
  if (!v.is_string()) return d.type_error(path, "string", v);
  // "" is unset here (Go refuses it): draplane's encoder writes a condition's
  // empty lastTransitionTime so, and stored objects must keep decoding.
  if (v.text.empty()) {
    out.clear();
    return;
  }
  if (std::optional<std::string> err = rfc3339_error(v.text)) return d.fail(path + ": " + *err);
  out = v.text;
}

void read(Decoder& d, const JsonValue& v, const FieldPath& path, RawJson& out) {
  out.text = v.is_null() ? std::string() : canonical_json_text(v);
}

// ---------------------------------------------------------------- meta/v1

void read(Decoder& d, const JsonValue& v, const FieldPath& p, OwnerReference& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "apiVersion") return get(d, x, c, out.apiVersion);
    if (k == "kind") return get(d, x, c, out.kind);
    if (k == "name") return get(d, x, c, out.name);
    if (k == "uid") return get(d, x, c, out.uid);
    if (k == "controller") return get(d, x, c, out.controller);
    if (k == "blockOwnerDeletion") return get(d, x, c, out.blockOwnerDeletion);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, ObjectMeta& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "name") return get(d, x, c, out.name);
    if (k == "generateName") return get(d, x, c, out.generateName);
    if (k == "namespace") return get(d, x, c, out.namespace_);
    if (k == "selfLink") return true;  // deprecated, never served since 1.20
    if (k == "uid") return get(d, x, c, out.uid);
    if (k == "resourceVersion") return get(d, x, c, out.resourceVersion);
    if (k == "generation") return get(d, x, c, out.generation);
    if (k == "creationTimestamp") return get_time(d, x, c, out.creationTimestamp);
    if (k == "deletionTimestamp") return get_time(d, x, c, out.deletionTimestamp);
    if (k == "deletionGracePeriodSeconds") return get(d, x, c, out.deletionGracePeriodSeconds);
    if (k == "labels") return get(d, x, c, out.labels);
    if (k == "annotations") return get(d, x, c, out.annotations);
    if (k == "ownerReferences") return get(d, x, c, out.ownerReferences);
    if (k == "finalizers") return get(d, x, c, out.finalizers);
    if (k == "managedFields") {
      if (!x.is_null() && !x.is_array()) {
        d.type_error(c, "array", x);
        return true;
      }
      return get(d, x, c, out.managedFields);
    }
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, Condition& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "type") return get(d, x, c, out.type);
    if (k == "status") return get(d, x, c, out.status);
    if (k == "observedGeneration") return get(d, x, c, out.observedGeneration);
    if (k == "lastTransitionTime") return get_time(d, x, c, out.lastTransitionTime);
    if (k == "reason") return get(d, x, c, out.reason);
    if (k == "message") return get(d, x, c, out.message);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, NodeSelectorRequirement& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "key") return get(d, x, c, out.key);
    if (k == "operator") return get(d, x, c, out.operator_);
    if (k == "values") return get(d, x, c, out.values);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, NodeSelectorTerm& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "matchExpressions") return get(d, x, c, out.matchExpressions);
    if (k == "matchFields") return get(d, x, c, out.matchFields);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, NodeSelector& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "nodeSelectorTerms") return get(d, x, c, out.nodeSelectorTerms);
    return false;
  });
}

// ---------------------------------------------------------------- classes

void read(Decoder& d, const JsonValue& v, const FieldPath& p, CELDeviceSelector& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "expression") return get(d, x, c, out.expression);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, DeviceSelector& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "cel") return get(d, x, c, out.cel);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, OpaqueDeviceConfiguration& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "driver") return get(d, x, c, out.driver);
    if (k == "parameters") return get(d, x, c, out.parameters);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, DeviceClassConfiguration& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "opaque") return get(d, x, c, out.opaque);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, DeviceClassSpec& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "selectors") return get(d, x, c, out.selectors);
    if (k == "config") return get(d, x, c, out.config);
    if (k == "extendedResourceName") return get(d, x, c, out.extendedResourceName);
    return false;
  });
}

// ---------------------------------------------------------------- slices

void read(Decoder& d, const JsonValue& v, const FieldPath& p, DeviceAttribute& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "int") return get(d, x, c, out.int_);
    if (k == "bool") return get(d, x, c, out.bool_);
    if (k == "string") return get(d, x, c, out.string_);
    if (k == "version") return get(d, x, c, out.version);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, CapacityRequestPolicyRange& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "min") return get(d, x, c, out.min);
    if (k == "max") return get(d, x, c, out.max);
    if (k == "step") return get(d, x, c, out.step);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, CapacityRequestPolicy& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "default") return get(d, x, c, out.default_);
    if (k == "validValues") return get(d, x, c, out.validValues);
    if (k == "validRange") return get(d, x, c, out.validRange);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, DeviceCapacity& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "value") return get(d, x, c, out.value);
    if (k == "requestPolicy") return get(d, x, c, out.requestPolicy);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, Counter& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "value") return get(d, x, c, out.value);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, CounterSet& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "name") return get(d, x, c, out.name);
    if (k == "counters") return get(d, x, c, out.counters);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, DeviceCounterConsumption& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "counterSet") return get(d, x, c, out.counterSet);
    if (k == "counters") return get(d, x, c, out.counters);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, DeviceTaint& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "key") return get(d, x, c, out.key);
    if (k == "value") return get(d, x, c, out.value);
    if (k == "effect") return get(d, x, c, out.effect);
    if (k == "timeAdded") return get_time(d, x, c, out.timeAdded);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, Device& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "name") return get(d, x, c, out.name);
    if (k == "attributes") return get(d, x, c, out.attributes);
    if (k == "capacity") return get(d, x, c, out.capacity);
    if (k == "consumesCounters") return get(d, x, c, out.consumesCounters);
    if (k == "nodeName") return get(d, x, c, out.nodeName);
    if (k == "nodeSelector") return get(d, x, c, out.nodeSelector);
    if (k == "allNodes") return get(d, x, c, out.allNodes);
    if (k == "taints") return get(d, x, c, out.taints);
    if (k == "bindsToNode") return get(d, x, c, out.bindsToNode);
    if (k == "bindingConditions") return get(d, x, c, out.bindingConditions);
    if (k == "bindingFailureConditions") return get(d, x, c, out.bindingFailureConditions);
    if (k == "allowMultipleAllocations") return get(d, x, c, out.allowMultipleAllocations);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, ResourcePool& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "name") return get(d, x, c, out.name);
    if (k == "generation") return get(d, x, c, out.generation);
    if (k == "resourceSliceCount") return get(d, x, c, out.resourceSliceCount);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, ResourceSliceSpec& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "driver") return get(d, x, c, out.driver);
    if (k == "pool") return get(d, x, c, out.pool);
    if (k == "nodeName") return get(d, x, c, out.nodeName);
    if (k == "nodeSelector") return get(d, x, c, out.nodeSelector);
    if (k == "allNodes") return get(d, x, c, out.allNodes);
    if (k == "perDeviceNodeSelection") return get(d, x, c, out.perDeviceNodeSelection);
    if (k == "devices") return get(d, x, c, out.devices);
    if (k == "sharedCounters") return get(d, x, c, out.sharedCounters);
    return false;
  });
}

// ---------------------------------------------------------------- claims

void read(Decoder& d, const JsonValue& v, const FieldPath& p, DeviceToleration& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "key") return get(d, x, c, out.key);
    if (k == "operator") return get(d, x, c, out.operator_);
    if (k == "value") return get(d, x, c, out.value);
    if (k == "effect") return get(d, x, c, out.effect);
    if (k == "tolerationSeconds") return get(d, x, c, out.tolerationSeconds);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, CapacityRequirements& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "requests") return get(d, x, c, out.requests);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, ExactDeviceRequest& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "deviceClassName") return get(d, x, c, out.deviceClassName);
    if (k == "selectors") return get(d, x, c, out.selectors);
    if (k == "allocationMode") return get(d, x, c, out.allocationMode);
    if (k == "count") return get(d, x, c, out.count);
    if (k == "adminAccess") return get(d, x, c, out.adminAccess);
    if (k == "tolerations") return get(d, x, c, out.tolerations);
    if (k == "capacity") return get(d, x, c, out.capacity);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, DeviceSubRequest& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "name") return get(d, x, c, out.name);
    if (k == "deviceClassName") return get(d, x, c, out.deviceClassName);
    if (k == "selectors") return get(d, x, c, out.selectors);
    if (k == "allocationMode") return get(d, x, c, out.allocationMode);
    if (k == "count") return get(d, x, c, out.count);
    if (k == "tolerations") return get(d, x, c, out.tolerations);
    if (k == "capacity") return get(d, x, c, out.capacity);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, DeviceRequest& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "name") return get(d, x, c, out.name);
    if (k == "exactly") return get(d, x, c, out.exactly);
    if (k == "firstAvailable") return get(d, x, c, out.firstAvailable);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, DeviceConstraint& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "requests") return get(d, x, c, out.requests);
    if (k == "matchAttribute") return get(d, x, c, out.matchAttribute);
    if (k == "distinctAttribute") return get(d, x, c, out.distinctAttribute);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, DeviceClaimConfiguration& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "requests") return get(d, x, c, out.requests);
    if (k == "opaque") return get(d, x, c, out.opaque);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, DeviceClaim& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "requests") return get(d, x, c, out.requests);
    if (k == "constraints") return get(d, x, c, out.constraints);
    if (k == "config") return get(d, x, c, out.config);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, ResourceClaimSpec& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "devices") return get(d, x, c, out.devices);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p,
          DeviceRequestAllocationResult& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "request") return get(d, x, c, out.request);
    if (k == "driver") return get(d, x, c, out.driver);
    if (k == "pool") return get(d, x, c, out.pool);
    if (k == "device") return get(d, x, c, out.device);
    if (k == "adminAccess") return get(d, x, c, out.adminAccess);
    if (k == "tolerations") return get(d, x, c, out.tolerations);
    if (k == "bindingConditions") return get(d, x, c, out.bindingConditions);
    if (k == "bindingFailureConditions") return get(d, x, c, out.bindingFailureConditions);
    if (k == "shareID") return get(d, x, c, out.shareID);
    if (k == "consumedCapacity") return get(d, x, c, out.consumedCapacity);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p,
          DeviceAllocationConfiguration& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "source") return get(d, x, c, out.source);
    if (k == "requests") return get(d, x, c, out.requests);
    if (k == "opaque") return get(d, x, c, out.opaque);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, DeviceAllocationResult& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "results") return get(d, x, c, out.results);
    if (k == "config") return get(d, x, c, out.config);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, AllocationResult& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "devices") return get(d, x, c, out.devices);
    if (k == "nodeSelector") return get(d, x, c, out.nodeSelector);
    if (k == "allocationTimestamp") return get_time(d, x, c, out.allocationTimestamp);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p,
          ResourceClaimConsumerReference& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "apiGroup") return get(d, x, c, out.apiGroup);
    if (k == "resource") return get(d, x, c, out.resource);
    if (k == "name") return get(d, x, c, out.name);
    if (k == "uid") return get(d, x, c, out.uid);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, NetworkDeviceData& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "interfaceName") return get(d, x, c, out.interfaceName);
    if (k == "ips") return get(d, x, c, out.ips);
    if (k == "hardwareAddress") return get(d, x, c, out.hardwareAddress);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, AllocatedDeviceStatus& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "driver") return get(d, x, c, out.driver);
    if (k == "pool") return get(d, x, c, out.pool);
    if (k == "device") return get(d, x, c, out.device);
    if (k == "shareID") return get(d, x, c, out.shareID);
    if (k == "conditions") return get(d, x, c, out.conditions);
    if (k == "data") return get(d, x, c, out.data);
    if (k == "networkData") return get(d, x, c, out.networkData);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, ResourceClaimStatus& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "allocation") return get(d, x, c, out.allocation);
    if (k == "reservedFor") return get(d, x, c, out.reservedFor);
    if (k == "devices") return get(d, x, c, out.devices);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, ResourceClaimTemplateSpec& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "metadata") return get(d, x, c, out.metadata);
    if (k == "spec") return get(d, x, c, out.spec);
    return false;
  });
}

// ---------------------------------------------------------------- kinds

namespace {
bool is_type_meta(std::string_view k) { return k == "apiVersion" || k == "kind"; }
}  // namespace

void read_object(Decoder& d, const JsonValue& v, DeviceClass& out) {
  fields(d, v, "", [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (is_type_meta(k)) return true;
    if (k == "metadata") return get(d, x, c, out.metadata);
    if (k == "spec") return get(d, x, c, out.spec);
    return false;
  });
}

void read_object(Decoder& d, const JsonValue& v, ResourceSlice& out) {
  fields(d, v, "", [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (is_type_meta(k)) return true;
    if (k == "metadata") return get(d, x, c, out.metadata);
    if (k == "spec") return get(d, x, c, out.spec);
    return false;
  });
}

void read_object(Decoder& d, const JsonValue& v, ResourceClaim& out) {
  fields(d, v, "", [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (is_type_meta(k)) return true;
    if (k == "metadata") return get(d, x, c, out.metadata);
    if (k == "spec") return get(d, x, c, out.spec);
    if (k == "status") return get(d, x, c, out.status);
    return false;
  });
}

void read_object(Decoder& d, const JsonValue& v, ResourceClaimTemplate& out) {
  fields(d, v, "", [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (is_type_meta(k)) return true;
    if (k == "metadata") return get(d, x, c, out.metadata);
    if (k == "spec") return get(d, x, c, out.spec);
    return false;
  });
}

}  // namespace draplane::api::internal
