// Several claims allocated shares of one device (allowMultipleAllocations:
// shareID + consumedCapacity): time-slicing and MPS applied once per GPU,
// per-claim MPS limits, reference-counted teardown, restart and crash
// recovery, conflicting sharing.
#include <filesystem>

#include <gtest/gtest.h>

#include "node/prepare.h"
#include "node/sim.h"
#include "test_dir.h"

namespace draplane::node {
namespace {

using testing::read_file;
using testing::TempDir;

constexpr const char* kTimeSlicing =
    R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"TimeSlicing","timeSlicingConfig":{"interval":"INTERVAL"}}})";
constexpr const char* kMps =
    R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"MPS"}})";

std::string time_slicing(const std::string& interval) {
  std::string s = kTimeSlicing;
  return s.replace(s.find("INTERVAL"), 8, interval);
}

// One share of `device` with this config (empty: none) and consumed capacity.
api::AllocationResult share(const std::string& device, const std::string& share_id, const std::string& params,
                            std::map<std::string, api::Quantity> consumed = {}) {
  api::AllocationResult a;
  api::DeviceRequestAllocationResult r;
  r.request = "gpu";
  r.driver = "gpu.nvidia.com";
  r.pool = "node-a";
  r.device = device;
  r.shareID = share_id;
  r.consumedCapacity = std::move(consumed);
  a.devices.results.push_back(r);
  if (!params.empty()) {
    api::DeviceAllocationConfiguration c;
    c.source = "FromClass";
    c.opaque = api::OpaqueDeviceConfiguration{"gpu.nvidia.com", api::RawJson{params}};
    a.devices.config.push_back(c);
  }
  return a;
}

std::map<std::string, api::Quantity> memory(const char* q) { return {{"memory", *api::Quantity::parse(q)}}; }

class PrepareSharingTest : public ::testing::Test {
 protected:
  PrepareSharingTest() : dir_("prepare-sharing"), sim_(*parse_sim_spec("2xH100", SimOptions{.seed = 5})) {
    gpus_ = *sim_.discover();
    g0_ = gpus_[0].uuid;
    g1_ = gpus_[1].uuid;
  }

  std::unique_ptr<DeviceState> state() {
    PrepareOptions o;
    o.node_name = "node-a";
    o.cdi_dir = dir_.file("cdi");
    o.plugin_dir = dir_.file("plugin");
    auto s = DeviceState::create(sim_, runner_, o, "boot-1");
    EXPECT_TRUE(s.has_value()) << s.error().message();
    return std::move(*s);
  }
  // Prepares and expects success.
  void prepare(DeviceState& s, const std::string& uid, const api::AllocationResult& a) {
    auto r = s.prepare({"ns-" + uid, "claim-" + uid, uid}, a);
    ASSERT_TRUE(r.has_value()) << r.error().message();
  }
  // The commands run since the last call.
  std::vector<std::string> commands() {
    auto log = runner_.log();
    std::vector<std::string> out(log.begin() + static_cast<std::ptrdiff_t>(seen_), log.end());
    seen_ = log.size();
    return out;
  }
  // The env of the claim's CDI device for `device`.
  std::vector<std::string> cdi_env(const std::string& uid, const std::string& device) {
    auto spec = decode_cdi_spec(read_file(cdi_spec_path(dir_.file("cdi"), uid)));
    EXPECT_TRUE(spec.has_value());
    for (const CdiDevice& d : spec->devices) {
      if (d.name == cdi_device_name(uid, device)) return d.edits.env;
    }
    ADD_FAILURE() << "no CDI device " << device << " for " << uid;
    return {};
  }
  Checkpoint checkpoint() { return *CheckpointFile(dir_.file("plugin/checkpoint.json"), "boot-1").load(); }
  std::string pipe(const std::string& device) { return dir_.file("plugin") + "/mps/" + device + "/pipe"; }

  TempDir dir_;
  SimBackend sim_;
  RecordingRunner runner_;
  std::vector<GpuInfo> gpus_;
  std::string g0_, g1_;
  size_t seen_ = 0;
};

