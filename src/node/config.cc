#include "node/config.h"

#include <set>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "node/slices.h"

namespace draplane::node {
namespace {

using rapidjson::Value;

const char* type_name(const Value& v) {
  if (v.IsObject()) return "object";
  if (v.IsArray()) return "array";
  if (v.IsString()) return "string";
  if (v.IsBool()) return "boolean";
  if (v.IsNumber()) return "number";
  return "null";
}

Status wrong_type(const std::string& path, const char* want, const Value& v) {
  return invalid_error(fmt::format("{}: Invalid value: expected {}, got {}", path, want, type_name(v)));
}

Status unknown_fields(const std::string& path, const Value& obj, std::initializer_list<std::string_view> known) {
  for (auto it = obj.MemberBegin(); it != obj.MemberEnd(); ++it) {
    std::string_view name(it->name.GetString(), it->name.GetStringLength());
    bool ok = false;
    for (std::string_view k : known) ok = ok || k == name;
    if (!ok) return invalid_error(fmt::format("{}.{}: unknown field", path, name));
  }
  return {};
}

Result<std::string> get_string(const std::string& path, const Value& v) {
  if (!v.IsString()) return wrong_type(path, "string", v);
  return std::string(v.GetString(), v.GetStringLength());
}

Result<api::Quantity> get_quantity(const std::string& path, const Value& v) {
  api::Quantity q;
  if (v.IsString()) {
    auto r = api::Quantity::parse(std::string_view(v.GetString(), v.GetStringLength()));
    if (!r) return invalid_error(fmt::format("{}: Invalid value: \"{}\": {}", path, v.GetString(), r.error().message()));
    q = *r;
  } else if (v.IsInt64()) {
    q = api::Quantity::from_int(v.GetInt64());
  } else {
    return wrong_type(path, "quantity", v);
  }
  if (q.sign() < 0) return invalid_error(fmt::format("{}: Invalid value: \"{}\": must not be negative", path, q.to_string()));
  return q;
}

Result<MpsConfig> parse_mps(const std::string& path, const Value& v) {
  if (!v.IsObject()) return wrong_type(path, "object", v);
  RETURN_IF_ERROR(unknown_fields(path, v,
                                 {"defaultActiveThreadPercentage", "defaultPinnedDeviceMemoryLimit",
                                  "defaultPerDevicePinnedMemoryLimit"}));
  MpsConfig m;
  if (v.HasMember("defaultActiveThreadPercentage")) {
    const Value& p = v["defaultActiveThreadPercentage"];
    std::string pp = path + ".defaultActiveThreadPercentage";
    if (!p.IsInt64()) return wrong_type(pp, "integer", p);
    if (p.GetInt64() < 0 || p.GetInt64() > 100) {
      return invalid_error(fmt::format("{}: Invalid value: {}: must be between 0 and 100", pp, p.GetInt64()));
    }
    m.default_active_thread_percentage = p.GetInt64();
  }
  if (v.HasMember("defaultPinnedDeviceMemoryLimit")) {
    ASSIGN_OR_RETURN(m.default_pinned_device_memory_limit,
                     get_quantity(path + ".defaultPinnedDeviceMemoryLimit", v["defaultPinnedDeviceMemoryLimit"]));
  }
  if (v.HasMember("defaultPerDevicePinnedMemoryLimit")) {
    const Value& l = v["defaultPerDevicePinnedMemoryLimit"];
    std::string lp = path + ".defaultPerDevicePinnedMemoryLimit";
    if (!l.IsObject()) return wrong_type(lp, "object", l);
    for (auto it = l.MemberBegin(); it != l.MemberEnd(); ++it) {
      std::string key(it->name.GetString(), it->name.GetStringLength());
      if (key.empty()) return invalid_error(lp + ": Invalid value: \"\": keys must be a GPU UUID or index");
      ASSIGN_OR_RETURN(m.default_per_device_pinned_memory_limit[key], get_quantity(lp + "[" + key + "]", it->value));
    }
  }
  return m;
}

Result<Sharing> parse_sharing(const std::string& path, const Value& v, bool mig, ConfigSource source) {
  if (!v.IsObject()) return wrong_type(path, "object", v);
  if (mig) {
    RETURN_IF_ERROR(unknown_fields(path, v, {"strategy", "mpsConfig"}));
  } else {
    RETURN_IF_ERROR(unknown_fields(path, v, {"strategy", "timeSlicingConfig", "mpsConfig"}));
  }
  Sharing s;
  if (!v.HasMember("strategy")) return invalid_error(path + ".strategy: Required value");
  ASSIGN_OR_RETURN(s.strategy, get_string(path + ".strategy", v["strategy"]));
  if (s.strategy != "TimeSlicing" && s.strategy != "MPS") {
    return invalid_error(fmt::format("{}.strategy: Unsupported value: \"{}\": supported values: \"MPS\", \"TimeSlicing\"",
                                     path, s.strategy));
  }
  if (v.HasMember("timeSlicingConfig")) {
    std::string tp = path + ".timeSlicingConfig";
    const Value& t = v["timeSlicingConfig"];
    if (s.strategy != "TimeSlicing") return invalid_error(tp + ": Forbidden: only allowed with strategy TimeSlicing");
    if (!t.IsObject()) return wrong_type(tp, "object", t);
    RETURN_IF_ERROR(unknown_fields(tp, t, {"interval", "replicas"}));
    TimeSlicingConfig ts;
    if (t.HasMember("interval")) {
      ASSIGN_OR_RETURN(ts.interval, get_string(tp + ".interval", t["interval"]));
      if (ts.interval != "Default" && ts.interval != "Short" && ts.interval != "Medium" && ts.interval != "Long") {
        return invalid_error(fmt::format(
            "{}.interval: Unsupported value: \"{}\": supported values: \"Default\", \"Long\", \"Medium\", \"Short\"", tp,
            ts.interval));
      }
    }
    if (t.HasMember("replicas")) {
      const Value& r = t["replicas"];
      if (source != ConfigSource::kClass) return invalid_error(tp + ".replicas: Forbidden: only allowed in DeviceClass config");
      if (!r.IsInt64()) return wrong_type(tp + ".replicas", "integer", r);
      if (r.GetInt64() < 2 || r.GetInt64() > 1024) {
        return invalid_error(fmt::format("{}.replicas: Invalid value: {}: must be between 2 and 1024", tp, r.GetInt64()));
      }
      ts.replicas = r.GetInt64();
    }
    s.time_slicing = ts;
  } else if (s.strategy == "TimeSlicing" && !mig) {
    s.time_slicing = TimeSlicingConfig{};  // upstream default: interval Default
  }
  if (v.HasMember("mpsConfig")) {
    if (s.strategy != "MPS") return invalid_error(path + ".mpsConfig: Forbidden: only allowed with strategy MPS");
    ASSIGN_OR_RETURN(s.mps, parse_mps(path + ".mpsConfig", v["mpsConfig"]));
  } else if (s.strategy == "MPS") {
    s.mps = MpsConfig{};
  }
  return s;
}

bool names_request(const std::vector<std::string>& requests, const std::string& request) {
  if (requests.empty()) return true;
  std::string base = request.substr(0, request.find('/'));
  for (const std::string& r : requests) {
    if (r == request || r == base) return true;
  }
  return false;
}

}  // namespace

Result<DeviceConfig> parse_device_config(std::string_view json, std::string_view path_view, ConfigSource source) {
  std::string path(path_view);
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError()) {
    return invalid_error(fmt::format("{}: Invalid value: not JSON: {} at offset {}", path,
                                     rapidjson::GetParseError_En(doc.GetParseError()), doc.GetErrorOffset()));
  }
  if (!doc.IsObject()) return wrong_type(path, "object", doc);
  if (!doc.HasMember("apiVersion")) return invalid_error(path + ".apiVersion: Required value");
  ASSIGN_OR_RETURN(std::string api_version, get_string(path + ".apiVersion", doc["apiVersion"]));
  bool seed_alias = api_version == kSeedConfigApiVersion && source == ConfigSource::kClass;
  if (api_version != kConfigApiVersion && !seed_alias) {
    return invalid_error(fmt::format("{}.apiVersion: Unsupported value: \"{}\": supported values: \"{}\"", path,
                                     api_version, kConfigApiVersion));
  }
  if (!doc.HasMember("kind")) return invalid_error(path + ".kind: Required value");
  DeviceConfig c;
  ASSIGN_OR_RETURN(c.kind, get_string(path + ".kind", doc["kind"]));
  if (c.kind != "GpuConfig" && c.kind != "MigDeviceConfig") {
    return invalid_error(fmt::format(
        "{}.kind: Unsupported value: \"{}\": supported values: \"GpuConfig\", \"MigDeviceConfig\"", path, c.kind));
  }
  RETURN_IF_ERROR(unknown_fields(path, doc, {"apiVersion", "kind", "sharing"}));
  if (doc.HasMember("sharing")) {
    ASSIGN_OR_RETURN(c.sharing, parse_sharing(path + ".sharing", doc["sharing"], c.kind == "MigDeviceConfig", source));
  }
  return c;
}

