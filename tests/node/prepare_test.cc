#include "node/prepare.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "node/sim.h"
#include "test_dir.h"

namespace draplane::node {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::write_file;

api::DeviceRequestAllocationResult result(const std::string& request, const std::string& device,
                                          const std::string& pool = "node-a",
                                          const std::string& driver = "gpu.nvidia.com") {
  api::DeviceRequestAllocationResult r;
  r.request = request;
  r.driver = driver;
  r.pool = pool;
  r.device = device;
  return r;
}

api::DeviceAllocationConfiguration config(const char* source, const char* params) {
  api::DeviceAllocationConfiguration c;
  c.source = source;
  c.opaque = api::OpaqueDeviceConfiguration{"gpu.nvidia.com", api::RawJson{params}};
  return c;
}

class PrepareTest : public ::testing::Test {
 protected:
  PrepareTest() : dir_("prepare"), sim_(*parse_sim_spec("2xH100", SimOptions{.seed = 5})) {
    gpus_ = *sim_.discover();
  }

  std::unique_ptr<DeviceState> state(const std::string& boot = "boot-1") {
    PrepareOptions o;
    o.node_name = "node-a";
    o.cdi_dir = dir_.file("cdi");
    o.plugin_dir = dir_.file("plugin");
    auto s = DeviceState::create(sim_, runner_, o, boot);
    EXPECT_TRUE(s.has_value()) << s.error().message();
    return std::move(*s);
  }
  std::string spec_path(const std::string& uid) { return cdi_spec_path(dir_.file("cdi"), uid); }

  TempDir dir_;
  SimBackend sim_;
  RecordingRunner runner_;
  std::vector<GpuInfo> gpus_;
};

TEST_F(PrepareTest, FullGpusWriteCdiAndAreIdempotent) {
  auto s = state();
  api::AllocationResult a;
  a.devices.results = {result("gpus", "gpu-0"), result("gpus", "gpu-1"),
                       result("other", "gpu-0", "node-b"), result("net", "eth0", "node-a", "nic.example.com")};
  ClaimRef claim{"default", "two-gpus", "uid-1"};
  auto r = s->prepare(claim, a);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_EQ(r->size(), 2u);  // other pools and drivers are not ours
  EXPECT_EQ((*r)[0], (PreparedDeviceResult{{"gpus"}, "node-a", "gpu-0", {"k8s.gpu.nvidia.com/claim=uid-1-gpu-0"},
                                          std::nullopt}));
  EXPECT_EQ((*r)[1].cdi_device_ids, std::vector<std::string>{"k8s.gpu.nvidia.com/claim=uid-1-gpu-1"});
  std::string uuids = gpus_[0].uuid + "," + gpus_[1].uuid;
  EXPECT_EQ(read_file(spec_path("uid-1")),
            "cdiVersion: \"0.5.0\"\n"
            "kind: k8s.gpu.nvidia.com/claim\n"
            "devices:\n"
            "  - name: uid-1-gpu-0\n"
            "    containerEdits:\n"
            "      env:\n"
            "        - \"NVIDIA_VISIBLE_DEVICES=" + uuids + "\"\n"
            "  - name: uid-1-gpu-1\n"
            "    containerEdits:\n"
            "      env:\n"
            "        - \"NVIDIA_VISIBLE_DEVICES=" + uuids + "\"\n");
  // Again: same answer, nothing redone (the spec is not rewritten).
  std::filesystem::remove(spec_path("uid-1"));
  auto again = s->prepare(claim, a);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(*again, *r);
  EXPECT_FALSE(std::filesystem::exists(spec_path("uid-1")));
  EXPECT_EQ(s->prepared_claims(), std::vector<std::string>{"uid-1"});

  // A restarted driver still knows the claim.
  auto restarted = state();
  EXPECT_EQ(restarted->prepared_claims(), std::vector<std::string>{"uid-1"});
  EXPECT_EQ(*restarted->prepare(claim, a), *r);

  ASSERT_TRUE(restarted->unprepare("uid-1").ok());
  ASSERT_TRUE(restarted->unprepare("uid-1").ok());  // idempotent
  EXPECT_TRUE(restarted->prepared_claims().empty());
  EXPECT_TRUE(state()->prepared_claims().empty());
}

TEST_F(PrepareTest, NothingForThisDriver) {
  auto s = state();
  api::AllocationResult a;
  a.devices.results = {result("r", "gpu-0", "node-b")};
  auto r = s->prepare({"ns", "c", "uid-x"}, a);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->empty());
  EXPECT_FALSE(std::filesystem::exists(spec_path("uid-x")));
  EXPECT_TRUE(s->prepared_claims().empty());
}

