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

// The GPU a recorded device is on: a MIG device's parent, else the GPU itself.
const std::string& gpu_uuid(const PreparedDevice& d) { return d.mig ? d.mig->parent_uuid : d.uuid; }

bool is_strategy(const std::optional<AppliedSharing>& s, std::string_view strategy) {
  return s && s->strategy == strategy;
}

// What a device's opaque config asks for, without the MPS numbers (those need
// the device's UUID, known once a MIG device exists).
std::optional<AppliedSharing> wanted_sharing(const Planned& p) {
  if (!p.config.sharing) return std::nullopt;
  AppliedSharing s;
  s.strategy = p.config.sharing->strategy;
  if (s.strategy == "TimeSlicing" && p.ref.profile == nullptr) {
    s.interval = p.config.sharing->time_slicing ? p.config.sharing->time_slicing->interval : "Default";
  }
  return s;
}

std::string describe(const std::optional<AppliedSharing>& s) {
  if (!s) return "no sharing";
  if (!s->interval.empty()) return fmt::format("{} (interval {})", s->strategy, s->interval);
  return s->strategy;
}

// Whether two claims may share a device with these settings: the same strategy
// (and interval). A claim without sharing config fits a time-sliced GPU
// (time-slicing is what a GPU does for several processes anyway), never an MPS
// one (EXCLUSIVE_PROCESS admits the MPS server only).
bool compatible(const std::optional<AppliedSharing>& a, const std::optional<AppliedSharing>& b) {
  if (!a || !b) return !is_strategy(a, "MPS") && !is_strategy(b, "MPS");
  return a->strategy == b->strategy && a->interval == b->interval;
}

// The MPS control daemon of a set of devices lives in <plugin dir>/mps/<id>,
// id = the first of the device names: daemons serve disjoint sets (prepare
// refuses overlaps), so that name is unique among running daemons.
std::string mps_pipe_dir(const PrepareOptions& o, const std::vector<std::string>& sorted_devices) {
  return fmt::format("{}/mps/{}/pipe", o.plugin_dir, sorted_devices.front());
}
std::string mps_root(const std::string& pipe_dir) { return std::filesystem::path(pipe_dir).parent_path().string(); }

// The devices of a claim that use MPS, sorted by name.
std::vector<std::string> mps_devices(const PreparedClaim& c) {
  std::set<std::string> names;
  for (const PreparedDevice& d : c.devices) {
    if (is_strategy(d.sharing, "MPS")) names.insert(d.device);
  }
  return {names.begin(), names.end()};
}

// A pinned device memory limit in whole MiB, as the NVIDIA driver writes it
// (rounded down; under 1Mi is an error).
Result<int64_t> limit_mib(const api::Quantity& q, const std::string& what) {
  int64_t mib = q.value() >> 20;
  if (mib <= 0) {
    return invalid_error(fmt::format("{}: Invalid value: \"{}\": must be at least 1Mi", what, q.to_string()));
  }
  return mib;
}

// Whether a claim other than `uid` (only PrepareCompleted ones when
// `completed_only`) satisfies `pred`: the reference count of GPU-level setup,
// derived from the checkpoint so that it survives a restart. Setup is applied
// unless a completed claim already holds it (a PrepareStarted one may have
// crashed before applying it; applying again is harmless) and undone when no
// claim at all holds it.
template <typename Pred>
bool held_by_other(const Checkpoint& c, const std::string& uid, bool completed_only, Pred pred) {
  for (const auto& [other, claim] : c.claims) {
    if (other == uid || (completed_only && claim.state != PrepareState::kPrepareCompleted)) continue;
    if (pred(claim)) return true;
  }
  return false;
}

auto timesliced_gpu(const std::string& uuid) {
  return [&uuid](const PreparedClaim& c) {
    return std::any_of(c.devices.begin(), c.devices.end(), [&](const PreparedDevice& d) {
      return !d.mig && d.uuid == uuid && is_strategy(d.sharing, "TimeSlicing");
    });
  };
}

