// The resources the API server serves: group, version, plural, kind, scope, verbs
// and subresources, as discovery publishes them and as URLs name them, each with
// its kind's strategy (strategy.h).
//
// Thread-safety: immutable tables.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace draplane::server {

class Strategy;

struct ResourceInfo {
  std::string group;     // "" for core
  std::string version;   // "v1"
  std::string resource;  // plural, "resourceclaims"
  std::string singular;  // "resourceclaim"
  std::string kind;      // "ResourceClaim"
  bool namespaced = true;
  std::vector<std::string> short_names;
  std::vector<std::string> subresources;  // "status", "binding"
  // What the generic registry asks of the kind (strategy.h); null: the default
  // strategy (strategy_of).
  const Strategy* strategy = nullptr;
  // Served by conversion (resource.k8s.io v1beta1/v1beta2, events.k8s.io/v1):
  // objects are stored as the storage version's resource under the same keys;
  // request bodies are converted to it on write and responses to this version
  // (api/conversion.h, event_conversion.cc).
  bool converted = false;

  std::string group_version() const { return group.empty() ? version : group + "/" + version; }
  // The apiVersion objects are stored with: the group's v1 for converted
  // versions, except events.k8s.io, whose Events are core/v1 Events.
  std::string storage_group_version() const {
    if (!converted) return group_version();
    return group == "events.k8s.io" ? "v1" : group + "/v1";
  }
  // The store prefix of all objects of this resource: "/registry/<resource>/".
  std::string key_prefix() const { return "/registry/" + resource + "/"; }
  bool has_subresource(std::string_view s) const;
};

// The ResourceInfo that errors about a request's options name
// (`CreateOptions.meta.k8s.io "" is invalid`): kind `options_kind` of meta.k8s.io/v1.
ResourceInfo options_info(std::string options_kind);

// All served resources, in discovery order (per group, the storage version first).
const std::vector<ResourceInfo>& all_resources();
// The resource by group/version/plural, or nullptr.
const ResourceInfo* find_resource(std::string_view group, std::string_view version, std::string_view resource);
// The resource by kind (first matching group, its storage version), or nullptr.
const ResourceInfo* find_kind(std::string_view group, std::string_view kind);
// The groups (other than core) with their versions, in discovery order.
struct GroupVersions {
  std::string group;
  std::vector<std::string> versions;  // preferred first
};
std::vector<GroupVersions> api_groups();

}  // namespace draplane::server
