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

// Where the NVIDIA driver's user-space files are: `root` as this process sees
// it (the DaemonSet mounts the host's / at /driver-root), `host_root` as the
// container runtime, which applies the CDI spec on the host, sees it.
struct DriverRoot {
  std::string root = "/";
  std::string host_root = "/";
};

// The driver's files to mount into a container, as NVIDIA's CDI generation
// finds them: the library directory holding libcuda.so.<version> (the
// standard multiarch and lib64 directories are searched), every
// lib*.so.<version> in it, and the utility and MPS binaries present. Paths are
// relative to the root ("usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15");
// empty when libcuda.so.<version> is not found.
struct DriverFiles {
  std::string lib_dir;  // "/usr/lib/x86_64-linux-gnu", as the container sees it
  std::vector<std::string> libraries;
  std::vector<std::string> binaries;
};
DriverFiles find_driver_files(const std::string& root, const std::string& driver_version);

// The spec-level edits for real NVIDIA GPUs: control nodes, the driver's
// libraries and binaries bind-mounted read-only from the host, and the hooks
// that link libcuda.so and refresh the container's ld cache.
CdiEdits nvidia_common_edits(const DriverFiles& files = {}, const std::string& host_root = "/");

// The two MIG capability device nodes of GI `gi` / CI `ci` on GPU `parent_minor`:
// minors from <proc>/driver/nvidia/capabilities/gpu<P>/mig/gi<G>[/ci<C>]/access
// ("DeviceFileMinor: N"), major from the nvidia-caps line of <proc>/devices.
// Error kNotFound naming the file that is missing.
Result<std::vector<CdiDeviceNode>> mig_capability_nodes(const std::string& proc_root, int parent_minor, int gi,
                                                        int ci);

}  // namespace draplane::node
