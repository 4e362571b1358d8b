// API-server defaulting (see defaults.h for the list and its upstream sources).
#include "api/defaults.h"

#include <type_traits>

#include "api/internal/json_value.h"
#include "common/base64.h"

namespace draplane::api {
namespace {

constexpr const char* kTolerationOpEqual = "Equal";

void default_tolerations(std::vector<DeviceToleration>& tolerations) {
  for (DeviceToleration& t : tolerations) {
    if (t.operator_.empty()) t.operator_ = kTolerationOpEqual;
  }
}

template <typename R>
void default_request(R& r) {
  if (r.allocationMode.empty()) r.allocationMode = kAllocationModeExactCount;
  if (r.allocationMode == kAllocationModeExactCount && (!r.count || *r.count == 0)) r.count = 1;
  default_tolerations(r.tolerations);
}

// Adds `key: value` to a RawJson object when the key is absent.
void default_extra(RawJson& extra, const char* key, internal::JsonValue value) {
  internal::JsonValue obj = internal::JsonValue::object();
  if (!extra.empty()) {
    Result<internal::JsonValue> parsed = internal::parse_json(extra.text);
    if (!parsed.has_value() || !parsed->is_object()) return;  // leave foreign data alone
    obj = std::move(parsed).value();
  }
  if (obj.find(key) != nullptr) return;
  obj.add(key, std::move(value));
  extra.text = internal::canonical_json_text(obj);
}

std::string extra_string(const RawJson& extra, const char* key) {
  if (extra.empty()) return {};
  Result<internal::JsonValue> parsed = internal::parse_json(extra.text);
  if (!parsed.has_value() || !parsed->is_object()) return {};
  const internal::JsonValue* v = parsed->find(key);
  return v != nullptr && v->is_string() ? v->text : std::string();
}

// Kubernetes: PullAlways when the tag is "latest" or missing (no digest).
std::string pull_policy_for(const std::string& image) {
  if (image.find('@') != std::string::npos) return "IfNotPresent";
  size_t slash = image.rfind('/');
  size_t colon = image.rfind(':');
  bool has_tag = colon != std::string::npos && (slash == std::string::npos || colon > slash);
  if (!has_tag || image.substr(colon + 1) == "latest") return "Always";
  return "IfNotPresent";
}

void default_container(Container& c) {
  for (const auto& [name, q] : c.resources.limits) {
    c.resources.requests.try_emplace(name, q);
  }
  default_extra(c.extra, "terminationMessagePath",
                internal::JsonValue::string("/dev/termination-log"));
  default_extra(c.extra, "terminationMessagePolicy", internal::JsonValue::string("File"));
  if (extra_string(c.extra, "imagePullPolicy").empty() && !c.image.empty()) {
    default_extra(c.extra, "imagePullPolicy", internal::JsonValue::string(pull_policy_for(c.image)));
  }
}

// SetDefaults_Secret, and the v1 conversion's merge of stringData into data
// (stringData is write-only: it is never stored or returned).
void default_secret(Secret& s) {
  if (s.type.empty()) s.type = "Opaque";
  for (const auto& [key, value] : s.stringData) s.data[key] = common::base64_encode(value);
  s.stringData.clear();
}

// SetDefaults_Service and SetDefaults_ServicePort (targetPort follows port).
void default_service(ServiceSpec& spec) {
  if (spec.type.empty()) spec.type = "ClusterIP";
  if (spec.sessionAffinity.empty()) spec.sessionAffinity = "None";
  for (ServicePort& p : spec.ports) {
    if (p.protocol.empty()) p.protocol = "TCP";
    if (p.targetPort.empty() || p.targetPort.text == "0") p.targetPort.text = std::to_string(p.port);
  }
  if (spec.type == "ClusterIP" || spec.type == "NodePort" || spec.type == "LoadBalancer") {
    default_extra(spec.extra, "internalTrafficPolicy", internal::JsonValue::string("Cluster"));
  }
}

// SetDefaults_Deployment (apps/v1).
void default_deployment(DeploymentSpec& spec) {
  if (!spec.replicas) spec.replicas = 1;
  if (spec.strategy.type.empty()) spec.strategy.type = "RollingUpdate";
  if (spec.strategy.type == "RollingUpdate") {
    if (!spec.strategy.rollingUpdate) spec.strategy.rollingUpdate = RollingUpdateDeployment{};
    RollingUpdateDeployment& ru = *spec.strategy.rollingUpdate;
    if (ru.maxUnavailable.empty()) ru.maxUnavailable.text = "\"25%\"";
    if (ru.maxSurge.empty()) ru.maxSurge.text = "\"25%\"";
  }
  if (!spec.revisionHistoryLimit) spec.revisionHistoryLimit = 10;
  if (!spec.progressDeadlineSeconds) spec.progressDeadlineSeconds = 600;
}

// SetDefaults_Job (batch/v1): one completion and one pod at a time unless
// either is given; backoffLimit 6 (MaxInt32 with a per-index limit).
void default_job(JobSpec& spec) {
  if (!spec.completions && !spec.parallelism) spec.completions = 1;
  if (!spec.parallelism) spec.parallelism = 1;
  if (!spec.backoffLimit) spec.backoffLimit = spec.backoffLimitPerIndex ? INT32_MAX : 6;
  if (!spec.completionMode) spec.completionMode = "NonIndexed";
  if (!spec.suspend) spec.suspend = false;
  default_extra(spec.extra, "podReplacementPolicy", internal::JsonValue::string("TerminatingOrFailed"));
}

}  // namespace

void apply_defaults(ResourceClaimSpec& spec) {
  for (DeviceRequest& r : spec.devices.requests) {
    if (r.exactly) default_request(*r.exactly);
    for (DeviceSubRequest& s : r.firstAvailable) default_request(s);
  }
}

void apply_defaults(ResourceClaimStatus& status) {
  if (!status.allocation) return;
  for (DeviceRequestAllocationResult& r : status.allocation->devices.results) {
    default_tolerations(r.tolerations);
  }
}

void apply_defaults(PodSpec& spec) {
  if (spec.restartPolicy.empty()) spec.restartPolicy = "Always";
  if (spec.schedulerName.empty()) spec.schedulerName = "default-scheduler";
  if (!spec.terminationGracePeriodSeconds) spec.terminationGracePeriodSeconds = 30;
  default_extra(spec.extra, "dnsPolicy", internal::JsonValue::string("ClusterFirst"));
  default_extra(spec.extra, "securityContext", internal::JsonValue::object());
  default_extra(spec.extra, "enableServiceLinks", internal::JsonValue::from_bool(true));
  for (Container& c : spec.initContainers) default_container(c);
  for (Container& c : spec.containers) default_container(c);
}

void apply_defaults(Object& object, const DefaultOptions& options) {
  std::visit(
      [&](auto& obj) {
        using T = std::decay_t<decltype(obj)>;
        if constexpr (std::is_same_v<T, ResourceClaim>) {
          apply_defaults(obj.spec);
          apply_defaults(obj.status);
        } else if constexpr (std::is_same_v<T, ResourceClaimTemplate>) {
          apply_defaults(obj.spec.spec);
        } else if constexpr (std::is_same_v<T, ResourceSlice>) {
          if (options.now.empty()) return;
          for (Device& d : obj.spec.devices) {
            for (DeviceTaint& t : d.taints) {
              if (t.timeAdded.empty()) t.timeAdded = options.now;
            }
          }
        } else if constexpr (std::is_same_v<T, Pod>) {
          apply_defaults(obj.spec);
        } else if constexpr (std::is_same_v<T, Node>) {
          if (obj.status.allocatable.empty()) obj.status.allocatable = obj.status.capacity;
        } else if constexpr (std::is_same_v<T, DeviceTaintRule>) {
          // Upstream's strategy stamps a rule's taint on create; updates are the
          // server strategy's (the stamp follows effect changes).
          if (!options.now.empty() && obj.spec.taint.timeAdded.empty()) obj.spec.taint.timeAdded = options.now;
        } else if constexpr (std::is_same_v<T, Namespace>) {
          if (obj.phase.empty()) obj.phase = "Active";
        } else if constexpr (std::is_same_v<T, Secret>) {
          default_secret(obj);
        } else if constexpr (std::is_same_v<T, Service>) {
          default_service(obj.spec);
        } else if constexpr (std::is_same_v<T, Deployment>) {
          default_deployment(obj.spec);
          apply_defaults(obj.spec.template_.spec);
        } else if constexpr (std::is_same_v<T, ReplicaSet>) {
          if (!obj.spec.replicas) obj.spec.replicas = 1;
          apply_defaults(obj.spec.template_.spec);
        } else if constexpr (std::is_same_v<T, Job>) {
          default_job(obj.spec);
          apply_defaults(obj.spec.template_.spec);
        } else if constexpr (std::is_same_v<T, PriorityClass>) {
          if (!obj.preemptionPolicy) obj.preemptionPolicy = kPreemptLowerPriority;  // SetDefaults_PriorityClass
        } else if constexpr (std::is_same_v<T, PodGroup>) {
          // +default={"single": {}}
          if (!obj.spec.disruptionMode) obj.spec.disruptionMode = DisruptionMode{SingleDisruptionMode{}, {}};
        } else if constexpr (std::is_same_v<T, PersistentVolumeClaim>) {
          if (!obj.spec.volumeMode) obj.spec.volumeMode = "Filesystem";
          if (obj.status.phase.empty()) obj.status.phase = "Pending";
        }
      },
      object);
}

}  // namespace draplane::api
