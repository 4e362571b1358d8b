#include "node/prepare.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "node/config.h"
#include "node/slices.h"

namespace draplane::node {
namespace {

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

// One allocation result this node prepares, with what it resolved to.
struct Planned {
  const api::DeviceRequestAllocationResult* result;
  DeviceRef ref;
  DeviceConfig config;
};

std::string mps_dir(const PrepareOptions& o, const std::string& uid) { return fmt::format("{}/mps/{}", o.plugin_dir, uid); }

}  // namespace

DeviceState::DeviceState(GpuBackend& backend, CommandRunner& runner, PrepareOptions options, std::vector<GpuInfo> gpus,
                         CheckpointFile file, Checkpoint checkpoint)
    : backend_(backend),
      runner_(runner),
      options_(std::move(options)),
      simulated_(options_.simulated.value_or(backend.kind() == "sim")),
      gpus_(std::move(gpus)),
      file_(std::move(file)),
      checkpoint_(std::move(checkpoint)) {}

Result<std::unique_ptr<DeviceState>> DeviceState::create(GpuBackend& backend, CommandRunner& runner,
                                                         PrepareOptions options, std::string boot_id) {
  if (options.node_name.empty()) return invalid_error("prepare: node name is empty");
  ASSIGN_OR_RETURN(std::vector<GpuInfo> gpus, backend.discover());
  CheckpointFile file(options.plugin_dir + "/checkpoint.json", std::move(boot_id));
  ASSIGN_OR_RETURN(Checkpoint checkpoint, file.load());
  return std::unique_ptr<DeviceState>(
      new DeviceState(backend, runner, std::move(options), std::move(gpus), std::move(file), std::move(checkpoint)));
}

Status DeviceState::save_locked() { return file_.save(checkpoint_); }

std::vector<std::string> DeviceState::prepared_claims() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& [uid, c] : checkpoint_.claims) out.push_back(uid);
  return out;
}

Result<std::vector<PreparedDeviceResult>> DeviceState::prepare(const ClaimRef& claim,
                                                               const api::AllocationResult& allocation) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = checkpoint_.claims.find(claim.uid);
  if (it != checkpoint_.claims.end()) {
    if (it->second.state == PrepareState::kPrepareCompleted) {
      std::vector<PreparedDeviceResult> out;
      for (const PreparedDevice& d : it->second.devices) {
        out.push_back({d.requests, d.pool, d.device, d.cdi_device_ids, d.share_id});
      }
      return out;
    }
    // A prepare that crashed half-way: undo what it recorded, then start over.
    PreparedClaim stale = it->second;
    RETURN_IF_ERROR(teardown_locked(claim.uid, stale));
    checkpoint_.claims.erase(claim.uid);
    RETURN_IF_ERROR(save_locked());
  }
  auto result = prepare_locked(claim, allocation);
  if (!result) {
    auto entry = checkpoint_.claims.find(claim.uid);
    if (entry != checkpoint_.claims.end()) {
      PreparedClaim partial = entry->second;
      Status undo = teardown_locked(claim.uid, partial);
      if (undo.ok()) {
        checkpoint_.claims.erase(claim.uid);
        (void)save_locked();  // the returned error matters more; a stale entry is retried
      }
    }
  }
  return result;
}