// The MIG device another claim created for `device` (a shared MIG device is
// created once and used by every claim allocated a share of it).
std::optional<MigInstance> shared_mig(const Checkpoint& c, const std::string& uid, const std::string& pool,
                                      const std::string& device) {
  for (const auto& [other, claim] : c.claims) {
    if (other == uid) continue;
    for (const PreparedDevice& d : claim.devices) {
      if (d.mig && d.pool == pool && d.device == device) return d.mig;
    }
  }
  return std::nullopt;
}

// Refuses to share a device in a way the claims already prepared on it (and
// done) do not: another strategy or interval, or MPS on an overlapping but
// different set of devices (one daemon serves a GPU).
Status check_sharing_conflicts(const Checkpoint& c, const ClaimRef& claim, const std::vector<PreparedDevice>& devices,
                               const std::vector<std::optional<AppliedSharing>>& wanted,
                               const std::vector<std::string>& mps_set) {
  for (const auto& [uid, other] : c.claims) {
    if (uid == claim.uid || other.state != PrepareState::kPrepareCompleted) continue;
    for (size_t i = 0; i < devices.size(); ++i) {
      for (const PreparedDevice& e : other.devices) {
        if (e.device != devices[i].device || e.pool != devices[i].pool || compatible(wanted[i], e.sharing)) continue;
        return Status(Code::kFailedPrecondition,
                      fmt::format("claim {}/{}: device {} ({}) cannot be shared with {}: claim {}/{} ({}) is prepared "
                                  "on it with {}; claims sharing a GPU must use the same sharing strategy and interval",
                                  claim.namespace_, claim.name, e.device, e.uuid, describe(wanted[i]),
                                  other.namespace_, other.name, uid, describe(e.sharing)));
      }
    }
    if (mps_set.empty()) continue;
    std::vector<std::string> theirs = mps_devices(other);
    bool overlap = std::any_of(mps_set.begin(), mps_set.end(), [&](const std::string& d) {
      return std::binary_search(theirs.begin(), theirs.end(), d);
    });
    if (overlap && theirs != mps_set) {
      return Status(Code::kFailedPrecondition,
                    fmt::format("claim {}/{}: MPS devices {} overlap the MPS devices {} of claim {}/{} ({}): one MPS "
                                "control daemon serves a GPU, so claims sharing it must use the same MPS devices",
                                claim.namespace_, claim.name, join(mps_set, ","), join(theirs, ","),
                                other.namespace_, other.name, uid));
    }
  }
  return {};
}

// The MPS client limits of one device of a claim: its pinned device memory is
// its consumed `memory` capacity (a share of the GPU) or else what MpsConfig
// says for it (by UUID, by index among the claim's MPS devices, or the
// default); its active thread percentage is MpsConfig's, or else its share of
// the device's memory, rounded up.
Result<AppliedSharing> mps_share(const ClaimRef& claim, const Planned& p, const std::string& uuid,
                                 const std::vector<std::string>& uuids) {
  const MpsConfig cfg = p.config.sharing->mps.value_or(MpsConfig{});
  AppliedSharing a;
  a.strategy = "MPS";
  std::optional<api::Quantity> limit = cfg.default_pinned_device_memory_limit;
  if (auto f = cfg.default_per_device_pinned_memory_limit.find(uuid);
      f != cfg.default_per_device_pinned_memory_limit.end()) {
    limit = f->second;
  }
  size_t index = std::find(uuids.begin(), uuids.end(), uuid) - uuids.begin();
  if (auto f = cfg.default_per_device_pinned_memory_limit.find(std::to_string(index));
      f != cfg.default_per_device_pinned_memory_limit.end()) {
    limit = f->second;
  }
  auto memory = p.result->consumedCapacity.find("memory");
  if (memory != p.result->consumedCapacity.end()) limit = memory->second;
  if (limit) {
    ASSIGN_OR_RETURN(a.pinned_memory_limit_mib,
                     limit_mib(*limit, fmt::format("claim {}/{}: device {}: MPS pinned device memory limit",
                                                   claim.namespace_, claim.name, p.result->device)));
  }
  if (cfg.default_active_thread_percentage) {
    a.active_thread_percentage = cfg.default_active_thread_percentage;
  } else if (memory != p.result->consumedCapacity.end()) {
    int64_t total = p.ref.profile ? p.ref.profile->memory_mib << 20 : p.ref.gpu->memory_bytes;
    if (total > 0) {
      __int128 used = memory->second.value();  // 128 bits: no overflow of used * 100
      a.active_thread_percentage = static_cast<int64_t>(std::clamp<__int128>((used * 100 + total - 1) / total, 1, 100));
    }
  }
  return a;
}