int timeslice_value(std::string_view interval) {
  if (interval == "Short") return 1;
  if (interval == "Medium") return 2;
  if (interval == "Long") return 3;
  return 0;
}

Result<DeviceConfig> effective_config(const api::AllocationResult& allocation, size_t result_index, bool is_mig) {
  const auto& results = allocation.devices.results;
  if (result_index >= results.size()) return internal_error("effective_config: result index out of range");
  const api::DeviceRequestAllocationResult& result = results[result_index];
  std::optional<DeviceConfig> chosen;
  // Two passes: class configs, then claim configs, each in order; the last match wins.
  for (const char* source : {"FromClass", "FromClaim"}) {
    const auto& configs = allocation.devices.config;
    for (size_t i = 0; i < configs.size(); ++i) {
      const api::DeviceAllocationConfiguration& cfg = configs[i];
      if (cfg.source != source || !cfg.opaque || cfg.opaque->driver != kDriverName) continue;
      if (!names_request(cfg.requests, result.request)) continue;
      std::string path = fmt::format("status.allocation.devices.config[{}].opaque.parameters", i);
      ASSIGN_OR_RETURN(DeviceConfig c,
                       parse_device_config(cfg.opaque->parameters.text, path,
                                           cfg.source == "FromClass" ? ConfigSource::kClass : ConfigSource::kClaim));
      chosen = std::move(c);
    }
  }
  if (!chosen) return DeviceConfig{is_mig ? "MigDeviceConfig" : "GpuConfig", std::nullopt};
  if (is_mig && chosen->kind != "MigDeviceConfig") {
    return invalid_error(fmt::format("cannot apply {} to MIG device {}", chosen->kind, result.device));
  }
  if (!is_mig && chosen->kind != "GpuConfig") {
    return invalid_error(fmt::format("cannot apply {} to GPU device {}", chosen->kind, result.device));
  }
  return *chosen;
}

Result<std::optional<DeviceConfig>> class_device_config(const api::DeviceClass& device_class) {
  std::optional<DeviceConfig> last;
  for (size_t i = 0; i < device_class.spec.config.size(); ++i) {
    const auto& opaque = device_class.spec.config[i].opaque;
    if (!opaque || opaque->driver != kDriverName) continue;
    ASSIGN_OR_RETURN(last, parse_device_config(opaque->parameters.text,
                                               fmt::format("spec.config[{}].opaque.parameters", i),
                                               ConfigSource::kClass));
  }
  return last;
}

}  // namespace draplane::node
