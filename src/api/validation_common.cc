// resource.k8s.io building blocks shared by classes, slices and claims: driver, pool,
// device and request names, qualified names, UIDs, opaque parameters, CEL selectors,
// device taints and tolerations, binding conditions, request references.
#include <rapidjson/document.h>

#include <set>
#include <string>

#include "api/validation_core.h"

namespace draplane::api::vcore {
namespace {

const std::vector<std::string>& device_taint_effects() {
  static const std::vector<std::string> kEffects = {"NoExecute", "NoSchedule", "None"};  // sorted
  return kEffects;
}

bool is_device_taint_effect(std::string_view e) {
  return e == "NoExecute" || e == "NoSchedule" || e == "None";
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Go's %#v of a []string.
std::string go_string_slice(const std::vector<std::string>& v) {
  if (v.empty()) return "[]string(nil)";
  std::string s = "[]string{";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) s += ", ";
    s += go_quote(v[i]);
  }
  return s + "}";
}

}  // namespace

FieldErrorList validate_driver_name(std::string_view driver, const FieldPath& path) {
  FieldErrorList errs;
  if (driver.empty()) {
    errs.push_back(field_required(path));
    return errs;
  }
  if (driver.size() > 63) errs.push_back(field_too_long(path, 63));
  for (const auto& m : dns1123_subdomain_errors(lower(driver))) errs.push_back(field_invalid(path, driver, m));
  return errs;
}