TEST_F(PrepareTest, MigDevicesAreCreatedAndDestroyed) {
  auto s = state();
  api::AllocationResult a;
  a.devices.results = {result("mig", "gpu-0-mig-3g40gb-9-4"), result("mig", "gpu-1-mig-1g10gb-19-2")};
  auto r = s->prepare({"default", "migs", "uid-m"}, a);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  auto migs = *sim_.list_mig_devices("");
  ASSERT_EQ(migs.size(), 2u);
  EXPECT_EQ(migs[0].parent_uuid, gpus_[0].uuid);
  EXPECT_EQ(migs[0].profile_id, 9);
  EXPECT_EQ(migs[0].placement, (MigPlacement{4, 4}));
  EXPECT_EQ(migs[1].placement, (MigPlacement{2, 1}));
  std::string spec = read_file(spec_path("uid-m"));
  EXPECT_NE(spec.find("NVIDIA_VISIBLE_DEVICES=" + migs[0].uuid + "," + migs[1].uuid), std::string::npos) << spec;
  // Preparing again creates nothing new.
  ASSERT_TRUE(s->prepare({"default", "migs", "uid-m"}, a).has_value());
  EXPECT_EQ(sim_.list_mig_devices("")->size(), 2u);

  ASSERT_TRUE(s->unprepare("uid-m").ok());
  EXPECT_TRUE(sim_.list_mig_devices("")->empty());
  EXPECT_FALSE(std::filesystem::exists(spec_path("uid-m")));
}

TEST_F(PrepareTest, FailureRollsBack) {
  auto s = state();
  api::AllocationResult a;
  a.devices.results = {result("a", "gpu-0-mig-1g10gb-19-0"), result("b", "gpu-0-mig-1g10gb-19-0-nope")};
  auto r = s->prepare({"default", "bad", "uid-b"}, a);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Code::kNotFound);
  EXPECT_EQ(r.error().message(),
            "claim default/bad: status.allocation.devices.results[1].device: device gpu-0-mig-1g10gb-19-0-nope is not "
            "a device of this node");

  // The second MIG device fails to be created: the first one is destroyed again.
  a.devices.results = {result("a", "gpu-0-mig-1g10gb-19-0"), result("b", "gpu-0-mig-1g10gb-19-0")};
  a.devices.results[1].device = "gpu-1-mig-1g10gb-19-0";
  ASSERT_TRUE(sim_.create_mig_device(gpus_[1].uuid, 19, 0).has_value());  // placement taken
  r = s->prepare({"default", "bad", "uid-b"}, a);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Code::kFailedPrecondition);
  EXPECT_EQ(sim_.list_mig_devices(gpus_[0].uuid)->size(), 0u);
  EXPECT_TRUE(s->prepared_claims().empty());
  EXPECT_FALSE(std::filesystem::exists(spec_path("uid-b")));
}