// The environment a claim's containers get for its MPS devices: the daemon's
// pipe directory (the host path on simulated GPUs, which run no container),
// and the claim's own limits, one value for all its MPS devices as a process
// has one environment: CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=<uuid>=<N>M,... and the
// largest active thread percentage.
std::vector<std::string> mps_client_env(const PreparedClaim& c, bool simulated) {
  std::vector<std::string> env;
  if (!c.mps_pipe_dir) return env;
  env.push_back("CUDA_MPS_PIPE_DIRECTORY=" + (simulated ? *c.mps_pipe_dir : std::string("/tmp/nvidia-mps")));
  std::vector<std::string> limits;
  std::set<std::string> seen;
  std::optional<int64_t> percentage;
  for (const PreparedDevice& d : c.devices) {
    if (!is_strategy(d.sharing, "MPS") || !seen.insert(d.uuid).second) continue;
    if (d.sharing->pinned_memory_limit_mib) {
      limits.push_back(fmt::format("{}={}M", d.uuid, *d.sharing->pinned_memory_limit_mib));
    }
    if (d.sharing->active_thread_percentage) {
      percentage = std::max(percentage.value_or(0), *d.sharing->active_thread_percentage);
    }
  }
  if (!limits.empty()) env.push_back("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=" + join(limits, ","));
  if (percentage) env.push_back(fmt::format("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE={}", *percentage));
  return env;
}

}  // namespace

