// The node agent's kubelet logic as pure functions: which claims a pod needs and
// whether they are ready, the environment of a container (its env plus the CDI
// edits of the devices it was given), and the pod status to report from the
// state of its containers (phase, conditions, containerStatuses).
//
// Pure functions; thread-safe.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/types.h"
#include "common/result.h"
#include "node/cdi.h"
#include "node/prepare.h"

namespace draplane::node {

// One claim a pod uses, by the name the pod's containers refer to it with.
struct PodClaimRef {
  std::string pod_claim_name;  // spec.resourceClaims[].name, or "" for the extended-resource claim
  std::string claim_name;      // the ResourceClaim object
};

// The pod's claims: resourceClaimName entries, template entries through
// status.resourceClaimStatuses, and status.extendedResourceClaimStatus.
// Error kUnavailable naming the entry while a template's claim is not recorded
// yet (the controller has not created it); entries recorded with no claim are
// skipped (nothing to prepare).
Result<std::vector<PodClaimRef>> pod_claim_refs(const api::Pod& pod);

// Why the claim cannot be used by the pod yet ("" when it can): it must be
// allocated and reserved for the pod's UID, or for the PodGroup the pod names
// (a claim the group shares, KEP-5729; matched by name, as upstream's kubelet).
std::string claim_not_ready_reason(const api::ResourceClaim& claim, const api::Pod& pod);

// A prepared claim: what DeviceState::prepare returned and the CDI spec it wrote.
struct PreparedClaimInfo {
  std::string claim_uid;
  std::vector<PreparedDeviceResult> devices;
  CdiSpec cdi;
};

// The environment of a container, "NAME=value" in order: `base` (the agent's
// PATH, HOSTNAME, ...), then the CDI env of every device the container was given
// (its resources.claims entries — all devices of the claim, or those of one
// request — and the extended-resource requests mapped to it), then the
// container's own env: `own` when given (resolve_container_env, kubelet_env.h),
// else its env entries without valueFrom. A later entry replaces an
// earlier one with the same name, except NVIDIA_VISIBLE_DEVICES from several
// claims, whose values are joined with "," (each simulated claim lists its own
// GPUs). `claims` is keyed by pod claim name ("" = the extended-resource claim).
std::vector<std::string> container_env(const api::Pod& pod, const api::Container& container,
                                       const std::map<std::string, PreparedClaimInfo>& claims,
                                       const std::vector<std::string>& base,
                                       const std::vector<std::string>* own = nullptr);

// KEP-4680 resource health. The health of a device of the node's driver by
// pool and device name: "Healthy", "Unhealthy" or "Unknown".
using DeviceHealthFn = std::function<std::string(const std::string& pool, const std::string& device)>;

// One entry of a container status's allocatedResourcesStatus.
struct ResourceHealthEntry {
  std::string resource_id;
  std::string health;
  bool operator==(const ResourceHealthEntry&) const = default;
};
struct ResourceStatusEntry {
  std::string name;  // "claim:<pod claim name>" or "claim:<pod claim name>/<request>"
  std::vector<ResourceHealthEntry> resources;
  bool operator==(const ResourceStatusEntry&) const = default;
};

// allocatedResourcesStatus of a container, as the kubelet's DRA manager builds
// it: one entry per resources.claims entry of the container (in order) whose
// claim is prepared (`claims` by pod claim name), listing the devices of that
// claim (of its request, when the entry names one) with resourceID = the
// device's first CDI device ID (else "<driver>/<pool>/<device>"), each ID once;
// entries with no device are left out.
std::vector<ResourceStatusEntry> allocated_resources_status(const api::Container& container,
                                                            const std::map<std::string, PreparedClaimInfo>& claims,
                                                            const std::string& driver, const DeviceHealthFn& health);

// The health condition the driver writes into a claim's status.devices[]
// (KEP-4817; the type and reasons are draplane's, docs/compat.md).
inline constexpr const char* kDeviceHealthyCondition = "Healthy";

// The claim's status.devices after recording the health of its allocated
// devices of `driver` in `pool`: each gets (or keeps) its entry with condition
// Healthy = True (reason Healthy) | False (Unhealthy) | Unknown (Unknown), and
// lastTransitionTime kept while the status stays; entries of other drivers and
// pools, and other fields and conditions of ours, are kept. Equal to the
// claim's when nothing changed.
std::vector<api::AllocatedDeviceStatus> claim_device_statuses(const api::ResourceClaim& claim,
                                                              const std::string& driver, const std::string& pool,
                                                              const DeviceHealthFn& health, const std::string& now);

// The observed state of one container.
struct ContainerState {
  std::string name;
  enum class Kind { kWaiting, kRunning, kTerminated } kind = Kind::kWaiting;
  std::string reason;       // waiting: ContainerCreating | CrashLoopBackOff; terminated: Completed | Error
  std::string message;
  int exit_code = 0;
  std::string started_at;   // RFC 3339
  std::string finished_at;
  int restart_count = 0;
  std::optional<int> last_exit_code;  // lastState.terminated after a restart
  std::string container_id;           // "draplane://<pid>"
  std::vector<ResourceStatusEntry> allocated_resources_status;
};

// Pod phase from container states and restartPolicy (Always | OnFailure | Never,
// "" = Always): Pending while any is waiting and none ran; Succeeded when all
// terminated with 0 and none will restart; Failed when all terminated and one
// failed without restart; else Running.
std::string pod_phase(const std::string& restart_policy, const std::vector<ContainerState>& containers);

// The status to write: `pod.status` with phase, conditions (PodScheduled,
// Initialized, ContainersReady, Ready; lastTransitionTime kept when the status
// did not change), hostIP/podIP, startTime (kept once set), containerStatuses
// and `message` (e.g. why the pod waits for its claims). Other fields (claim
// statuses written by the controller and scheduler) are kept.
api::PodStatus build_pod_status(const api::Pod& pod, const std::string& phase,
                                const std::vector<ContainerState>& containers, const std::string& now,
                                const std::string& host_ip, const std::string& message);

}  // namespace draplane::node