TEST_F(PrepareTest, CrashDuringPrepareIsRecoveredOnRetry) {
  // What a crash right after creating a MIG device leaves behind: the device and
  // a PrepareStarted checkpoint entry recording it.
  auto m = sim_.create_mig_device(gpus_[0].uuid, 14, 2);
  ASSERT_TRUE(m.has_value());
  Checkpoint c;
  PreparedClaim pc;
  pc.namespace_ = "default";
  pc.name = "crashed";
  pc.state = PrepareState::kPrepareStarted;
  PreparedDevice d;
  d.requests = {"r"};
  d.pool = "node-a";
  d.device = "gpu-0-mig-2g20gb-14-2";
  d.mig = *m;
  pc.devices.push_back(d);
  c.claims["uid-c"] = pc;
  ASSERT_TRUE(CheckpointFile(dir_.file("plugin/checkpoint.json"), "boot-1").save(c).ok());
  write_file(dir_.file("plugin/checkpoint.json.tmp"), "{torn");

  auto s = state();
  EXPECT_EQ(s->prepared_claims(), std::vector<std::string>{"uid-c"});
  api::AllocationResult a;
  a.devices.results = {result("r", "gpu-0-mig-2g20gb-14-2")};
  auto r = s->prepare({"default", "crashed", "uid-c"}, a);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  auto migs = *sim_.list_mig_devices("");
  ASSERT_EQ(migs.size(), 1u);  // the leftover was destroyed, one fresh device exists
  EXPECT_NE(migs[0].uuid, m->uuid);
  auto stored = CheckpointFile(dir_.file("plugin/checkpoint.json"), "boot-1").load();
  EXPECT_EQ(stored->claims.at("uid-c").state, PrepareState::kPrepareCompleted);
  EXPECT_EQ(stored->claims.at("uid-c").devices[0].mig->uuid, migs[0].uuid);

  // Unprepare of a crashed-but-never-retried claim cleans up as well.
  ASSERT_TRUE(s->unprepare("uid-c").ok());
  EXPECT_TRUE(sim_.list_mig_devices("")->empty());
}

TEST_F(PrepareTest, NewBootForgetsPreparedClaims) {
  api::AllocationResult a;
  a.devices.results = {result("r", "gpu-0")};
  ASSERT_TRUE(state("boot-1")->prepare({"default", "c", "uid-1"}, a).has_value());
  EXPECT_TRUE(state("boot-2")->prepared_claims().empty());
}

TEST_F(PrepareTest, TimeSlicingAndMps) {
  auto s = state();
  api::AllocationResult a;
  a.devices.results = {result("ts", "gpu-0"), result("mps", "gpu-1")};
  a.devices.results[1].shareID = "abc";
  a.devices.config = {
      config("FromClass",
             R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"TimeSlicing","timeSlicingConfig":{"interval":"Medium"}}})"),
      config("FromClaim",
             R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"MPS","mpsConfig":{"defaultActiveThreadPercentage":25,"defaultPinnedDeviceMemoryLimit":"1Gi"}}})"),
  };
  a.devices.config[1].requests = {"mps"};
  auto r = s->prepare({"default", "shared", "uid-s"}, a);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ((*r)[1].share_id, "abc");
  // The daemon is named after its device; the claim's limits reach its
  // containers as MPS client environment.
  std::string mps = dir_.file("plugin") + "/mps/gpu-1";
  std::string env = "CUDA_VISIBLE_DEVICES=" + gpus_[1].uuid + " CUDA_MPS_PIPE_DIRECTORY=" + mps +
                    "/pipe CUDA_MPS_LOG_DIRECTORY=" + mps + "/log ";
  EXPECT_EQ(runner_.log(), (std::vector<std::string>{
                               "nvidia-smi -i " + gpus_[0].uuid + " -c DEFAULT",
                               "nvidia-smi compute-policy -i " + gpus_[0].uuid + " --set-timeslice 2",
                               "nvidia-smi -i " + gpus_[1].uuid + " -c EXCLUSIVE_PROCESS",
                               env + "nvidia-cuda-mps-control -d",
                           }));
  auto spec = decode_cdi_spec(read_file(spec_path("uid-s")));
  ASSERT_TRUE(spec.has_value());
  ASSERT_EQ(spec->devices.size(), 2u);
  EXPECT_EQ(spec->devices[0].edits.env.size(), 1u);
  EXPECT_EQ(spec->devices[1].edits.env,
            (std::vector<std::string>{"NVIDIA_VISIBLE_DEVICES=" + gpus_[0].uuid + "," + gpus_[1].uuid,
                                      "CUDA_MPS_PIPE_DIRECTORY=" + mps + "/pipe",
                                      "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=" + gpus_[1].uuid + "=1024M",
                                      "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25"}));
  EXPECT_TRUE(spec->devices[1].edits.mounts.empty());  // simulated: no container to mount into

  size_t before = runner_.log().size();
  ASSERT_TRUE(s->unprepare("uid-s").ok());
  auto log = runner_.log();
  EXPECT_EQ(std::vector<std::string>(log.begin() + static_cast<std::ptrdiff_t>(before), log.end()),
            (std::vector<std::string>{
                "CUDA_MPS_PIPE_DIRECTORY=" + mps + "/pipe nvidia-cuda-mps-control <<< quit",
                "nvidia-smi -i " + gpus_[1].uuid + " -c DEFAULT",
                "nvidia-smi -i " + gpus_[0].uuid + " -c DEFAULT",
                "nvidia-smi compute-policy -i " + gpus_[0].uuid + " --set-timeslice 0",
            }));
  EXPECT_FALSE(std::filesystem::exists(mps));
}

