#include "node/kubelet_env.h"

#include <rapidjson/document.h>

#include "common/base64.h"

namespace draplane::node {
namespace {

using Json = rapidjson::Value;

std::string str(const Json& v, const char* name) {
  if (!v.IsObject()) return "";
  auto it = v.FindMember(name);
  return it != v.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}
bool optional_ref(const Json& v) {
  if (!v.IsObject()) return false;
  auto it = v.FindMember("optional");
  return it != v.MemberEnd() && it->value.IsBool() && it->value.GetBool();
}

void set(std::vector<std::string>& env, const std::string& name, const std::string& value) {
  for (auto& e : env) {
    if (e.compare(0, name.size() + 1, name + "=") == 0) {
      e = name + "=" + value;
      return;
    }
  }
  env.push_back(name + "=" + value);
}

Status config_error(std::string message) { return Status(Code::kFailedPrecondition, std::move(message)); }

// A C identifier-ish name the kubelet accepts for envFrom keys (IsEnvVarName:
// no "=", not empty); others are skipped, as the kubelet skips them.
bool env_name_ok(const std::string& n) { return !n.empty() && n.find('=') == std::string::npos; }

// The value of "metadata.labels['k']" style paths.
std::optional<std::string> subscript(const std::string& path, const std::string& prefix,
                                     const std::map<std::string, std::string>& m) {
  if (path.rfind(prefix + "['", 0) != 0 || path.size() < prefix.size() + 4 || path.substr(path.size() - 2) != "']") {
    return std::nullopt;
  }
  std::string key = path.substr(prefix.size() + 2, path.size() - prefix.size() - 4);
  auto it = m.find(key);
  return it == m.end() ? "" : it->second;
}

Result<std::string> field_value(const api::Pod& pod, const std::string& path) {
  if (path == "metadata.name") return pod.metadata.name;
  if (path == "metadata.namespace") return pod.metadata.namespace_;
  if (path == "metadata.uid") return pod.metadata.uid;
  if (path == "spec.nodeName") return pod.spec.nodeName;
  if (path == "status.hostIP" || path == "status.hostIPs") return pod.status.hostIP;
  if (path == "status.podIP" || path == "status.podIPs") return pod.status.podIP;
  if (auto v = subscript(path, "metadata.labels", pod.metadata.labels)) return *v;
  if (auto v = subscript(path, "metadata.annotations", pod.metadata.annotations)) return *v;
  if (path == "spec.serviceAccountName" || path == "spec.hostname") {
    rapidjson::Document d;
    d.Parse(pod.spec.extra.text.empty() ? "{}" : pod.spec.extra.text.c_str());
    std::string v = d.HasParseError() ? "" : str(d, path == "spec.hostname" ? "hostname" : "serviceAccountName");
    return v;
  }
  return config_error("unsupported fieldPath: " + path);
}

// A Secret's value: data is base64 (JSON's []byte).
Result<std::string> secret_value(const api::Secret& s, const std::string& key, bool& found) {
  auto it = s.data.find(key);
  found = it != s.data.end();
  if (!found) {
    auto sd = s.stringData.find(key);
    found = sd != s.stringData.end();
    return found ? sd->second : "";
  }
  return common::base64_decode(it->second);
}

class Resolver {
 public:
  Resolver(const api::Pod& pod, const EnvSources& sources) : pod_(pod), sources_(sources) {}

  Result<std::optional<api::ConfigMap>> config_map(const std::string& name, bool optional) {
    ASSIGN_OR_RETURN(auto cm, sources_.config_map(name));
    if (!cm && !optional) return config_error("configmap \"" + name + "\" not found");
    return cm;
  }
  Result<std::optional<api::Secret>> secret(const std::string& name, bool optional) {
    ASSIGN_OR_RETURN(auto s, sources_.secret(name));
    if (!s && !optional) return config_error("secret \"" + name + "\" not found");
    return s;
  }

