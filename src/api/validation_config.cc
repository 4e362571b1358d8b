// Validation of core/v1 ConfigMap, Secret, ServiceAccount, Service and
// PersistentVolumeClaim (upstream pkg/apis/core/validation: ValidateConfigMap,
// ValidateSecret, ValidateServiceAccount, ValidateService and
// ValidatePersistentVolumeClaim, with their Update forms), paths and messages
// as upstream's.
#include <algorithm>
#include <array>
#include <set>

#include "api/validation_core.h"
#include "common/base64.h"

namespace draplane::api {
namespace {

constexpr int64_t kMaxSecretSize = 1024 * 1024;  // core.MaxSecretSize, also ConfigMaps'
constexpr const char* kImmutableWhenSet = "field is immutable when `immutable` is set";

// validation.IsConfigMapKey.
std::vector<std::string> config_key_errors(std::string_view key) {
  std::vector<std::string> out;
  if (key.size() > 253) out.push_back("must be no more than 253 characters");
  bool chars_ok = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.';
  });
  if (!chars_ok) {
    out.push_back(
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or "
        "'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')");
  }
  if (key == ".") {
    out.push_back("must not be '.'");
  } else if (key == "..") {
    out.push_back("must not be '..'");
  } else if (key.starts_with("..")) {
    out.push_back("must not start with '..'");
  }
  return out;
}

void check_config_keys(const std::map<std::string, std::string>& m, const FieldPath& path, FieldErrorList& errs) {
  for (const auto& [key, value] : m) {
    for (std::string& msg : config_key_errors(key)) errs.push_back(field_invalid(path.key(key), key, std::move(msg)));
  }
}

// The bytes of base64 text `value` at data[key]; an error when it is not base64
// (kube-apiserver fails such a body while decoding it: a 400 there, a field error here).
int64_t decoded_size(const std::string& value, const FieldPath& path, FieldErrorList& errs) {
  auto bytes = common::base64_decode(value);
  if (!bytes.has_value()) {
    errs.push_back(field_invalid(path, BadValue(), bytes.error().message()));
    return 0;
  }
  return static_cast<int64_t>(bytes->size());
}

// The `immutable` rule of ConfigMaps and Secrets: once set, the flag and the data stay.
template <typename T>
void check_immutable(const T& obj, const T& old, FieldErrorList& errs) {
  if (!old.immutable.value_or(false)) return;
  if (!obj.immutable.value_or(false)) errs.push_back(field_forbidden(FieldPath("immutable"), kImmutableWhenSet));
  if (obj.data != old.data) errs.push_back(field_forbidden(FieldPath("data"), kImmutableWhenSet));
  if constexpr (std::is_same_v<T, ConfigMap>) {
    if (obj.binaryData != old.binaryData) errs.push_back(field_forbidden(FieldPath("binaryData"), kImmutableWhenSet));
  }
}

// The keys a Secret of a known type must carry (ValidateSecret's switch).
void check_secret_type(const Secret& s, FieldErrorList& errs) {
  FieldPath data("data");
  auto require = [&](const char* key) {
    if (!s.data.contains(key)) errs.push_back(field_required(data.key(key)));
  };
  if (s.type == "kubernetes.io/service-account-token") {
    auto it = s.metadata.annotations.find("kubernetes.io/service-account.name");
    if (it == s.metadata.annotations.end() || it->second.empty()) {
      errs.push_back(field_required(FieldPath("metadata").child("annotations").key("kubernetes.io/service-account.name")));
    }
  } else if (s.type == "kubernetes.io/dockercfg") {
    require(".dockercfg");
  } else if (s.type == "kubernetes.io/dockerconfigjson") {
    require(".dockerconfigjson");
  } else if (s.type == "kubernetes.io/basic-auth") {
    if (!s.data.contains("username") && !s.data.contains("password")) {
      errs.push_back(field_required(data.key("username")));
      errs.push_back(field_required(data.key("password")));
    }
  } else if (s.type == "kubernetes.io/ssh-auth") {
    if (auto it = s.data.find("ssh-privatekey"); it == s.data.end() || it->second.empty()) {
      errs.push_back(field_required(data.key("ssh-privatekey")));
    }
  } else if (s.type == "kubernetes.io/tls") {
    require("tls.crt");
    require("tls.key");
  }
}