TEST_F(PrepareSharingTest, TimeSlicingIsSetOncePerGpuAndResetAfterTheLastShare) {
  auto s = state();
  for (const char* uid : {"a", "b", "c"}) {
    prepare(*s, uid,
            share("gpu-0", std::string("share-") + uid, time_slicing("Medium"), {{"shares", api::Quantity::from_int(1)}}));
    EXPECT_EQ(cdi_env(uid, "gpu-0"), std::vector<std::string>{"NVIDIA_VISIBLE_DEVICES=" + g0_});
  }
  EXPECT_EQ(commands(), (std::vector<std::string>{"nvidia-smi -i " + g0_ + " -c DEFAULT",
                                                  "nvidia-smi compute-policy -i " + g0_ + " --set-timeslice 2"}));
  Checkpoint c = checkpoint();
  ASSERT_EQ(c.claims.size(), 3u);
  const PreparedDevice& d = c.claims.at("b").devices[0];
  EXPECT_EQ(d.share_id, "share-b");
  EXPECT_EQ(d.consumed_capacity.at("shares"), api::Quantity::from_int(1));
  EXPECT_EQ(d.sharing, (AppliedSharing{"TimeSlicing", "Medium", std::nullopt, std::nullopt}));

  ASSERT_TRUE(s->unprepare("a").ok());
  ASSERT_TRUE(s->unprepare("c").ok());
  EXPECT_TRUE(commands().empty());  // b still time-slices the GPU
  ASSERT_TRUE(s->unprepare("b").ok());
  EXPECT_EQ(commands(), (std::vector<std::string>{"nvidia-smi -i " + g0_ + " -c DEFAULT",
                                                  "nvidia-smi compute-policy -i " + g0_ + " --set-timeslice 0"}));
  EXPECT_TRUE(s->prepared_claims().empty());
}

TEST_F(PrepareSharingTest, MpsSharesOneDaemonWithPerClaimLimits) {
  auto s = state();
  for (const char* uid : {"a", "b", "c"}) prepare(*s, uid, share("gpu-0", uid, kMps, memory("20Gi")));
  const std::string env = "CUDA_VISIBLE_DEVICES=" + g0_ + " CUDA_MPS_PIPE_DIRECTORY=" + pipe("gpu-0") +
                          " CUDA_MPS_LOG_DIRECTORY=" + dir_.file("plugin") + "/mps/gpu-0/log ";
  EXPECT_EQ(commands(), (std::vector<std::string>{"nvidia-smi -i " + g0_ + " -c EXCLUSIVE_PROCESS",
                                                  env + "nvidia-cuda-mps-control -d"}));
  // 20Gi of the H100's 81559Mi: 25.1% of its threads, rounded up.
  for (const char* uid : {"a", "b", "c"}) {
    EXPECT_EQ(cdi_env(uid, "gpu-0"), (std::vector<std::string>{"NVIDIA_VISIBLE_DEVICES=" + g0_,
                                                               "CUDA_MPS_PIPE_DIRECTORY=" + pipe("gpu-0"),
                                                               "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=" + g0_ + "=20480M",
                                                               "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=26"}));
  }
  // MpsConfig gives the limits of a share without consumed memory; a config
  // percentage beats the memory share.
  auto d = share("gpu-1", "d", R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"MPS","mpsConfig":{"defaultActiveThreadPercentage":40,"defaultPinnedDeviceMemoryLimit":"8Gi"}}})");
  prepare(*s, "d", d);
  EXPECT_EQ(cdi_env("d", "gpu-1"), (std::vector<std::string>{"NVIDIA_VISIBLE_DEVICES=" + g1_,
                                                             "CUDA_MPS_PIPE_DIRECTORY=" + pipe("gpu-1"),
                                                             "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=" + g1_ + "=8192M",
                                                             "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=40"}));
  auto e = share("gpu-1", "e", R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"MPS","mpsConfig":{"defaultActiveThreadPercentage":40}}})",
                 memory("30Gi"));
  prepare(*s, "e", e);
  EXPECT_EQ(cdi_env("e", "gpu-1"), (std::vector<std::string>{"NVIDIA_VISIBLE_DEVICES=" + g1_,
                                                             "CUDA_MPS_PIPE_DIRECTORY=" + pipe("gpu-1"),
                                                             "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=" + g1_ + "=30720M",
                                                             "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=40"}));
  commands();
  Checkpoint c = checkpoint();
  EXPECT_EQ(c.claims.at("b").mps_pipe_dir, pipe("gpu-0"));
  EXPECT_EQ(c.claims.at("b").devices[0].sharing, (AppliedSharing{"MPS", "", 20480, 26}));
  EXPECT_EQ(c.claims.at("b").devices[0].consumed_capacity, memory("20Gi"));

  ASSERT_TRUE(s->unprepare("b").ok());
  ASSERT_TRUE(s->unprepare("a").ok());
  EXPECT_TRUE(commands().empty());
  EXPECT_TRUE(std::filesystem::exists(pipe("gpu-0")));
  ASSERT_TRUE(s->unprepare("c").ok());
  EXPECT_EQ(commands(), (std::vector<std::string>{
                            "CUDA_MPS_PIPE_DIRECTORY=" + pipe("gpu-0") + " nvidia-cuda-mps-control <<< quit",
                            "nvidia-smi -i " + g0_ + " -c DEFAULT"}));
  EXPECT_FALSE(std::filesystem::exists(dir_.file("plugin") + "/mps/gpu-0"));
  EXPECT_TRUE(std::filesystem::exists(pipe("gpu-1")));
}

