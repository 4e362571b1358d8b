// REST paths of API resources, built as kube-apiserver serves them:
//   /api/v1/<resource>                                  core group
//   /apis/<group>/<version>/<resource>                  other groups
//   .../namespaces/<ns>/<resource>/<name>/<subresource> narrower
// so callers name a resource once (the constants below) instead of spelling
// its path by hand:
//   resources::kResourceClaims.ns(ns).name(name).sub("status")
//
// Thread-safety: plain values.
#pragma once

#include <string>
#include <string_view>

namespace draplane::client {

// A path being built. It converts to the string_view that RestClient takes: a
// temporary Path lives to the end of the call it is passed to, but a
// string_view kept from one dangles (keep the Path, or str(), instead).
class Path {
 public:
  explicit Path(std::string text) : text_(std::move(text)) {}
  Path name(std::string_view n) const { return Path(text_ + "/" + std::string(n)); }
  Path sub(std::string_view subresource) const { return Path(text_ + "/" + std::string(subresource)); }
  const std::string& str() const { return text_; }
  operator std::string_view() const { return text_; }
  bool operator==(const Path&) const = default;

 private:
  std::string text_;
};

// One resource of one API group version ("" is the core group).
struct ResourcePath {
  std::string_view group;
  std::string_view version;
  std::string_view resource;

  // The collection across all namespaces, or of a cluster-scoped resource.
  Path all() const;
  // The collection in namespace `ns`.
  Path ns(std::string_view ns) const;
  // One cluster-scoped object.
  Path name(std::string_view n) const { return all().name(n); }
};

namespace resources {
inline constexpr ResourcePath kNamespaces{"", "v1", "namespaces"};
inline constexpr ResourcePath kNodes{"", "v1", "nodes"};
inline constexpr ResourcePath kPods{"", "v1", "pods"};
inline constexpr ResourcePath kEvents{"", "v1", "events"};
inline constexpr ResourcePath kEventsV1{"events.k8s.io", "v1", "events"};
inline constexpr ResourcePath kDeviceClasses{"resource.k8s.io", "v1", "deviceclasses"};
inline constexpr ResourcePath kResourceClaims{"resource.k8s.io", "v1", "resourceclaims"};
inline constexpr ResourcePath kResourceClaimTemplates{"resource.k8s.io", "v1", "resourceclaimtemplates"};
inline constexpr ResourcePath kResourceSlices{"resource.k8s.io", "v1", "resourceslices"};
inline constexpr ResourcePath kDeviceTaintRules{"resource.k8s.io", "v1", "devicetaintrules"};
inline constexpr ResourcePath kWorkloads{"scheduling.k8s.io", "v1beta1", "workloads"};
inline constexpr ResourcePath kPodGroups{"scheduling.k8s.io", "v1beta1", "podgroups"};
inline constexpr ResourcePath kDeployments{"apps", "v1", "deployments"};
inline constexpr ResourcePath kReplicaSets{"apps", "v1", "replicasets"};
inline constexpr ResourcePath kJobs{"batch", "v1", "jobs"};
}  // namespace resources

}  // namespace draplane::client