TEST_F(PrepareTest, SharingFailureAndBadConfig) {
  auto s = state();
  api::AllocationResult a;
  a.devices.results = {result("ts", "gpu-0")};
  a.devices.config = {config("FromClaim", R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"MigDeviceConfig"})")};
  auto bad = s->prepare({"default", "c", "uid-1"}, a);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message(), "claim default/c: cannot apply MigDeviceConfig to GPU device gpu-0");

  a.devices.config = {config("FromClaim",
                             R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"TimeSlicing"}})")};
  runner_.fail_program("nvidia-smi");
  auto failed = s->prepare({"default", "c", "uid-1"}, a);
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().code(), Code::kUnavailable);
  EXPECT_TRUE(s->prepared_claims().empty());
}

TEST_F(PrepareTest, RealGpuCdiUsesDeviceNodes) {
  TempDir proc("proc");
  write_file(proc.file("devices"), "237 nvidia-caps\n");
  write_file(proc.file("driver/nvidia/capabilities/gpu0/mig/gi1/access"), "DeviceFileMinor: 12\n");
  write_file(proc.file("driver/nvidia/capabilities/gpu0/mig/gi1/ci0/access"), "DeviceFileMinor: 13\n");
  PrepareOptions o;
  o.node_name = "node-a";
  o.cdi_dir = dir_.file("cdi");
  o.plugin_dir = dir_.file("plugin");
  o.proc_root = proc.str();
  o.simulated = false;
  auto s = *DeviceState::create(sim_, runner_, o, "boot-1");
  api::AllocationResult a;
  a.devices.results = {result("m", "gpu-0-mig-7g80gb-0-0")};
  ASSERT_TRUE(s->prepare({"default", "c", "uid-r"}, a).has_value());
  auto spec = *decode_cdi_spec(read_file(spec_path("uid-r")));
  EXPECT_EQ(spec.edits.env, std::vector<std::string>{"NVIDIA_VISIBLE_DEVICES=void"});
  ASSERT_EQ(spec.devices[0].edits.device_nodes.size(), 3u);
  EXPECT_EQ(spec.devices[0].edits.device_nodes[0].path, "/dev/nvidia0");
  EXPECT_EQ(spec.devices[0].edits.device_nodes[1].path, "/dev/nvidia-caps/nvidia-cap12");
  EXPECT_EQ(spec.devices[0].edits.device_nodes[2].minor, 13);
  EXPECT_TRUE(spec.devices[0].edits.env.empty());
}

}  // namespace
}  // namespace draplane::node