TEST_F(PrepareSharingTest, RealGpusMountTheSharedDaemon) {
  PrepareOptions o;
  o.node_name = "node-a";
  o.cdi_dir = dir_.file("cdi");
  o.plugin_dir = dir_.file("plugin");
  o.simulated = false;
  auto s = *DeviceState::create(sim_, runner_, o, "boot-1");
  prepare(*s, "a", share("gpu-0", "a", kMps, memory("10Gi")));
  prepare(*s, "b", share("gpu-0", "b", kMps, memory("40Gi")));
  auto spec = *decode_cdi_spec(read_file(cdi_spec_path(dir_.file("cdi"), "b")));
  EXPECT_EQ(spec.devices[0].edits.env, (std::vector<std::string>{"CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps",
                                                                 "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=" + g0_ + "=40960M",
                                                                 "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=51"}));
  ASSERT_EQ(spec.devices[0].edits.mounts.size(), 2u);
  EXPECT_EQ(spec.devices[0].edits.mounts[0],
            (CdiMount{pipe("gpu-0"), "/tmp/nvidia-mps", {"rw", "nosuid", "nodev", "bind"}}));
  EXPECT_EQ(spec.devices[0].edits.mounts[1].host_path, dir_.file("plugin") + "/mps/gpu-0/shm");
}

TEST_F(PrepareSharingTest, RestartKeepsTheReferenceCounts) {
  {
    auto s = state();
    prepare(*s, "a", share("gpu-0", "a", kMps, memory("20Gi")));
    prepare(*s, "b", share("gpu-0", "b", kMps, memory("20Gi")));
    prepare(*s, "t", share("gpu-1", "t", time_slicing("Short")));
  }
  commands();
  auto s = state();  // a restarted agent knows what the GPUs are used for
  prepare(*s, "c", share("gpu-0", "c", kMps, memory("20Gi")));
  prepare(*s, "u", share("gpu-1", "u", time_slicing("Short")));
  EXPECT_TRUE(commands().empty());  // the daemon runs, the timeslice is set
  prepare(*s, "b", share("gpu-0", "b", kMps, memory("20Gi")));  // idempotent
  for (const char* uid : {"a", "b", "t"}) ASSERT_TRUE(s->unprepare(uid).ok());
  EXPECT_TRUE(commands().empty());
  ASSERT_TRUE(state()->unprepare("c").ok());
  ASSERT_TRUE(state()->unprepare("u").ok());
  EXPECT_EQ(commands(), (std::vector<std::string>{
                            "CUDA_MPS_PIPE_DIRECTORY=" + pipe("gpu-0") + " nvidia-cuda-mps-control <<< quit",
                            "nvidia-smi -i " + g0_ + " -c DEFAULT",
                            "nvidia-smi -i " + g1_ + " -c DEFAULT",
                            "nvidia-smi compute-policy -i " + g1_ + " --set-timeslice 0"}));
}

TEST_F(PrepareSharingTest, CrashDuringPrepareRollsBackOnlyTheClaimsPart) {
  auto s = state();
  prepare(*s, "a", share("gpu-0", "a", time_slicing("Long")));
  prepare(*s, "m", share("gpu-1", "m", kMps, memory("20Gi")));
  // What crashes right after applying sharing leave behind: PrepareStarted
  // entries that recorded their share, b time-slicing gpu-0 with a, n using
  // gpu-1's daemon with m.
  Checkpoint c = checkpoint();
  PreparedClaim b = c.claims.at("a");
  b.namespace_ = "ns-b";
  b.name = "claim-b";
  b.state = PrepareState::kPrepareStarted;
  b.devices[0].share_id = "b";
  c.claims["b"] = b;
  PreparedClaim n = c.claims.at("m");
  n.state = PrepareState::kPrepareStarted;
  c.claims["n"] = n;
  ASSERT_TRUE(CheckpointFile(dir_.file("plugin/checkpoint.json"), "boot-1").save(c).ok());
  commands();

  s = state();
  // The retry rolls b back without touching a's timeslice, then prepares it again.
  prepare(*s, "b", share("gpu-0", "b", time_slicing("Long")));
  EXPECT_TRUE(commands().empty());
  EXPECT_EQ(checkpoint().claims.at("b").state, PrepareState::kPrepareCompleted);
  // m's daemon outlives n's rollback; then m's unprepare stops it.
  ASSERT_TRUE(s->unprepare("m").ok());
  EXPECT_TRUE(commands().empty());
  ASSERT_TRUE(s->unprepare("n").ok());
  EXPECT_EQ(commands(), (std::vector<std::string>{
                            "CUDA_MPS_PIPE_DIRECTORY=" + pipe("gpu-1") + " nvidia-cuda-mps-control <<< quit",
                            "nvidia-smi -i " + g1_ + " -c DEFAULT"}));
  ASSERT_TRUE(s->unprepare("a").ok());
  ASSERT_TRUE(s->unprepare("b").ok());
  EXPECT_EQ(commands(), (std::vector<std::string>{"nvidia-smi -i " + g0_ + " -c DEFAULT",
                                                  "nvidia-smi compute-policy -i " + g0_ + " --set-timeslice 0"}));
}

