// DeviceState: NodePrepareResources / NodeUnprepareResources of the gpu.nvidia.com
// driver for one node (after NVIDIA's device_state.go and dra-example-driver's
// state.go).
//
// prepare(claim, allocation), for the results of this driver and node only:
//  1. the checkpoint first: a claim already PrepareCompleted returns what was
//     recorded (idempotent); one left PrepareStarted by a crash is rolled back
//     (what it recorded and no other claim holds is undone) and prepared again;
//  2. resolve devices and their effective opaque config (config.h); refuse
//     sharing that conflicts with the claims already prepared on a device
//     (another strategy or interval, MPS on an overlapping device set);
//  3. record PrepareStarted, then create MIG devices through the GpuBackend
//     (recording each in the checkpoint as soon as it exists; a shared MIG
//     device another claim created is used as it is);
//  4. apply sharing through the CommandRunner: time-slicing = nvidia-smi compute
//     mode DEFAULT + --set-timeslice, once per GPU while it has time-sliced
//     shares; MPS = EXCLUSIVE_PROCESS + one nvidia-cuda-mps-control daemon per
//     set of devices, shared by every claim on them, each claim's containers
//     getting their own limits (pinned device memory = the claim's consumed
//     `memory` capacity or MpsConfig's; active thread percentage = MpsConfig's
//     or the memory share) as MPS client environment in the CDI spec;
//  5. write the claim's CDI spec, then record PrepareCompleted.
// Any failure undoes what was done for the claim and returns the error.
// unprepare(uid) undoes the claim's part: the GPU-level setup (MPS daemon and
// compute mode, timeslice, MIG device) only when no other claim in the
// checkpoint holds it (reference counts derived from the checkpoint, so they
// survive a restart); it removes the CDI spec and the checkpoint entry. A claim
// that is not prepared is OK (idempotent).
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
  // The driver's libraries and binaries the CDI specs mount (real GPUs only).
  DriverRoot driver_root;
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
  // Starts the MPS control daemon with this pipe directory for these device
  // UUIDs (compute mode EXCLUSIVE_PROCESS on their GPUs first).
  Status start_mps_daemon_locked(const std::string& pipe_dir, const std::vector<std::string>& uuids,
                                 const std::vector<std::string>& gpus);
  // Undoes the side effects recorded for a claim (MPS, time-slicing, MIG, CDI)
  // that no other claim in the checkpoint still holds; keeps going on errors
  // and returns the first.
  Status teardown_locked(const std::string& uid, const PreparedClaim& claim);
  Status save_locked();

  GpuBackend& backend_;
  CommandRunner& runner_;
  const PrepareOptions options_;
  const bool simulated_;
  const std::vector<GpuInfo> gpus_;
  // Every claim's spec-level edits (the driver's files found once at start).
  const CdiEdits common_edits_;
  const CheckpointFile file_;
  mutable std::mutex mu_;
  Checkpoint checkpoint_;  // guarded by mu_; mirrors the file
};

}  // namespace draplane::node