  Result<void> env_from(const Json& list, std::vector<std::string>& env) {
    if (!list.IsArray()) return {};
    for (const auto& e : list.GetArray()) {
      std::string prefix = str(e, "prefix");
      if (e.HasMember("configMapRef")) {
        const Json& ref = e["configMapRef"];
        ASSIGN_OR_RETURN(auto cm, config_map(str(ref, "name"), optional_ref(ref)));
        if (!cm) continue;
        for (const auto& [k, v] : cm->data) {
          if (env_name_ok(prefix + k)) set(env, prefix + k, v);
        }
      } else if (e.HasMember("secretRef")) {
        const Json& ref = e["secretRef"];
        ASSIGN_OR_RETURN(auto s, secret(str(ref, "name"), optional_ref(ref)));
        if (!s) continue;
        for (const auto& [k, v] : s->data) {
          bool found = false;
          ASSIGN_OR_RETURN(std::string value, secret_value(*s, k, found));
          if (env_name_ok(prefix + k)) set(env, prefix + k, value);
        }
      }
    }
    return {};
  }

  // The value of one env entry's valueFrom; nullopt to leave the variable out.
  Result<std::optional<std::string>> value_from(const Json& from) {
    if (from.HasMember("fieldRef")) {
      ASSIGN_OR_RETURN(std::string v, field_value(pod_, str(from["fieldRef"], "fieldPath")));
      return std::optional<std::string>(v);
    }
    for (const bool is_secret : {false, true}) {
      const char* member = is_secret ? "secretKeyRef" : "configMapKeyRef";
      if (!from.HasMember(member)) continue;
      const Json& ref = from[member];
      const std::string name = str(ref, "name"), key = str(ref, "key");
      const bool optional = optional_ref(ref);
      std::optional<std::string> value;
      if (is_secret) {
        ASSIGN_OR_RETURN(auto s, secret(name, optional));
        if (!s) return value;
        bool found = false;
        ASSIGN_OR_RETURN(std::string v, secret_value(*s, key, found));
        if (found) value = v;
      } else {
        ASSIGN_OR_RETURN(auto cm, config_map(name, optional));
        if (!cm) return value;
        auto it = cm->data.find(key);
        if (it != cm->data.end()) value = it->second;
      }
      if (value || optional) return value;
      return config_error("couldn't find key " + key + " in " + (is_secret ? "Secret " : "ConfigMap ") +
                          pod_.metadata.namespace_ + "/" + name);
    }
    // resourceFieldRef and anything else: not resolved here (docs/compat.md).
    return std::optional<std::string>();
  }

 private:
  const api::Pod& pod_;
  const EnvSources& sources_;
};

}  // namespace

Result<std::vector<std::string>> resolve_container_env(const api::Pod& pod, const api::Container& container,
                                                        const EnvSources& sources) {
  std::vector<std::string> env;
  Resolver r(pod, sources);
  rapidjson::Document extra;
  extra.Parse(container.extra.text.empty() ? "{}" : container.extra.text.c_str());
  if (!extra.HasParseError() && extra.IsObject() && extra.HasMember("envFrom")) {
    RETURN_IF_ERROR(r.env_from(extra["envFrom"], env));
  }
  for (const auto& e : container.env) {
    if (e.valueFrom.empty()) {
      set(env, e.name, e.value);
      continue;
    }
    rapidjson::Document from;
    from.Parse(e.valueFrom.text.c_str());
    if (from.HasParseError() || !from.IsObject()) continue;
    ASSIGN_OR_RETURN(auto v, r.value_from(from));
    if (v) set(env, e.name, *v);
  }
  return env;
}

std::string pod_hostname(const api::Pod& pod) {
  rapidjson::Document d;
  d.Parse(pod.spec.extra.text.empty() ? "{}" : pod.spec.extra.text.c_str());
  std::string h = d.HasParseError() ? "" : str(d, "hostname");
  return h.empty() ? pod.metadata.name : h;
}

}  // namespace draplane::node