TEST_F(PrepareSharingTest, DaemonLeftByACrashedClaimMakesWay) {
  // x crashed after starting gpu-0's daemon (its directory exists) and before
  // recording it; y, the next MPS share of gpu-0, stops that daemon and starts
  // its own.
  auto s = state();
  prepare(*s, "x", share("gpu-0", "x", kMps));
  Checkpoint c = checkpoint();
  c.claims.at("x").state = PrepareState::kPrepareStarted;
  c.claims.at("x").mps_pipe_dir.reset();
  c.claims.at("x").devices[0].sharing.reset();
  ASSERT_TRUE(CheckpointFile(dir_.file("plugin/checkpoint.json"), "boot-1").save(c).ok());
  commands();
  s = state();
  prepare(*s, "y", share("gpu-0", "y", kMps));
  const std::string env = "CUDA_VISIBLE_DEVICES=" + g0_ + " CUDA_MPS_PIPE_DIRECTORY=" + pipe("gpu-0") +
                          " CUDA_MPS_LOG_DIRECTORY=" + dir_.file("plugin") + "/mps/gpu-0/log ";
  EXPECT_EQ(commands(), (std::vector<std::string>{
                            "CUDA_MPS_PIPE_DIRECTORY=" + pipe("gpu-0") + " nvidia-cuda-mps-control <<< quit",
                            "nvidia-smi -i " + g0_ + " -c EXCLUSIVE_PROCESS", env + "nvidia-cuda-mps-control -d"}));
  ASSERT_TRUE(s->unprepare("x").ok());
  EXPECT_TRUE(commands().empty());
  EXPECT_TRUE(std::filesystem::exists(pipe("gpu-0")));
}

TEST_F(PrepareSharingTest, ConflictingSharingIsRefused) {
  auto s = state();
  prepare(*s, "a", share("gpu-0", "a", time_slicing("Default")));
  auto mps = s->prepare({"team-b", "infer", "uid-b"}, share("gpu-0", "b", kMps));
  ASSERT_FALSE(mps.has_value());
  EXPECT_EQ(mps.error().code(), Code::kFailedPrecondition);
  EXPECT_EQ(mps.error().message(),
            "claim team-b/infer: device gpu-0 (" + g0_ +
                ") cannot be shared with MPS: claim ns-a/claim-a (a) is prepared on it with TimeSlicing (interval "
                "Default); claims sharing a GPU must use the same sharing strategy and interval");
  auto longer = s->prepare({"team-c", "train", "uid-c"}, share("gpu-0", "c", time_slicing("Long")));
  ASSERT_FALSE(longer.has_value());
  EXPECT_EQ(longer.error().message(),
            "claim team-c/train: device gpu-0 (" + g0_ +
                ") cannot be shared with TimeSlicing (interval Long): claim ns-a/claim-a (a) is prepared on it with "
                "TimeSlicing (interval Default); claims sharing a GPU must use the same sharing strategy and interval");
  EXPECT_EQ(s->prepared_claims(), std::vector<std::string>{"a"});
  EXPECT_FALSE(std::filesystem::exists(cdi_spec_path(dir_.file("cdi"), "uid-b")));
  // Without sharing config a claim fits a time-sliced GPU, not an MPS one.
  prepare(*s, "plain", share("gpu-0", "plain", ""));
  prepare(*s, "m", share("gpu-1", "m", kMps));
  auto plain = s->prepare({"ns", "plain-1", "plain-1"}, share("gpu-1", "p1", ""));
  ASSERT_FALSE(plain.has_value());
  EXPECT_EQ(plain.error().message(),
            "claim ns/plain-1: device gpu-1 (" + g1_ +
                ") cannot be shared with no sharing: claim ns-m/claim-m (m) is prepared on it with MPS; claims sharing "
                "a GPU must use the same sharing strategy and interval");
  // One daemon per GPU: an MPS claim on gpu-1 and gpu-0 cannot join gpu-1's.
  ASSERT_TRUE(s->unprepare("a").ok());
  ASSERT_TRUE(s->unprepare("plain").ok());
  api::AllocationResult both = share("gpu-0", "w0", kMps);
  both.devices.results.push_back(share("gpu-1", "w1", kMps).devices.results[0]);
  auto wide = s->prepare({"ns", "wide", "wide"}, both);
  ASSERT_FALSE(wide.has_value());
  EXPECT_EQ(wide.error().message(),
            "claim ns/wide: MPS devices gpu-0,gpu-1 overlap the MPS devices gpu-1 of claim ns-m/claim-m (m): one MPS "
            "control daemon serves a GPU, so claims sharing it must use the same MPS devices");
}