Result<std::vector<PreparedDeviceResult>> DeviceState::prepare_locked(const ClaimRef& claim,
                                                                      const api::AllocationResult& allocation) {
  std::vector<Planned> plan;
  const auto& results = allocation.devices.results;
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    if (r.driver != kDriverName || r.pool != options_.node_name) continue;
    auto ref = resolve_device(gpus_, r.device);
    if (!ref) {
      return not_found_error(fmt::format("claim {}/{}: status.allocation.devices.results[{}].device: {}",
                                         claim.namespace_, claim.name, i, ref.error().message()));
    }
    auto config = effective_config(allocation, i, ref->profile != nullptr);
    if (!config) {
      return invalid_error(fmt::format("claim {}/{}: {}", claim.namespace_, claim.name, config.error().message()));
    }
    plan.push_back({&r, *ref, *config});
  }
  if (plan.empty()) return std::vector<PreparedDeviceResult>{};

  PreparedClaim entry;
  entry.namespace_ = claim.namespace_;
  entry.name = claim.name;
  entry.state = PrepareState::kPrepareStarted;
  for (const Planned& p : plan) {
    PreparedDevice d;
    d.requests = {p.result->request};
    d.pool = p.result->pool;
    d.device = p.result->device;
    d.share_id = p.result->shareID;
    d.cdi_device_ids = {cdi_device_id(claim.uid, p.result->device)};
    if (p.ref.profile == nullptr) d.uuid = p.ref.gpu->uuid;
    entry.devices.push_back(std::move(d));
  }
  checkpoint_.claims[claim.uid] = entry;
  RETURN_IF_ERROR(save_locked());
  PreparedClaim& stored = checkpoint_.claims[claim.uid];

  // MIG devices, each recorded the moment it exists so a crash cannot leak it.
  std::map<std::string, size_t> first_of_device;
  for (size_t i = 0; i < plan.size(); ++i) {
    const Planned& p = plan[i];
    auto [pos, fresh] = first_of_device.emplace(p.result->device, i);
    if (!fresh) {
      stored.devices[i].uuid = stored.devices[pos->second].uuid;
      continue;
    }
    if (p.ref.profile == nullptr) continue;
    ASSIGN_OR_RETURN(MigInstance m,
                     backend_.create_mig_device(p.ref.gpu->uuid, p.ref.profile->id, p.ref.placement.start));
    stored.devices[i].mig = m;
    stored.devices[i].uuid = m.uuid;
    RETURN_IF_ERROR(save_locked());
  }

  // Sharing.
  std::vector<size_t> mps_devices;
  std::optional<MpsConfig> mps_config;
  std::set<std::string> timesliced;
  for (size_t i = 0; i < plan.size(); ++i) {
    const Planned& p = plan[i];
    if (!p.config.sharing) continue;
    const Sharing& s = *p.config.sharing;
    if (s.strategy == "TimeSlicing" && p.ref.profile == nullptr && timesliced.insert(p.ref.gpu->uuid).second) {
      int value = timeslice_value(s.time_slicing ? s.time_slicing->interval : "Default");
      RETURN_IF_ERROR(runner_.run({{"nvidia-smi", "-i", p.ref.gpu->uuid, "-c", "DEFAULT"}, {}, ""}));
      RETURN_IF_ERROR(runner_.run(
          {{"nvidia-smi", "compute-policy", "-i", p.ref.gpu->uuid, "--set-timeslice", std::to_string(value)}, {}, ""}));
    } else if (s.strategy == "MPS") {
      mps_devices.push_back(i);
      if (!mps_config) mps_config = s.mps.value_or(MpsConfig{});  // one daemon per claim: first config wins
    }
  }
  std::string pipe_dir, shm_dir;
  if (!mps_devices.empty()) {
    std::string dir = mps_dir(options_, claim.uid);
    pipe_dir = dir + "/pipe";
    shm_dir = dir + "/shm";
    std::error_code ec;
    for (const std::string& d : {pipe_dir, shm_dir, dir + "/log"}) std::filesystem::create_directories(d, ec);
    if (ec) return internal_error(fmt::format("creating MPS directories under {}: {}", dir, ec.message()));
    std::vector<std::string> uuids;
    std::set<std::string> parents;
    for (size_t i : mps_devices) {
      if (std::find(uuids.begin(), uuids.end(), stored.devices[i].uuid) == uuids.end()) uuids.push_back(stored.devices[i].uuid);
      parents.insert(plan[i].ref.gpu->uuid);
    }
    for (const std::string& parent : parents) {
      RETURN_IF_ERROR(runner_.run({{"nvidia-smi", "-i", parent, "-c", "EXCLUSIVE_PROCESS"}, {}, ""}));
    }
    stored.mps_pipe_dir = pipe_dir;
    RETURN_IF_ERROR(save_locked());
    const std::vector<std::string> env = {"CUDA_VISIBLE_DEVICES=" + join(uuids, ","),
                                          "CUDA_MPS_PIPE_DIRECTORY=" + pipe_dir,
                                          "CUDA_MPS_LOG_DIRECTORY=" + dir + "/log"};
    RETURN_IF_ERROR(runner_.run({{"nvidia-cuda-mps-control", "-d"}, env, ""}));
    if (mps_config->default_active_thread_percentage) {
      RETURN_IF_ERROR(runner_.run({{"nvidia-cuda-mps-control"}, env,
                                   fmt::format("set_default_active_thread_percentage {}",
                                               *mps_config->default_active_thread_percentage)}));
    }
    for (size_t k = 0; k < uuids.size(); ++k) {
      std::optional<api::Quantity> limit = mps_config->default_pinned_device_memory_limit;
      const auto& per = mps_config->default_per_device_pinned_memory_limit;
      if (auto f = per.find(uuids[k]); f != per.end()) limit = f->second;
      if (auto f = per.find(std::to_string(k)); f != per.end()) limit = f->second;
      if (!limit) continue;
      int64_t mib = (limit->value() + (1 << 20) - 1) >> 20;
      RETURN_IF_ERROR(runner_.run(
          {{"nvidia-cuda-mps-control"}, env, fmt::format("set_default_device_pinned_mem_limit {} {}M", k, mib)}));
    }
  }

  // CDI spec: one CDI device per allocated device.
  CdiSpec spec;
  if (!simulated_) spec.edits = nvidia_common_edits();
  std::vector<std::string> claim_uuids;
  for (const PreparedDevice& d : stored.devices) {
    if (std::find(claim_uuids.begin(), claim_uuids.end(), d.uuid) == claim_uuids.end()) claim_uuids.push_back(d.uuid);
  }
  std::set<std::string> written;
  for (size_t i = 0; i < plan.size(); ++i) {
    const Planned& p = plan[i];
    if (!written.insert(p.result->device).second) continue;
    CdiDevice dev;
    dev.name = cdi_device_name(claim.uid, p.result->device);
    if (simulated_) {
      // No driver to inject devices: tell the process what it was given.
      dev.edits.env.push_back("NVIDIA_VISIBLE_DEVICES=" + join(claim_uuids, ","));
    } else {
      dev.edits.device_nodes.push_back(
          {fmt::format("/dev/nvidia{}", p.ref.gpu->minor), "", std::nullopt, std::nullopt, std::nullopt});
      if (const auto& m = stored.devices[i].mig) {
        ASSIGN_OR_RETURN(auto caps, mig_capability_nodes(options_.proc_root, m->parent_minor, m->gi_id, m->ci_id));
        dev.edits.device_nodes.insert(dev.edits.device_nodes.end(), caps.begin(), caps.end());
      }
    }
    if (std::find(mps_devices.begin(), mps_devices.end(), i) != mps_devices.end()) {
      dev.edits.env.push_back("CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps");
      dev.edits.mounts.push_back({pipe_dir, "/tmp/nvidia-mps", {"rw", "nosuid", "nodev", "bind"}});
      dev.edits.mounts.push_back({shm_dir, "/dev/shm", {"rw", "nosuid", "nodev", "bind"}});
    }
    spec.devices.push_back(std::move(dev));
  }
  RETURN_IF_ERROR(write_cdi_spec(options_.cdi_dir, claim.uid, spec));

  stored.state = PrepareState::kPrepareCompleted;
  RETURN_IF_ERROR(save_locked());
  std::vector<PreparedDeviceResult> out;
  for (const PreparedDevice& d : stored.devices) out.push_back({d.requests, d.pool, d.device, d.cdi_device_ids, d.share_id});
  return out;
}