// ValidateServiceName: a DNS-1035 label.
std::vector<std::string> service_name_errors(std::string_view name) { return vcore::dns1035_label_errors(name); }

bool valid_port_num(int64_t port) { return port >= 1 && port <= 65535; }
constexpr const char* kPortRange = "must be between 1 and 65535, inclusive";

void check_service_port(const ServicePort& p, bool require_name, const FieldPath& path, FieldErrorList& errs) {
  if (require_name && p.name.empty()) {
    errs.push_back(field_required(path.child("name")));
  } else if (!p.name.empty()) {
    append_errors(errs, vcore::validate_dns_label(p.name, path.child("name")));
  }
  if (!valid_port_num(p.port)) errs.push_back(field_invalid(path.child("port"), p.port, kPortRange));
  if (p.protocol.empty()) {
    errs.push_back(field_required(path.child("protocol")));
  } else if (p.protocol != "TCP" && p.protocol != "UDP" && p.protocol != "SCTP") {
    errs.push_back(field_not_supported(path.child("protocol"), p.protocol, {"SCTP", "TCP", "UDP"}));
  }
  const std::string& tp = p.targetPort.text;
  if (!tp.empty() && tp.front() != '"') {
    int64_t n = 0;
    bool digits = std::all_of(tp.begin(), tp.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (digits && tp.size() < 10) n = std::stoll(tp);
    if (!valid_port_num(n)) errs.push_back(field_invalid(path.child("targetPort"), BadValue::raw(tp), kPortRange));
  } else if (tp.size() <= 2) {
    errs.push_back(field_required(path.child("targetPort")));
  }
}

}  // namespace

FieldErrorList validate_config_map(const ConfigMap& c) {
  FieldErrorList errs =
      vcore::validate_object_meta(c.metadata, /*namespaced=*/true, vcore::name_is_dns_subdomain, FieldPath("metadata"));
  check_config_keys(c.data, FieldPath("data"), errs);
  int64_t total = 0;
  for (const auto& [key, value] : c.data) {
    if (c.binaryData.contains(key)) {
      errs.push_back(field_invalid(FieldPath("data").key(key), key, "duplicate of key present in binaryData"));
    }
    total += static_cast<int64_t>(value.size());
  }
  check_config_keys(c.binaryData, FieldPath("binaryData"), errs);
  for (const auto& [key, value] : c.binaryData) total += decoded_size(value, FieldPath("binaryData").key(key), errs);
  if (total > kMaxSecretSize) errs.push_back(field_too_long(FieldPath(""), kMaxSecretSize));
  return errs;
}

FieldErrorList validate_config_map_update(const ConfigMap& c, const ConfigMap& old) {
  FieldErrorList errs = vcore::validate_object_meta_update(c.metadata, old.metadata, FieldPath("metadata"));
  check_immutable(c, old, errs);
  append_errors(errs, validate_config_map(c));
  return errs;
}

FieldErrorList validate_secret(const Secret& s) {
  FieldErrorList errs =
      vcore::validate_object_meta(s.metadata, /*namespaced=*/true, vcore::name_is_dns_subdomain, FieldPath("metadata"));
  check_config_keys(s.data, FieldPath("data"), errs);
  int64_t total = 0;
  for (const auto& [key, value] : s.data) total += decoded_size(value, FieldPath("data").key(key), errs);
  if (total > kMaxSecretSize) errs.push_back(field_too_long(FieldPath("data"), kMaxSecretSize));
  check_secret_type(s, errs);
  return errs;
}

FieldErrorList validate_secret_update(const Secret& s, const Secret& old) {
  FieldErrorList errs = vcore::validate_object_meta_update(s.metadata, old.metadata, FieldPath("metadata"));
  if (s.type != old.type) errs.push_back(field_invalid(FieldPath("type"), s.type, "field is immutable"));
  check_immutable(s, old, errs);
  append_errors(errs, validate_secret(s));
  return errs;
}

