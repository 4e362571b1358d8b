// resource.k8s.io version conversion (v1beta1, v1beta2 -> v1) and the migration
// hints for removed versions and kinds.
#include "api/conversion.h"

#include <array>
#include <cctype>

#include "api/internal/conversion.h"

namespace draplane::api {
namespace internal {
namespace {

constexpr std::string_view kGroupPrefix = "resource.k8s.io/";
constexpr std::string_view kV1 = "resource.k8s.io/v1";

// The v1beta1 request fields that v1 moved under `exactly`, in v1 order.
constexpr std::array<std::string_view, 7> kExactFields = {
    "deviceClassName", "selectors", "allocationMode", "count",
    "adminAccess",     "tolerations", "capacity"};

JsonValue* member(JsonValue* v, std::string_view key) {
  return v != nullptr && v->is_object() ? v->find(key) : nullptr;
}

void convert_claim_spec_v1beta1(JsonValue* spec) {
  JsonValue* requests = member(member(spec, "devices"), "requests");
  if (requests == nullptr || !requests->is_array()) return;
  for (JsonValue& req : requests->items) {
    if (!req.is_object()) continue;
    const JsonValue* klass = req.find("deviceClassName");
    bool has_class = klass != nullptr && klass->is_string() && !klass->text.empty();
    bool has_first = req.find("firstAvailable") != nullptr;
    bool has_exact = false;
    for (std::string_view f : kExactFields) has_exact = has_exact || req.find(f) != nullptr;
    // Upstream moves the fields when deviceClassName is set; draplane also
    // moves them when no firstAvailable is given, so validation can name the
    // missing exactly.deviceClassName instead of losing e.g. count.
    if (!(has_class || (has_exact && !has_first)) || req.find("exactly") != nullptr) continue;
    JsonValue exactly = JsonValue::object();
    for (std::string_view f : kExactFields) {
      if (const JsonValue* x = req.find(f)) {
        exactly.add(std::string(f), *x);
        req.erase(f);
      }
    }
    // Keep "name" first, then exactly, then anything else (firstAvailable, unknowns).
    JsonValue out = JsonValue::object();
    if (const JsonValue* name = req.find("name")) out.add("name", *name);
    out.add("exactly", std::move(exactly));
    for (auto& [k, x] : req.members) {
      if (k != "name") out.add(k, std::move(x));
    }
    req = std::move(out);
  }
}

void convert_slice_spec_v1beta1(JsonValue* spec) {
  if (spec == nullptr || !spec->is_object()) return;
  if (const JsonValue* n = spec->find("nodeName"); n && n->is_string() && n->text.empty()) {
    spec->erase("nodeName");
  }
  if (const JsonValue* a = spec->find("allNodes"); a && a->type == JsonValue::Type::kBool && !a->boolean) {
    spec->erase("allNodes");
  }
  JsonValue* devices = spec->find("devices");
  if (devices == nullptr || !devices->is_array()) return;
  for (JsonValue& dev : devices->items) {
    if (!dev.is_object()) continue;
    JsonValue* basic = dev.find("basic");
    if (basic == nullptr || !basic->is_object()) continue;  // typed decode reports it
    JsonValue out = JsonValue::object();
    for (auto& [k, x] : dev.members) {
      if (k == "basic") {
        for (auto& [bk, bx] : basic->members) out.add(bk, std::move(bx));
      } else {
        out.add(k, std::move(x));
      }
    }
    dev = std::move(out);
  }
}

std::string str_at(const JsonValue& obj, std::string_view a, std::string_view b = {}) {
  const JsonValue* v = obj.is_object() ? obj.find(a) : nullptr;
  if (v != nullptr && !b.empty()) v = v->is_object() ? v->find(b) : nullptr;
  return v != nullptr && v->is_string() ? v->text : std::string();
}

// Claim-spec hints for old shapes (v1alpha2 resourceClassName or flat requests).
std::string claim_spec_hint(const JsonValue& spec, const std::string& at) {
  std::string hint;
  std::string klass = str_at(spec, "resourceClassName");
  if (!klass.empty()) {
    hint += "; " + at + "resourceClassName is gone: write " + at +
            "devices.requests: [{name: <request>, exactly: {deviceClassName: " + klass + "}}]";
  }
  if (spec.is_object() && spec.find("parametersRef") != nullptr) {
    hint += "; " + at + "parametersRef is gone: put the parameters inline as " + at +
            "devices.config[].opaque {driver, parameters}";
  }
  if (spec.is_object() && spec.find("allocationMode") != nullptr) {
    hint += "; remove " + at +
            "allocationMode (WaitForFirstConsumer/Immediate): claims are allocated when a pod "
            "using them is scheduled";
  }
  const JsonValue* requests = spec.is_object() ? spec.find("devices") : nullptr;
  requests = requests && requests->is_object() ? requests->find("requests") : nullptr;
  if (requests != nullptr && requests->is_array()) {
    for (size_t i = 0; i < requests->items.size(); ++i) {
      const JsonValue& r = requests->items[i];
      std::string cls = str_at(r, "deviceClassName");
      std::string req = at + "devices.requests[" + std::to_string(i) + "]";
      if (!cls.empty() && r.find("exactly") == nullptr) {
        hint += "; move the request fields under exactly: " + req + ".exactly.deviceClassName: " + cls;
      }
      if (str_at(r, "name").empty()) {
        hint += "; name the request (required in v1, a DNS label): " + req + ".name: " +
                (requests->items.size() == 1 ? std::string("gpu") : "gpu-" + std::to_string(i));
      }
    }
  }
  return hint;
}

// Selectors of an old DeviceClass that read fields a v1 device does not have
// (`device.memory`): a device has driver, attributes, capacity and
// allowMultipleAllocations only, its attributes and capacities in the
// driver's domain. Textual (the api layer has no CEL).
namespace {
std::string device_class_selector_hint(const JsonValue& obj) {
  std::string hint;
  const JsonValue* spec = obj.find("spec");
  const JsonValue* sels = spec && spec->is_object() ? spec->find("selectors") : nullptr;
  if (sels == nullptr || !sels->is_array()) return hint;
  for (size_t i = 0; i < sels->items.size(); ++i) {
    const JsonValue* cel = sels->items[i].is_object() ? sels->items[i].find("cel") : nullptr;
    std::string expr = cel ? str_at(*cel, "expression") : "";
    const std::string at = "spec.selectors[" + std::to_string(i) + "].cel.expression";
    for (size_t pos = expr.find("device."); pos != std::string::npos; pos = expr.find("device.", pos + 7)) {
      if (pos > 0 && (std::isalnum(static_cast<unsigned char>(expr[pos - 1])) || expr[pos - 1] == '_' || expr[pos - 1] == '.')) continue;
      size_t end = pos + 7;
      while (end < expr.size() && (std::isalnum(static_cast<unsigned char>(expr[end])) || expr[end] == '_')) ++end;
      std::string field = expr.substr(pos + 7, end - pos - 7);
      if (field.empty() || field == "driver" || field == "attributes" || field == "capacity" ||
          field == "allowMultipleAllocations") {
        continue;
      }
      if (field == "memory") {
        hint += "; " + at + ": a device has no memory field: the driver publishes memory as a capacity, "
                "compared as a quantity: device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) > 0 "
                "(with your driver's domain and the amount with its unit)";
      } else {
        hint += "; " + at + ": a device has no " + field + " field (only driver, attributes, capacity, "
                "allowMultipleAllocations): write device.attributes['<driver domain>']." + field +
                " or device.capacity['<driver domain>']." + field;
      }
      break;  // one hint per selector
    }
  }
  return hint;
}
}  // namespace

Status removed_version_error(const JsonValue& obj, std::string_view api_version,
                             std::string_view kind) {
  std::string version(api_version.substr(kGroupPrefix.size()));
  std::string removed_in = version == "v1alpha1" ? "1.27"
                           : version == "v1alpha2" ? "1.31"
                                                   : "1.32";
  std::string msg = std::string(api_version) + " was removed in Kubernetes " + removed_in +
                    ": use apiVersion resource.k8s.io/v1";
  if (kind == "ResourceClaim") {
    msg += claim_spec_hint(obj.find("spec") ? *obj.find("spec") : JsonValue(), "spec.");
  } else if (kind == "ResourceClaimTemplate") {
    const JsonValue* spec = obj.find("spec");
    const JsonValue* inner = spec && spec->is_object() ? spec->find("spec") : nullptr;
    msg += claim_spec_hint(inner ? *inner : JsonValue(), "spec.spec.");
  } else if (kind == "DeviceClass") {
    msg += device_class_selector_hint(obj);
  } else if (kind == "ResourceSlice") {
    msg += "; a ResourceSlice lists spec.driver, spec.pool {name, generation, "
           "resourceSliceCount}, spec.nodeName and spec.devices[] {name, attributes, "
           "capacity} (no namedResources, no basic wrapper)";
  }
  return Status(Code::kBadRequest, msg);
}

Status removed_kind_error(const JsonValue& obj, std::string_view kind) {
  if (kind == "ResourceClass") {
    std::string driver = str_at(obj, "driverName");
    std::string expr = driver.empty() ? "device.driver == \"<driver>\""
                                      : "device.driver == \"" + driver + "\"";
    std::string msg =
        "kind ResourceClass was removed in Kubernetes 1.31: write apiVersion: "
        "resource.k8s.io/v1, kind: DeviceClass, with spec.selectors: [{cel: {expression: '" +
        expr + "'}}] instead of driverName";
    if (obj.find("parametersRef") != nullptr) {
      msg += ", and spec.config: [{opaque: {driver: " + (driver.empty() ? "<driver>" : driver) +
             ", parameters: {...}}}] instead of parametersRef";
    }
    if (obj.find("suitableNodes") != nullptr) {
      msg += "; suitableNodes is gone: devices come from ResourceSlices published per node";
    }
    return Status(Code::kBadRequest, msg);
  }
  if (kind == "ResourceClaimParameters" || kind == "ResourceClassParameters") {
    return Status(Code::kBadRequest,
                  "kind " + std::string(kind) +
                      " (classParameters/claimParameters) was removed in Kubernetes 1.31: put "
                      "vendor parameters inline as spec.devices.config[].opaque {driver, "
                      "parameters} of a resource.k8s.io/v1 ResourceClaim, or spec.config[].opaque "
                      "of a DeviceClass, and device filters as spec.selectors[].cel.expression");
  }
  if (kind == "PodSchedulingContext") {
    return Status(Code::kBadRequest,
                  "kind PodSchedulingContext was removed in Kubernetes 1.31: delete it; the "
                  "scheduler allocates structured-parameter claims itself");
  }
  return Status(Code::kBadRequest,
                "no kind \"" + std::string(kind) + "\" is registered for resource.k8s.io");
}

// v1 -> v1beta1: requests[].exactly{...} flattened into the request, after name.
void convert_claim_spec_to_v1beta1(JsonValue* spec) {
  JsonValue* requests = member(member(spec, "devices"), "requests");
  if (requests == nullptr || !requests->is_array()) return;
  for (JsonValue& req : requests->items) {
    JsonValue* exactly = member(&req, "exactly");
    if (exactly == nullptr) continue;
    JsonValue out = JsonValue::object();
    if (const JsonValue* name = req.find("name")) out.add("name", *name);
    if (exactly->is_object()) {
      for (auto& [k, x] : exactly->members) out.add(k, std::move(x));
    }
    for (auto& [k, x] : req.members) {
      if (k != "name" && k != "exactly") out.add(k, std::move(x));
    }
    req = std::move(out);
  }
}

// v1 -> v1beta1: every device field but name moves under basic.
void convert_slice_spec_to_v1beta1(JsonValue* spec) {
  JsonValue* devices = member(spec, "devices");
  if (devices == nullptr || !devices->is_array()) return;
  for (JsonValue& dev : devices->items) {
    if (!dev.is_object() || dev.find("basic") != nullptr) continue;
    JsonValue out = JsonValue::object();
    JsonValue basic = JsonValue::object();
    for (auto& [k, x] : dev.members) {
      if (k == "name") out.add(k, std::move(x));
      else basic.add(k, std::move(x));
    }
    out.add("basic", std::move(basic));
    dev = std::move(out);
  }
}

// Applies a version step to the claim spec (a template's inner one) or the slice
// spec of `object`; other kinds have nothing to convert.
void convert_spec(JsonValue& object, std::string_view kind, void (*claim_spec)(JsonValue*),
                  void (*slice_spec)(JsonValue*)) {
  if (kind == "ResourceClaim") {
    claim_spec(member(&object, "spec"));
  } else if (kind == "ResourceClaimTemplate") {
    claim_spec(member(member(&object, "spec"), "spec"));
  } else if (kind == "ResourceSlice") {
    slice_spec(member(&object, "spec"));
  }
}

}  // namespace

bool is_removed_resource_kind(std::string_view kind) {
  return kind == "ResourceClass" || kind == "ResourceClaimParameters" || kind == "ResourceClassParameters" ||
         kind == "PodSchedulingContext";
}

Status convert_to_v1(JsonValue& object, std::string_view api_version, std::string_view kind) {
  if (is_removed_resource_kind(kind)) {
    return removed_kind_error(object, kind);
  }
  if (api_version == kV1) return Status();
  if (api_version == "resource.k8s.io/v1alpha1" || api_version == "resource.k8s.io/v1alpha2" ||
      api_version == "resource.k8s.io/v1alpha3") {
    return removed_version_error(object, api_version, kind);
  }
  if (api_version == "resource.k8s.io/v1beta1") {
    convert_spec(object, kind, convert_claim_spec_v1beta1, convert_slice_spec_v1beta1);
  } else if (api_version != "resource.k8s.io/v1beta2") {
    return Status(Code::kBadRequest,
                  "no kind \"" + std::string(kind) + "\" is registered for version \"" +
                      std::string(api_version) +
                      "\": use resource.k8s.io/v1 (v1beta1 and v1beta2 are converted)");
  }
  if (JsonValue* av = object.find("apiVersion")) *av = JsonValue::string(std::string(kV1));
  return Status();
}

Status convert_from_v1(JsonValue& object, std::string_view target_api_version, std::string_view kind) {
  if (target_api_version == "resource.k8s.io/v1beta1") {
    convert_spec(object, kind, convert_claim_spec_to_v1beta1, convert_slice_spec_to_v1beta1);
  } else if (target_api_version != kV1 && target_api_version != "resource.k8s.io/v1beta2") {
    return Status(Code::kBadRequest, "cannot convert " + std::string(kind) + " to \"" +
                                         std::string(target_api_version) +
                                         "\": served versions are resource.k8s.io/v1, v1beta2 and v1beta1");
  }
  if (JsonValue* av = object.find("apiVersion")) {
    *av = JsonValue::string(std::string(target_api_version));
  } else {
    object.members.insert(object.members.begin(),
                          {"apiVersion", JsonValue::string(std::string(target_api_version))});
  }
  return Status();
}

}  // namespace internal

Status check_conversion_target(std::string_view target_api_version) {
  if (target_api_version == kConvertTarget) return Status();
  return invalid_error("cannot convert to \"" + std::string(target_api_version) +
                       "\": the only supported target is " + std::string(kConvertTarget));
}

std::vector<DecodedDocument> convert_stream(std::string_view text) { return decode_stream(text); }

Result<std::string> convert_json(std::string_view json, std::string_view target_api_version) {
  ASSIGN_OR_RETURN(internal::JsonValue object, internal::parse_json(json));
  if (!object.is_object()) {
    return Status(Code::kBadRequest, "expected an object, got " +
                                         std::string(internal::type_name(object.type)));
  }
  std::string kind = internal::str_at(object, "kind");
  std::string from = internal::str_at(object, "apiVersion");
  if (from.empty()) from = std::string(target_api_version);
  if (from != target_api_version) {
    RETURN_IF_ERROR(internal::convert_to_v1(object, from, kind));
  }
  RETURN_IF_ERROR(internal::convert_from_v1(object, target_api_version, kind));
  return internal::to_json_text(object);
}

}  // namespace draplane::api