FieldErrorList validate_pool_name(std::string_view pool, const FieldPath& path) {
  FieldErrorList errs;
  if (pool.empty()) {
    errs.push_back(field_required(path));
    return errs;
  }
  if (pool.size() > static_cast<size_t>(kPoolNameMaxLength)) errs.push_back(field_too_long(path, kPoolNameMaxLength));
  size_t start = 0;
  while (true) {
    size_t slash = pool.find('/', start);
    std::string_view part = pool.substr(start, slash == std::string_view::npos ? pool.npos : slash - start);
    append_errors(errs, validate_dns_subdomain(part, path));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return errs;
}

FieldErrorList validate_device_name(std::string_view device, const FieldPath& path) {
  return validate_dns_label(device, path);
}

FieldErrorList validate_request_name(std::string_view name, const FieldPath& path) {
  return validate_dns_label(name, path);
}

FieldErrorList validate_device_class_name(std::string_view name, const FieldPath& path) {
  if (name.empty()) return {field_required(path)};
  return validate_dns_subdomain(name, path);
}

FieldErrorList validate_c_identifier(std::string_view id, const FieldPath& path) {
  FieldErrorList errs;
  if (id.size() > static_cast<size_t>(kDeviceMaxIDLength)) errs.push_back(field_too_long(path, kDeviceMaxIDLength));
  for (const auto& m : c_identifier_errors(id)) errs.push_back(field_invalid(path, id, m));
  return errs;
}

FieldErrorList validate_qualified_name(std::string_view name, const FieldPath& path) {
  FieldErrorList errs;
  size_t slash = name.find('/');
  if (slash == std::string_view::npos) return validate_c_identifier(name, path);
  if (name.find('/', slash + 1) != std::string_view::npos) {
    errs.push_back(field_invalid(path, name, "must not contain more than one slash"));
    return errs;
  }
  std::string_view domain = name.substr(0, slash), id = name.substr(slash + 1);
  if (domain.empty()) {
    errs.push_back(field_invalid(path, "", "the domain must not be empty"));
  } else {
    append_errors(errs, validate_driver_name(domain, path));
  }
  if (id.empty()) {
    errs.push_back(field_invalid(path, "", "the name must not be empty"));
  } else {
    append_errors(errs, validate_c_identifier(id, path));
  }
  return errs;
}

FieldErrorList validate_fully_qualified_name(std::string_view name, const FieldPath& path) {
  FieldErrorList errs = validate_qualified_name(name, path);
  if (name.find('/') == std::string_view::npos) {
    errs.push_back(field_invalid(path, name, "a fully qualified name must be a domain and a name separated by a slash"));
  }
  return errs;
}

FieldErrorList validate_uid(std::string_view uid, const FieldPath& path) {
  if (is_normalized_uuid(uid)) return {};
  // google/uuid.Validate accepts 36 (plain), 38 ({...}), 45 (urn:uuid:) and 32 (hex).
  size_t n = uid.size();
  if (n != 36 && n != 38 && n != 45 && n != 32) {
    return {field_invalid(path, uid, "error validating uid: invalid UUID length: " + std::to_string(n))};
  }
  if (n == 36) {
    bool hex_ok = true;
    for (size_t i = 0; i < n; ++i) {
      char c = uid[i];
      bool dash = (i == 8 || i == 13 || i == 18 || i == 23);
      if (dash ? c != '-' : !std::isxdigit(static_cast<unsigned char>(c))) hex_ok = false;
    }
    if (hex_ok) {
      return {field_invalid(path, uid,
                            "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` "
                            "with lowercase hexadecimal characters")};
    }
    return {field_invalid(path, uid, "error validating uid: invalid UUID format")};
  }
  return {field_invalid(path, uid,
                        "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with "
                        "lowercase hexadecimal characters")};
}

FieldErrorList validate_raw_json_object(const RawJson& raw, const FieldPath& path, bool stored, int max_length) {
  if (raw.empty()) return {field_required(path)};
  if (!stored && raw.text.size() > static_cast<size_t>(max_length)) return {field_too_long(path, max_length)};
  rapidjson::Document doc;
  doc.Parse(raw.text.data(), raw.text.size());
  if (doc.HasParseError()) {
    return {field_invalid(path, "<value omitted>", "error parsing data as JSON: invalid character in input")};
  }
  if (doc.IsNull()) return {field_required(path)};
  if (!doc.IsObject()) return {field_invalid(path, "<value omitted>", "must be a valid JSON object")};
  return {};
}

FieldErrorList validate_opaque_config(const std::optional<OpaqueDeviceConfiguration>& opaque,
                                      const FieldPath& config_path, bool stored) {
  if (!opaque) return {field_required(config_path.child("opaque"))};
  FieldPath p = config_path.child("opaque");
  FieldErrorList errs = validate_driver_name(opaque->driver, p.child("driver"));
  append_errors(errs, validate_raw_json_object(opaque->parameters, p.child("parameters"), stored,
                                               kOpaqueParametersMaxLength));
  return errs;
}

FieldErrorList validate_selectors(const std::vector<DeviceSelector>& selectors, const FieldPath& path,
                                  const ValidationOptions& options, bool stored) {
  if (selectors.size() > static_cast<size_t>(kDeviceSelectorsMaxSize)) {
    return {field_too_many(path, static_cast<int64_t>(selectors.size()), kDeviceSelectorsMaxSize)};
  }
  FieldErrorList errs;
  for (size_t i = 0; i < selectors.size(); ++i) {
    FieldPath sp = path.index(i);
    if (!selectors[i].cel) {
      errs.push_back(field_required(sp.child("cel")));
      continue;
    }
    if (stored) continue;  // a stored expression was valid when it was stored
    FieldPath ep = sp.child("cel").child("expression");
    const std::string& expr = selectors[i].cel->expression;
    if (expr.size() > static_cast<size_t>(kCELSelectorExpressionMaxLength)) {
      errs.push_back(field_too_long(ep, kCELSelectorExpressionMaxLength));
      continue;
    }
    if (!options.selector_checker) continue;
    Status st = options.selector_checker(expr);
    if (st.ok()) continue;
    switch (st.code()) {
      case Code::kInvalid: errs.push_back(field_invalid(ep, expr, st.message())); break;
      case Code::kForbidden: errs.push_back(field_forbidden(ep, "too complex, exceeds cost limit")); break;
      default: errs.push_back(field_internal(ep, st.message())); break;
    }
  }
  return errs;
}

FieldErrorList validate_device_toleration(const DeviceToleration& t, const FieldPath& path) {
  FieldErrorList errs;
  if (!t.key.empty()) append_errors(errs, validate_label_name(t.key, path.child("key")));
  if (t.operator_ == "Exists") {
    if (!t.value.empty()) {
      errs.push_back(field_invalid(path.child("value"), t.value, "must be empty for operator `Exists`"));
    }
  } else if (t.operator_ == "Equal") {
    append_errors(errs, validate_label_value(t.value, path.child("value")));
  } else if (t.operator_.empty()) {
    errs.push_back(field_required(path.child("operator")));
  } else {
    errs.push_back(field_not_supported(path.child("operator"), t.operator_, {"Equal", "Exists"}));
  }
  if (!t.effect.empty() && !is_device_taint_effect(t.effect)) {
    errs.push_back(field_not_supported(path.child("effect"), t.effect, device_taint_effects()));
  }
  return errs;
}

FieldErrorList validate_device_taint(const DeviceTaint& t, const FieldPath& path, const DeviceTaint* old) {
  FieldErrorList errs = validate_label_name(t.key, path.child("key"));
  if (!t.value.empty()) append_errors(errs, validate_label_value(t.value, path.child("value")));
  if (old != nullptr && old->effect == t.effect) {
    // unchanged: valid when stored
  } else if (t.effect.empty()) {
    errs.push_back(field_required(path.child("effect")));
  } else if (!is_device_taint_effect(t.effect)) {
    errs.push_back(field_not_supported(path.child("effect"), t.effect, device_taint_effects()));
  }
  return errs;
}

FieldErrorList validate_binding_parameters(const std::vector<std::string>& conditions,
                                           const std::vector<std::string>& failure_conditions,
                                           const FieldPath& path) {
  FieldErrorList errs;
  FieldPath cp = path.child("bindingConditions"), fp = path.child("bindingFailureConditions");
  auto check_list = [&](const std::vector<std::string>& list, const FieldPath& p, int max) {
    if (list.size() > static_cast<size_t>(max)) {
      errs.push_back(field_too_many(p, static_cast<int64_t>(list.size()), max));
      return;
    }
    for (size_t i = 0; i < list.size(); ++i) append_errors(errs, validate_label_name(list[i], p.index(i)));
  };
  check_list(conditions, cp, kBindingConditionsMaxSize);
  check_list(failure_conditions, fp, kBindingFailureConditionsMaxSize);
  std::set<std::string> seen(conditions.begin(), conditions.end()), cond_set;
  for (size_t i = 0; i < conditions.size(); ++i) {
    if (!cond_set.insert(conditions[i]).second) errs.push_back(field_duplicate(cp.index(i), conditions[i]));
  }
  std::set<std::string> fail_set;
  for (size_t i = 0; i < failure_conditions.size(); ++i) {
    const auto& c = failure_conditions[i];
    if (!fail_set.insert(c).second) errs.push_back(field_duplicate(fp.index(i), c));
    if (seen.count(c)) {
      errs.push_back(field_invalid(fp.index(i), c, "bindingFailureConditions must not overlap with bindingConditions"));
    }
  }
  if (conditions.empty() && !failure_conditions.empty()) {
    errs.push_back(field_invalid(cp, BadValue::raw(go_string_slice(conditions)),
                                 "bindingConditions are required to use bindingFailureConditions"));
  }
  if (failure_conditions.empty() && !conditions.empty()) {
    errs.push_back(field_invalid(fp, BadValue::raw(go_string_slice(failure_conditions)),
                                 "bindingFailureConditions are required to use bindingConditions"));
  }
  return errs;
}

bool RequestNames::has(std::string_view reference) const {
  size_t slash = reference.find('/');
  std::string_view first = reference.substr(0, slash);
  auto it = names.find(std::string(first));
  if (it == names.end()) return false;
  if (slash == std::string_view::npos) return true;
  std::string_view second = reference.substr(slash + 1);
  if (second.find('/') != std::string_view::npos) return false;
  for (const auto& s : it->second) {
    if (s == second) return true;
  }
  return false;
}

RequestNames gather_request_names(const DeviceClaim& claim) {
  RequestNames r;
  for (const auto& req : claim.requests) {
    auto& subs = r.names[req.name];
    for (const auto& sub : req.firstAvailable) subs.push_back(sub.name);
  }
  return r;
}

FieldErrorList validate_request_name_ref(std::string_view name, const FieldPath& path, const RequestNames& names) {
  constexpr const char* kMsg =
      "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'";
  std::vector<std::string_view> segments;
  size_t start = 0;
  while (true) {
    size_t slash = name.find('/', start);
    segments.push_back(name.substr(start, slash == std::string_view::npos ? name.npos : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (segments.size() > 2) return {field_invalid(path, name, kMsg)};
  FieldErrorList errs;
  for (auto seg : segments) append_errors(errs, validate_request_name(seg, path));
  if (!names.has(name)) errs.push_back(field_invalid(path, name, kMsg));
  return errs;
}

FieldErrorList validate_request_refs(const std::vector<std::string>& refs, const FieldPath& path,
                                     const RequestNames& names) {
  if (refs.size() > static_cast<size_t>(kDeviceRequestsMaxSize)) {
    return {field_too_many(path, static_cast<int64_t>(refs.size()), kDeviceRequestsMaxSize)};
  }
  FieldErrorList errs;
  for (size_t i = 0; i < refs.size(); ++i) append_errors(errs, validate_request_name_ref(refs[i], path.index(i), names));
  std::set<std::string> seen;
  for (size_t i = 0; i < refs.size(); ++i) {
    if (!seen.insert(refs[i]).second) errs.push_back(field_duplicate(path.index(i), refs[i]));
  }
  return errs;
}

}  // namespace draplane::api::vcore