FieldErrorList validate_service_account(const ServiceAccount& sa) {
  return vcore::validate_object_meta(sa.metadata, /*namespaced=*/true, vcore::name_is_dns_subdomain,
                                     FieldPath("metadata"));
}

FieldErrorList validate_service(const Service& s) {
  FieldErrorList errs =
      vcore::validate_object_meta(s.metadata, /*namespaced=*/true, service_name_errors, FieldPath("metadata"));
  FieldPath spec("spec");
  const ServiceSpec& sp = s.spec;
  static const std::array<const char*, 4> kTypes = {"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"};
  if (std::find(kTypes.begin(), kTypes.end(), sp.type) == kTypes.end()) {
    errs.push_back(field_not_supported(spec.child("type"), sp.type, {kTypes.begin(), kTypes.end()}));
  }
  bool headless = sp.clusterIP == "None";
  if (sp.ports.empty() && sp.type != "ExternalName" && !headless) errs.push_back(field_required(spec.child("ports")));
  std::set<std::string> names;
  for (size_t i = 0; i < sp.ports.size(); ++i) {
    FieldPath p = spec.child("ports").index(i);
    check_service_port(sp.ports[i], sp.ports.size() > 1, p, errs);
    if (!sp.ports[i].name.empty() && !names.insert(sp.ports[i].name).second) {
      errs.push_back(field_duplicate(p.child("name"), sp.ports[i].name));
    }
  }
  append_errors(errs, vcore::validate_labels(sp.selector, spec.child("selector")));
  if (sp.sessionAffinity != "None" && sp.sessionAffinity != "ClientIP") {
    errs.push_back(field_not_supported(spec.child("sessionAffinity"), sp.sessionAffinity, {"ClientIP", "None"}));
  }
  return errs;
}

FieldErrorList validate_persistent_volume_claim(const PersistentVolumeClaim& c) {
  FieldErrorList errs =
      vcore::validate_object_meta(c.metadata, /*namespaced=*/true, vcore::name_is_dns_subdomain, FieldPath("metadata"));
  FieldPath spec("spec");
  static const std::array<const char*, 4> kModes = {"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce",
                                                    "ReadWriteOncePod"};
  if (c.spec.accessModes.empty()) {
    errs.push_back(field_required(spec.child("accessModes"), "at least 1 access mode is required"));
  }
  for (const std::string& m : c.spec.accessModes) {
    if (std::find(kModes.begin(), kModes.end(), m) == kModes.end()) {
      errs.push_back(field_not_supported(spec.child("accessModes"), m, {kModes.begin(), kModes.end()}));
    }
  }
  auto storage = c.spec.resources.requests.find("storage");
  FieldPath storage_path = spec.child("resources").key("storage");
  if (storage == c.spec.resources.requests.end()) {
    errs.push_back(field_required(storage_path));
  } else if (storage->second.sign() <= 0) {
    errs.push_back(field_invalid(storage_path, storage->second.to_string(), "must be greater than zero"));
  }
  if (c.spec.volumeMode && *c.spec.volumeMode != "Block" && *c.spec.volumeMode != "Filesystem") {
    errs.push_back(field_not_supported(spec.child("volumeMode"), *c.spec.volumeMode, {"Block", "Filesystem"}));
  }
  return errs;
}

FieldErrorList validate_persistent_volume_claim_update(const PersistentVolumeClaim& c,
                                                       const PersistentVolumeClaim& old) {
  FieldErrorList errs = vcore::validate_object_meta_update(c.metadata, old.metadata, FieldPath("metadata"));
  append_errors(errs, validate_persistent_volume_claim(c));
  // Only the storage request may change (expansion); a volume is bound once.
  PersistentVolumeClaimSpec a = c.spec, b = old.spec;
  a.resources.requests = b.resources.requests;
  if (b.volumeName.empty()) a.volumeName = b.volumeName;
  if (!(a == b)) {
    errs.push_back(field_forbidden(FieldPath("spec"),
                                   "spec is immutable after creation except resources.requests and "
                                   "volumeAttributesClassName for bound claims"));
  }
  return errs;
}

}  // namespace draplane::api