TEST_F(PrepareSharingTest, PinnedLimitBelowOneMebibyteIsInvalid) {
  auto s = state();
  auto r = s->prepare({"ns", "tiny", "tiny"}, share("gpu-0", "t", kMps, memory("512Ki")));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Code::kInvalid);
  EXPECT_EQ(r.error().message(),
            "claim ns/tiny: device gpu-0: MPS pinned device memory limit: Invalid value: \"512Ki\": must be at least "
            "1Mi");
  EXPECT_TRUE(s->prepared_claims().empty());
}

TEST_F(PrepareSharingTest, SharedMigDeviceIsCreatedOnceAndDestroyedAfterTheLastShare) {
  auto s = state();
  prepare(*s, "a", share("gpu-0-mig-3g40gb-9-0", "a", ""));
  prepare(*s, "b", share("gpu-0-mig-3g40gb-9-0", "b", ""));
  auto migs = *sim_.list_mig_devices("");
  ASSERT_EQ(migs.size(), 1u);
  EXPECT_EQ(cdi_env("b", "gpu-0-mig-3g40gb-9-0"), std::vector<std::string>{"NVIDIA_VISIBLE_DEVICES=" + migs[0].uuid});
  ASSERT_TRUE(s->unprepare("a").ok());
  EXPECT_EQ(sim_.list_mig_devices("")->size(), 1u);
  ASSERT_TRUE(state()->unprepare("b").ok());
  EXPECT_TRUE(sim_.list_mig_devices("")->empty());
}

TEST_F(PrepareSharingTest, MpsOnASharedMigDevice) {
  const std::string mig = "gpu-0-mig-3g40gb-9-0";
  const std::string mig_cfg =
      R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"MigDeviceConfig","sharing":{"strategy":"MPS"}})";
  auto s = state();
  prepare(*s, "a", share(mig, "a", mig_cfg, memory("10Gi")));
  prepare(*s, "b", share(mig, "b", mig_cfg, memory("20Gi")));
  auto migs = *sim_.list_mig_devices("");
  ASSERT_EQ(migs.size(), 1u);
  const std::string env = "CUDA_VISIBLE_DEVICES=" + migs[0].uuid + " CUDA_MPS_PIPE_DIRECTORY=" + pipe(mig) +
                          " CUDA_MPS_LOG_DIRECTORY=" + dir_.file("plugin") + "/mps/" + mig + "/log ";
  EXPECT_EQ(commands(), (std::vector<std::string>{"nvidia-smi -i " + g0_ + " -c EXCLUSIVE_PROCESS",
                                                  env + "nvidia-cuda-mps-control -d"}));
  // 20Gi of the 3g.40gb's 39.5Gi.
  EXPECT_EQ(cdi_env("b", mig), (std::vector<std::string>{"NVIDIA_VISIBLE_DEVICES=" + migs[0].uuid,
                                                         "CUDA_MPS_PIPE_DIRECTORY=" + pipe(mig),
                                                         "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=" + migs[0].uuid + "=20480M",
                                                         "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=51"}));
  ASSERT_TRUE(s->unprepare("b").ok());
  EXPECT_TRUE(commands().empty());
  EXPECT_EQ(sim_.list_mig_devices("")->size(), 1u);
  ASSERT_TRUE(s->unprepare("a").ok());
  EXPECT_EQ(commands(), (std::vector<std::string>{
                            "CUDA_MPS_PIPE_DIRECTORY=" + pipe(mig) + " nvidia-cuda-mps-control <<< quit",
                            "nvidia-smi -i " + g0_ + " -c DEFAULT"}));
  EXPECT_TRUE(sim_.list_mig_devices("")->empty());
}

}  // namespace
}  // namespace draplane::node
