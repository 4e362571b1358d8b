// CDI (Container Device Interface) specs, one per prepared claim (SPEC §5):
// <cdi dir>/k8s.gpu.nvidia.com-claim_<claimUID>.yaml with
//   cdiVersion: "0.5.0", kind: k8s.gpu.nvidia.com/claim,
//   devices: [{name: <claimUID>-<device>, containerEdits: {env, deviceNodes, mounts}}]
// and the kubelet is given the ids k8s.gpu.nvidia.com/claim=<claimUID>-<device>.
// Real GPUs get spec-level edits (NVIDIA_VISIBLE_DEVICES=void, control device
// nodes, nvidia-cdi-hook hooks) and per device /dev/nvidia<minor> (+ MIG caps);
// simulated GPUs carry NVIDIA_VISIBLE_DEVICES=<uuid,...> in the device edits.
//
// Pure functions except the file helpers; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace draplane::node {

inline constexpr const char* kCdiVersion = "0.5.0";
inline constexpr const char* kCdiKind = "k8s.gpu.nvidia.com/claim";

struct CdiDeviceNode {
  std::string path;
  std::string type;  // "c" or "" (the runtime stats the host path)
  std::optional<int64_t> major;
  std::optional<int64_t> minor;
  std::optional<uint32_t> file_mode;
  bool operator==(const CdiDeviceNode&) const = default;
};

struct CdiMount {
  std::string host_path;
  std::string container_path;
  std::vector<std::string> options;
  bool operator==(const CdiMount&) const = default;
};

struct CdiHook {
  std::string hook_name;  // createContainer, ...
  std::string path;
  std::vector<std::string> args;
  bool operator==(const CdiHook&) const = default;
};

struct CdiEdits {
  std::vector<std::string> env;  // "NAME=value"
  std::vector<CdiDeviceNode> device_nodes;
  std::vector<CdiMount> mounts;
  std::vector<CdiHook> hooks;
  bool empty() const { return env.empty() && device_nodes.empty() && mounts.empty() && hooks.empty(); }
  bool operator==(const CdiEdits&) const = default;
};

struct CdiDevice {
  std::string name;  // <claimUID>-<device>
  CdiEdits edits;
  bool operator==(const CdiDevice&) const = default;
};

struct CdiSpec {
  std::string kind = kCdiKind;
  CdiEdits edits;  // spec-level containerEdits
  std::vector<CdiDevice> devices;
  bool operator==(const CdiSpec&) const = default;
};

// YAML text of a spec (cdiVersion first, empty sections omitted).
std::string encode_cdi_spec(const CdiSpec& spec);
// Parses a spec written by encode_cdi_spec (or any CDI 0.x YAML/JSON with these
// fields). Error kInvalid naming the field.
Result<CdiSpec> decode_cdi_spec(std::string_view text);

// "<dir>/k8s.gpu.nvidia.com-claim_<claimUID>.yaml".
std::string cdi_spec_path(const std::string& dir, const std::string& claim_uid);
// "<claimUID>-<device>".
std::string cdi_device_name(const std::string& claim_uid, const std::string& device);
// "k8s.gpu.nvidia.com/claim=<claimUID>-<device>".
std::string cdi_device_id(const std::string& claim_uid, const std::string& device);

// Writes the spec atomically; errors kInternal. Removing a missing spec is OK.
Status write_cdi_spec(const std::string& dir, const std::string& claim_uid, const CdiSpec& spec);
Status remove_cdi_spec(const std::string& dir, const std::string& claim_uid);

// The spec-level edits for real NVIDIA GPUs (control nodes, hooks).
CdiEdits nvidia_common_edits();

// The two MIG capability device nodes of GI `gi` / CI `ci` on GPU `parent_minor`:
// minors from <proc>/driver/nvidia/capabilities/gpu<P>/mig/gi<G>[/ci<C>]/access
// ("DeviceFileMinor: N"), major from the nvidia-caps line of <proc>/devices.
// Error kNotFound naming the file that is missing.
Result<std::vector<CdiDeviceNode>> mig_capability_nodes(const std::string& proc_root, int parent_minor, int gi,
                                                        int ci);

}  // namespace draplane::node