Status DeviceState::teardown_locked(const std::string& uid, const PreparedClaim& claim) {
  Status first;
  auto note = [&](Status s) {
    if (first.ok() && !s.ok()) first = std::move(s);
  };
  if (claim.mps_pipe_dir) {
    auto r = runner_.run({{"nvidia-cuda-mps-control"}, {"CUDA_MPS_PIPE_DIRECTORY=" + *claim.mps_pipe_dir}, "quit"});
    if (!r) note(r.error());
    std::error_code ec;
    std::filesystem::remove_all(mps_dir(options_, uid), ec);
  }
  std::set<std::pair<std::string, int>> destroyed;
  for (const PreparedDevice& d : claim.devices) {
    if (!d.mig || !destroyed.insert({d.mig->parent_uuid, d.mig->gi_id}).second) continue;
    note(backend_.destroy_mig_device(*d.mig));
  }
  note(remove_cdi_spec(options_.cdi_dir, uid));
  return first;
}

Status DeviceState::unprepare(const std::string& claim_uid) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = checkpoint_.claims.find(claim_uid);
  if (it == checkpoint_.claims.end()) {
    return remove_cdi_spec(options_.cdi_dir, claim_uid);  // a spec without checkpoint entry is a leftover
  }
  PreparedClaim claim = it->second;
  Status st = teardown_locked(claim_uid, claim);
  if (!st.ok()) return st;  // keep the entry so a retry can finish the job
  checkpoint_.claims.erase(claim_uid);
  return save_locked();
}

}  // namespace draplane::node
