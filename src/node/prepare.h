// DeviceState: NodePrepareResources / NodeUnprepareResources of the gpu.nvidia.com
// driver for one node (after NVIDIA's device_state.go and dra-example-driver's
// state.go).
//
// prepare(claim, allocation), for the results of this driver and node only:
//  1. the checkpoint first: a claim already PrepareCompleted returns what was
//     recorded (idempotent); one left PrepareStarted by a crash is rolled back
//     (its recorded MIG devices destroyed) and prepared again;
//  2. resolve devices and their effective opaque config (config.h);
//  3. record PrepareStarted, then create MIG devices through the GpuBackend
//     (recording each in the checkpoint as soon as it exists);
//  4. apply sharing through the CommandRunner: time-slicing = nvidia-smi compute
//     mode DEFAULT + --set-timeslice; MPS = EXCLUSIVE_PROCESS + one
//     nvidia-cuda-mps-control daemon per claim;
//  5. write the claim's CDI spec, then record PrepareCompleted.
// Any failure undoes what was done for the claim and returns the error.
// unprepare(uid) stops MPS, destroys CI then GI, removes the CDI spec and the
// checkpoint entry; a claim that is not prepared is OK (idempotent).
//
// Thread-safety: all methods serialise on one mutex (prepare is rare and slow
// compared with the lock).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "api/types.h"
#include "common/result.h"
#include "node/cdi.h"
#include "node/checkpoint.h"
#include "node/command_runner.h"
#include "node/gpu_backend.h"

namespace draplane::node {

struct PrepareOptions {
  std::string node_name;   // the pool this driver publishes
  std::string cdi_dir = "/var/run/cdi";
  std::string plugin_dir = "/var/lib/kubelet/plugins/gpu.nvidia.com";  // checkpoint.json, mps/
  std::string proc_root = "/proc";  // MIG capability files
  // Simulated GPUs: CDI edits carry NVIDIA_VISIBLE_DEVICES=<uuids> instead of
  // device nodes. Default: backend.kind() == "sim".
  std::optional<bool> simulated;
};

struct ClaimRef {
  std::string namespace_;
  std::string name;
  std::string uid;
};

// One entry of NodePrepareResourceResponse.devices.
struct PreparedDeviceResult {
  std::vector<std::string> request_names;
  std::string pool_name;
  std::string device_name;
  std::vector<std::string> cdi_device_ids;
  std::optional<std::string> share_id;
  bool operator==(const PreparedDeviceResult&) const = default;
};

class DeviceState {
 public:
  // Discovers the GPUs and loads the checkpoint (<plugin dir>/checkpoint.json).
  // `boot_id` is read_boot_id() in production. The backend and runner must
  // outlive the DeviceState. Errors: discovery or checkpoint errors.
  static Result<std::unique_ptr<DeviceState>> create(GpuBackend& backend, CommandRunner& runner,
                                                     PrepareOptions options, std::string boot_id);

  // Prepares the claim (see above). Results of other drivers or pools are
  // ignored; none at all gives an empty list. Errors: kNotFound for a device this
  // node does not have, kInvalid for bad opaque config, backend/runner/IO errors.
  Result<std::vector<PreparedDeviceResult>> prepare(const ClaimRef& claim, const api::AllocationResult& allocation);

  // Unprepares the claim with this UID; OK when it is not prepared.
  Status unprepare(const std::string& claim_uid);

  // UIDs of the claims in the checkpoint, sorted.
  std::vector<std::string> prepared_claims() const;

  const std::vector<GpuInfo>& gpus() const { return gpus_; }

 private:
  DeviceState(GpuBackend& backend, CommandRunner& runner, PrepareOptions options, std::vector<GpuInfo> gpus,
              CheckpointFile file, Checkpoint checkpoint);
  Result<std::vector<PreparedDeviceResult>> prepare_locked(const ClaimRef& claim,
                                                           const api::AllocationResult& allocation);
  // Undoes the side effects recorded for a claim (MPS, MIG, CDI); keeps going on
  // errors and returns the first.
  Status teardown_locked(const std::string& uid, const PreparedClaim& claim);
  Status save_locked();

  GpuBackend& backend_;
  CommandRunner& runner_;
  const PrepareOptions options_;
  const bool simulated_;
  const std::vector<GpuInfo> gpus_;
  const CheckpointFile file_;
  mutable std::mutex mu_;
  Checkpoint checkpoint_;  // guarded by mu_; mirrors the file
};

}  // namespace draplane::node