DeviceState::DeviceState(GpuBackend& backend, CommandRunner& runner, PrepareOptions options, std::vector<GpuInfo> gpus,
                         CheckpointFile file, Checkpoint checkpoint)
    : backend_(backend),
      runner_(runner),
      options_(std::move(options)),
      simulated_(options_.simulated.value_or(backend.kind() == "sim")),
      gpus_(std::move(gpus)),
      common_edits_(simulated_ ? CdiEdits{}
                               : nvidia_common_edits(find_driver_files(options_.driver_root.root,
                                                                       gpus_.empty() ? "" : gpus_[0].driver_version),
                                                     options_.driver_root.host_root)),
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
  std::vector<std::optional<AppliedSharing>> wanted;
  std::set<std::string> mps_names;
  for (const Planned& p : plan) {
    PreparedDevice d;
    d.requests = {p.result->request};
    d.pool = p.result->pool;
    d.device = p.result->device;
    d.share_id = p.result->shareID;
    d.consumed_capacity = p.result->consumedCapacity;
    d.cdi_device_ids = {cdi_device_id(claim.uid, p.result->device)};
    if (p.ref.profile == nullptr) {
      d.uuid = p.ref.gpu->uuid;
    } else if (auto m = shared_mig(checkpoint_, claim.uid, d.pool, d.device)) {
      d.mig = m;
      d.uuid = m->uuid;
    }
    wanted.push_back(wanted_sharing(p));
    if (is_strategy(wanted.back(), "MPS")) mps_names.insert(d.device);
    entry.devices.push_back(std::move(d));
  }
  const std::vector<std::string> mps_set(mps_names.begin(), mps_names.end());
  RETURN_IF_ERROR(check_sharing_conflicts(checkpoint_, claim, entry.devices, wanted, mps_set));
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
      stored.devices[i].mig = stored.devices[pos->second].mig;
      continue;
    }
    if (p.ref.profile == nullptr || stored.devices[i].mig) continue;
    ASSIGN_OR_RETURN(MigInstance m,
                     backend_.create_mig_device(p.ref.gpu->uuid, p.ref.profile->id, p.ref.placement.start));
    stored.devices[i].mig = m;
    stored.devices[i].uuid = m.uuid;
    RETURN_IF_ERROR(save_locked());
  }

  // Sharing: each device's setup is recorded once it is in place, so that a
  // rollback undoes only what was done.
  std::set<std::string> timesliced;
  std::vector<size_t> mps;
  for (size_t i = 0; i < plan.size(); ++i) {
    if (is_strategy(wanted[i], "MPS")) mps.push_back(i);
    if (!is_strategy(wanted[i], "TimeSlicing")) continue;
    const std::string& uuid = stored.devices[i].uuid;
    // Once per GPU while it has time-sliced shares (none on MIG devices: NVML
    // has no per-MIG timeslice).
    if (plan[i].ref.profile == nullptr && timesliced.insert(uuid).second &&
        !held_by_other(checkpoint_, claim.uid, true, timesliced_gpu(uuid))) {
      RETURN_IF_ERROR(runner_.run({{"nvidia-smi", "-i", uuid, "-c", "DEFAULT"}, {}, ""}));
      RETURN_IF_ERROR(runner_.run({{"nvidia-smi", "compute-policy", "-i", uuid, "--set-timeslice",
                                    std::to_string(timeslice_value(wanted[i]->interval))},
                                   {},
                                   ""}));
    }
    stored.devices[i].sharing = wanted[i];
  }
  if (!timesliced.empty()) RETURN_IF_ERROR(save_locked());
  if (!mps.empty()) {
    std::vector<std::string> uuids, gpus;
    for (size_t i : mps) {
      const PreparedDevice& d = stored.devices[i];
      if (std::find(uuids.begin(), uuids.end(), d.uuid) == uuids.end()) uuids.push_back(d.uuid);
      if (std::find(gpus.begin(), gpus.end(), gpu_uuid(d)) == gpus.end()) gpus.push_back(gpu_uuid(d));
    }
    std::vector<AppliedSharing> shares;
    for (size_t i : mps) {
      ASSIGN_OR_RETURN(AppliedSharing a, mps_share(claim, plan[i], stored.devices[i].uuid, uuids));
      shares.push_back(std::move(a));
    }
    const std::string pipe_dir = mps_pipe_dir(options_, mps_set);
    auto same_daemon = [&](const PreparedClaim& c) { return c.mps_pipe_dir == pipe_dir; };
    if (!held_by_other(checkpoint_, claim.uid, true, same_daemon)) {
      RETURN_IF_ERROR(start_mps_daemon_locked(pipe_dir, uuids, gpus));
    }
    stored.mps_pipe_dir = pipe_dir;
    for (size_t k = 0; k < mps.size(); ++k) stored.devices[mps[k]].sharing = shares[k];
    RETURN_IF_ERROR(save_locked());
  }

  // CDI spec: one CDI device per allocated device.
  CdiSpec spec;
  if (!simulated_) spec.edits = common_edits_;
  std::vector<std::string> claim_uuids;
  for (const PreparedDevice& d : stored.devices) {
    if (std::find(claim_uuids.begin(), claim_uuids.end(), d.uuid) == claim_uuids.end()) claim_uuids.push_back(d.uuid);
  }
  const std::vector<std::string> mps_env = mps_client_env(stored, simulated_);
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
    if (is_strategy(stored.devices[i].sharing, "MPS")) {
      dev.edits.env.insert(dev.edits.env.end(), mps_env.begin(), mps_env.end());
      if (!simulated_) {
        const std::string root = mps_root(*stored.mps_pipe_dir);
        dev.edits.mounts.push_back({root + "/pipe", "/tmp/nvidia-mps", {"rw", "nosuid", "nodev", "bind"}});
        dev.edits.mounts.push_back({root + "/shm", "/dev/shm", {"rw", "nosuid", "nodev", "bind"}});
      }
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

Status DeviceState::start_mps_daemon_locked(const std::string& pipe_dir, const std::vector<std::string>& uuids,
                                            const std::vector<std::string>& gpus) {
  const std::string root = mps_root(pipe_dir);
  const Command quit{{"nvidia-cuda-mps-control"}, {"CUDA_MPS_PIPE_DIRECTORY=" + pipe_dir}, "quit"};
  std::error_code ec;
  if (std::filesystem::exists(root, ec)) {
    // Left by a claim that crashed during prepare or never finished: that
    // daemon (if it still runs) makes way for this one.
    (void)runner_.run(quit);
  }
  for (const std::string& d : {pipe_dir, root + "/shm", root + "/log"}) std::filesystem::create_directories(d, ec);
  if (ec) return internal_error(fmt::format("creating MPS directories under {}: {}", root, ec.message()));
  for (const std::string& gpu : gpus) {
    Status st = runner_.run({{"nvidia-smi", "-i", gpu, "-c", "EXCLUSIVE_PROCESS"}, {}, ""}).status();
    if (!st.ok()) return st;
  }
  const std::vector<std::string> env = {"CUDA_VISIBLE_DEVICES=" + join(uuids, ","),
                                        "CUDA_MPS_PIPE_DIRECTORY=" + pipe_dir,
                                        "CUDA_MPS_LOG_DIRECTORY=" + root + "/log"};
  return runner_.run({{"nvidia-cuda-mps-control", "-d"}, env, ""}).status();
}

Status DeviceState::teardown_locked(const std::string& uid, const PreparedClaim& claim) {
  Status first;
  auto note = [&](Status s) {
    if (first.ok() && !s.ok()) first = std::move(s);
  };
  auto run = [&](Command c) { note(runner_.run(c).status()); };
  // What another claim (in any state) still holds stays.
  auto held = [&](auto pred) { return held_by_other(checkpoint_, uid, false, pred); };
  if (claim.mps_pipe_dir) {
    const std::string& pipe_dir = *claim.mps_pipe_dir;
    if (!held([&](const PreparedClaim& c) { return c.mps_pipe_dir == pipe_dir; })) {
      run({{"nvidia-cuda-mps-control"}, {"CUDA_MPS_PIPE_DIRECTORY=" + pipe_dir}, "quit"});
      std::set<std::string> gpus;
      for (const PreparedDevice& d : claim.devices) {
        if (is_strategy(d.sharing, "MPS")) gpus.insert(gpu_uuid(d));
      }
      for (const std::string& gpu : gpus) {
        auto mps_on_gpu = [&](const PreparedClaim& c) {
          return std::any_of(c.devices.begin(), c.devices.end(), [&](const PreparedDevice& d) {
            return is_strategy(d.sharing, "MPS") && gpu_uuid(d) == gpu;
          });
        };
        if (!held(mps_on_gpu)) run({{"nvidia-smi", "-i", gpu, "-c", "DEFAULT"}, {}, ""});
      }
      std::error_code ec;
      std::filesystem::remove_all(mps_root(pipe_dir), ec);
    }
  }
  std::set<std::string> reset;
  for (const PreparedDevice& d : claim.devices) {
    if (d.mig || !is_strategy(d.sharing, "TimeSlicing") || !reset.insert(d.uuid).second) continue;
    if (held(timesliced_gpu(d.uuid))) continue;
    // The last time-sliced share of this GPU is gone: back to the default.
    run({{"nvidia-smi", "-i", d.uuid, "-c", "DEFAULT"}, {}, ""});
    run({{"nvidia-smi", "compute-policy", "-i", d.uuid, "--set-timeslice", "0"}, {}, ""});
  }
  std::set<std::pair<std::string, int>> destroyed;
  for (const PreparedDevice& d : claim.devices) {
    if (!d.mig || !destroyed.insert({d.mig->parent_uuid, d.mig->gi_id}).second) continue;
    const MigInstance& m = *d.mig;
    auto uses_mig = [&](const PreparedClaim& c) {
      return std::any_of(c.devices.begin(), c.devices.end(), [&](const PreparedDevice& o) {
        return o.mig && o.mig->parent_uuid == m.parent_uuid && o.mig->gi_id == m.gi_id;
      });
    };
    if (!held(uses_mig)) note(backend_.destroy_mig_device(m));
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
