// The agent's kubelet against an in-memory API (FakeApi), simulated GPUs and
// real processes (sh).
#include <signal.h>

#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <optional>
#include <fstream>
#include <iterator>

#include "../controllers/fake_api.h"
#include "api/codec.h"
#include "node/checkpoint.h"
#include "node/kubelet.h"
#include "node/sim.h"
#include "test_dir.h"

namespace draplane::node {
namespace {

using draplane::testing::FakeApi;
using testing::read_file;
using testing::TempDir;
using testing::write_file;

class KubeletTest : public ::testing::Test {
 protected:
  KubeletTest() : dir_("kubelet"), sim_(*parse_sim_spec("2xH100", SimOptions{.seed = 7})) {
    gpus_ = *sim_.discover();
    PrepareOptions o;
    o.node_name = "node-a";
    o.cdi_dir = dir_.file("cdi");
    o.plugin_dir = dir_.file("plugin");
    devices_ = std::move(*DeviceState::create(sim_, runner_, o, "boot-1"));
  }
  std::unique_ptr<Kubelet> kubelet(DeviceHealthFn health = nullptr) {
    KubeletOptions o;
    o.device_health = std::move(health);
    o.node_name = "node-a";
    o.state_dir = dir_.str();
    o.cdi_dir = dir_.file("cdi");
    o.base_env = {"PATH=/usr/bin:/bin"};
    o.clock = std::make_shared<common::FakeClock>();  // 2026-01-01T00:00:00Z
    o.orphan_sweep_ms = 50;
    o.boot_id = "boot-1";
    auto k = std::make_unique<Kubelet>(api_, *devices_, launcher_, o);
    k->start();
    EXPECT_TRUE(k->wait_synced(5000));
    return k;
  }
  // A claim allocated gpu-0 (and gpu-1 when `two`), reserved for pod_uid.
  void put_claim(const std::string& name, const std::string& pod_name, const std::string& pod_uid, bool two = false) {
    std::string results = R"({"request":"gpu","driver":"gpu.nvidia.com","pool":"node-a","device":"gpu-0"})";
    if (two) results += R"(,{"request":"gpu","driver":"gpu.nvidia.com","pool":"node-a","device":"gpu-1"})";
    std::string reserved =
        pod_uid.empty() ? "" : R"(,"reservedFor":[{"resource":"pods","name":")" + pod_name + R"(","uid":")" + pod_uid + R"("}])";
    api_.put_object("resourceclaims", R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",
      "metadata":{"name":")" + name + R"(","namespace":"default"},
      "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}},
      "status":{"allocation":{"devices":{"results":[)" + results + R"(]}})" + reserved + "}}");
  }
  std::string put_pod(const std::string& name, const std::string& script, const std::string& extra_meta = "",
                      const std::string& restart = "Never") {
    std::string body = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
                       R"(","namespace":"default")" + extra_meta + R"(},"spec":{"nodeName":"node-a","restartPolicy":")" +
                       restart + R"(","terminationGracePeriodSeconds":1,
        "resourceClaims":[{"name":"gpu","resourceClaimName":"claim-)" + name + R"("}],
        "containers":[{"name":"main","image":"none","command":["sh","-c"],"args":[")" + script +
                       R"("],"env":[{"name":"GREETING","value":"hi"}],"resources":{"claims":[{"name":"gpu"}]}}]},
        "status":{"phase":"Pending"}})";
    return FakeApi::field(api_.put_object("pods", body), {"metadata", "uid"});
  }
  api::Pod pod(const std::string& name) { return *api::decode_as<api::Pod>(*api_.object("pods", "default", name)); }
  std::string phase(const std::string& name) {
    auto p = api_.object("pods", "default", name);
    return p ? FakeApi::field(*p, {"status", "phase"}) : "<gone>";
  }
  bool any_request(const std::string& needle) {
    for (const auto& r : api_.requests()) {
      if (r.find(needle) != std::string::npos) return true;
    }
    return false;
  }

  TempDir dir_;
  SimBackend sim_;
  RecordingRunner runner_;
  std::vector<GpuInfo> gpus_;
  std::unique_ptr<DeviceState> devices_;
  PosixLauncher launcher_;
  FakeApi api_;
};

TEST_F(KubeletTest, RunsPodWithCdiEnvAndReportsSuccess) {
  std::string uid = put_pod("p1", "echo $GREETING $NVIDIA_VISIBLE_DEVICES; exit 0");
  put_claim("claim-p1", "p1", uid, /*two=*/true);
  auto k = kubelet();
  ASSERT_TRUE(api_.wait_for([&] { return phase("p1") == "Succeeded"; })) << phase("p1");
  auto p = pod("p1");
  EXPECT_EQ(p.status.hostIP, "127.0.0.1");
  // The codec writes keys sorted.
  EXPECT_NE(p.status.containerStatuses.text.find(R"("exitCode":0,"finishedAt":"2026-01-01T00:00:00Z","reason":"Completed")"),
            std::string::npos)
      << p.status.containerStatuses.text;
  auto log = k->log_path("default", "p1", "", false);
  ASSERT_TRUE(log.has_value()) << log.error().message();
  EXPECT_EQ(read_file(*log), "hi " + gpus_[0].uuid + "," + gpus_[1].uuid + "\n");
  // The claim is unprepared once the pod ended: checkpoint and CDI spec gone.
  ASSERT_TRUE(api_.wait_for([&] { return devices_->prepared_claims().empty(); }));
  auto claim = api::decode_as<api::ResourceClaim>(*api_.object("resourceclaims", "default", "claim-p1"));
  EXPECT_FALSE(std::filesystem::exists(cdi_spec_path(dir_.file("cdi"), claim->metadata.uid)));
  EXPECT_EQ(k->log_path("default", "p1", "other", false).error().code(), Code::kNotFound);
  EXPECT_EQ(k->log_path("default", "p1", "main", true).error().code(), Code::kNotFound);
}

// KEP-4680 and KEP-4817: the running pod's container status and its claim's
// status.devices[] follow the device health; device_health_changed() updates them.
TEST_F(KubeletTest, ReportsDeviceHealthInPodAndClaimStatus) {
  std::mutex mu;
  std::string gpu0 = "Healthy";
  auto health = [&](const std::string& pool, const std::string& device) {
    std::lock_guard<std::mutex> l(mu);
    return pool == "node-a" && device == "gpu-0" ? gpu0 : std::string("Healthy");
  };
  std::string uid = put_pod("ph", "exec sleep 60");
  put_claim("claim-ph", "ph", uid, /*two=*/true);
  auto k = kubelet(health);
  auto pod_shows = [&](const std::string& want) {
    return pod("ph").status.containerStatuses.text.find(want) != std::string::npos;
  };
  auto claim_condition = [&](const std::string& device) {
    auto claim = api::decode_as<api::ResourceClaim>(*api_.object("resourceclaims", "default", "claim-ph"));
    for (const auto& d : claim->status.devices) {
      if (d.device == device && !d.conditions.empty()) return d.conditions[0].type + "=" + d.conditions[0].status;
    }
    return std::string("none");
  };
  const std::string id0 = "k8s.gpu.nvidia.com/claim=";  // CDI device IDs of the claim's devices
  ASSERT_TRUE(api_.wait_for([&] { return pod_shows(R"("health":"Healthy")"); })) << pod("ph").status.containerStatuses.text;
  EXPECT_TRUE(pod_shows(R"("allocatedResourcesStatus":[{"name":"claim:gpu","resources":[{"health":"Healthy","resourceID":")" + id0))
      << pod("ph").status.containerStatuses.text;
  ASSERT_TRUE(api_.wait_for([&] { return claim_condition("gpu-0") == "Healthy=True"; })) << claim_condition("gpu-0");
  EXPECT_EQ(claim_condition("gpu-1"), "Healthy=True");

  {
    std::lock_guard<std::mutex> l(mu);
    gpu0 = "Unhealthy";
  }
  k->device_health_changed();
  ASSERT_TRUE(api_.wait_for([&] { return pod_shows(R"("health":"Unhealthy")"); }))
      << pod("ph").status.containerStatuses.text;
  EXPECT_TRUE(pod_shows(R"("health":"Healthy")"));  // gpu-1
  EXPECT_EQ(claim_condition("gpu-0"), "Healthy=False");
  EXPECT_EQ(claim_condition("gpu-1"), "Healthy=True");
}

TEST_F(KubeletTest, FailedContainerFailsPod) {
  std::string uid = put_pod("p2", "exit 3");
  put_claim("claim-p2", "p2", uid);
  auto k = kubelet();
  ASSERT_TRUE(api_.wait_for([&] { return phase("p2") == "Failed"; })) << phase("p2");
  EXPECT_NE(pod("p2").status.containerStatuses.text.find(R"("exitCode":3,"finishedAt":"2026-01-01T00:00:00Z","reason":"Error")"), std::string::npos) << pod("p2").status.containerStatuses.text;
}

// kubectl run IMAGE -- sh -c '...' writes only args: they run as the command line.
TEST_F(KubeletTest, ArgsWithoutCommandRunAsTheCommandLine) {
  std::string body = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p9","namespace":"default"},
    "spec":{"nodeName":"node-a","restartPolicy":"Never","terminationGracePeriodSeconds":1,
      "resourceClaims":[{"name":"gpu","resourceClaimName":"claim-p9"}],
      "containers":[{"name":"main","image":"busybox","args":["sh","-c","echo args $NVIDIA_VISIBLE_DEVICES"],
        "resources":{"claims":[{"name":"gpu"}]}}]},"status":{"phase":"Pending"}})";
  std::string uid = FakeApi::field(api_.put_object("pods", body), {"metadata", "uid"});
  put_claim("claim-p9", "p9", uid);
  auto k = kubelet();
  ASSERT_TRUE(api_.wait_for([&] { return phase("p9") == "Succeeded"; })) << phase("p9");
  auto log = k->log_path("default", "p9", "", false);
  ASSERT_TRUE(log.has_value()) << log.error().message();
  EXPECT_EQ(read_file(*log), "args " + gpus_[0].uuid + "\n");
}

TEST_F(KubeletTest, WaitsUntilClaimIsReservedForThePod) {
  std::string uid = put_pod("p3", "echo ok");
  put_claim("claim-p3", "p3", "");  // allocated, not reserved
  auto k = kubelet();
  ASSERT_TRUE(api_.wait_for([&] { return pod("p3").status.message != ""; }));
  EXPECT_EQ(pod("p3").status.message, "waiting for resource claims: claim claim-p3 is not reserved for the pod");
  EXPECT_EQ(phase("p3"), "Pending");
  EXPECT_TRUE(devices_->prepared_claims().empty());
  // The scheduler reserves it.
  auto c = *api::decode_as<api::ResourceClaim>(*api_.object("resourceclaims", "default", "claim-p3"));
  c.status.reservedFor.push_back({"", "pods", "p3", uid});
  ASSERT_TRUE(api_.put("/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/claim-p3/status",
                       api::to_json(api::Object(c)))
                  .has_value());
  ASSERT_TRUE(api_.wait_for([&] { return phase("p3") == "Succeeded"; })) << phase("p3");
}

TEST_F(KubeletTest, GracefulDeletionKillsUnpreparesAndDeletes) {
  // A finalizer keeps the pod visible after DELETE, as graceful deletion would.
  std::string uid = put_pod("p4", "sleep 1000", R"(,"finalizers":["test/hold"])");
  put_claim("claim-p4", "p4", uid);
  auto k = kubelet();
  ASSERT_TRUE(api_.wait_for([&] { return phase("p4") == "Running"; })) << phase("p4");
  EXPECT_EQ(devices_->prepared_claims().size(), 1u);
  ASSERT_TRUE(api_.del("/api/v1/namespaces/default/pods/p4").has_value());
  ASSERT_TRUE(api_.wait_for([&] { return any_request("DELETE /api/v1/namespaces/default/pods/p4?gracePeriodSeconds=0"); }));
  EXPECT_TRUE(devices_->prepared_claims().empty());
  EXPECT_EQ(phase("p4"), "Failed");
  EXPECT_NE(pod("p4").status.containerStatuses.text.find(R"("exitCode":143)"), std::string::npos)
      << pod("p4").status.containerStatuses.text;
}

TEST_F(KubeletTest, PodDeletedOutrightIsStoppedAndUnprepared) {
  std::string uid = put_pod("p5", "sleep 1000");
  put_claim("claim-p5", "p5", uid);
  auto k = kubelet();
  ASSERT_TRUE(api_.wait_for([&] { return phase("p5") == "Running"; })) << phase("p5");
  api_.erase("pods", "default", "p5");
  ASSERT_TRUE(api_.wait_for([&] { return devices_->prepared_claims().empty(); }));
}

TEST_F(KubeletTest, DeletedPodsDirectoryAndLogsAreRemoved) {
  std::string uid = put_pod("p7", "echo bye");
  put_claim("claim-p7", "p7", uid);
  auto k = kubelet();
  ASSERT_TRUE(api_.wait_for([&] { return phase("p7") == "Succeeded"; })) << phase("p7");
  auto log = k->log_path("default", "p7", "", false);
  ASSERT_TRUE(log.has_value()) << log.error().message();
  const std::string pod_dir = dir_.file("pods/default_p7_" + uid);
  ASSERT_TRUE(std::filesystem::exists(*log));
  ASSERT_TRUE(std::filesystem::is_directory(pod_dir));
  api_.erase("pods", "default", "p7");
  // Workers of gone pods are reaped on the next pod event of the node.
  std::string other = put_pod("p8", "echo hi");
  put_claim("claim-p8", "p8", other);
  ASSERT_TRUE(api_.wait_for([&] { return phase("p8") == "Succeeded"; })) << phase("p8");
  ASSERT_TRUE(api_.wait_for([&] { return !std::filesystem::exists(pod_dir); }));
  EXPECT_EQ(k->log_path("default", "p7", "", false).error().code(), Code::kNotFound);
  // The live pod keeps its logs.
  auto kept = k->log_path("default", "p8", "", false);
  ASSERT_TRUE(kept.has_value()) << kept.error().message();
  EXPECT_EQ(read_file(*kept), "hi\n");
}

TEST_F(KubeletTest, RestartPolicyAlwaysRestartsContainer) {
  std::string uid = put_pod("p6", "echo run; exit 1", "", "Always");
  put_claim("claim-p6", "p6", uid);
  KubeletOptions o;
  auto k = kubelet();
  ASSERT_TRUE(api_.wait_for([&] { return pod("p6").status.containerStatuses.text.find(R"("exitCode":1)") != std::string::npos; }));
  EXPECT_EQ(phase("p6"), "Running");  // Always: it will run again
  // Claims stay prepared while the pod lives.
  EXPECT_EQ(devices_->prepared_claims().size(), 1u);
}

// The Events the kubelet records (core/v1, source kubelet/<node>), as pkg/kubelet/events words them.
TEST_F(KubeletTest, RecordsContainerEventsAsTheKubelet) {
  std::string uid = put_pod("p7", "exit 1", "", "Always");
  put_claim("claim-p7", "p7", uid);
  auto k = kubelet();
  auto reasons = [&] {
    std::map<std::string, std::string> out;  // reason -> message
    for (const auto& e : api_.objects("events")) out[FakeApi::field(e, {"reason"})] = FakeApi::field(e, {"message"});
    return out;
  };
  ASSERT_TRUE(api_.wait_for([&] { return reasons().count("BackOff") == 1; })) << reasons().size();
  auto got = reasons();
  EXPECT_EQ(got["Created"], "Created container: main");
  EXPECT_EQ(got["Started"], "Started container main");
  EXPECT_EQ(got["BackOff"], "Back-off restarting failed container main in pod p7_default(" + uid + ")");
  for (const auto& e : api_.objects("events")) {
    EXPECT_EQ(FakeApi::field(e, {"involvedObject", "uid"}), uid);
    EXPECT_EQ(FakeApi::field(e, {"involvedObject", "fieldPath"}), "spec.containers{main}");
    EXPECT_EQ(FakeApi::field(e, {"source", "component"}), "kubelet");
    EXPECT_EQ(FakeApi::field(e, {"source", "host"}), "node-a");
    EXPECT_EQ(FakeApi::field(e, {"metadata", "namespace"}), "default");
  }
  EXPECT_TRUE(any_request("POST /api/v1/namespaces/default/events"));
}

TEST_F(KubeletTest, FailedPrepareIsAWarningEventOnThePod) {
  std::string uid = put_pod("p8", "exit 0");
  // A GpuConfig the driver rejects, as the scheduler copies a claim's config into the allocation.
  api_.put_object("resourceclaims", R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",
    "metadata":{"name":"claim-p8","namespace":"default"},
    "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}},
    "status":{"allocation":{"devices":{"results":[{"request":"gpu","driver":"gpu.nvidia.com","pool":"node-a","device":"gpu-0"}],
      "config":[{"source":"FromClaim","requests":["gpu"],"opaque":{"driver":"gpu.nvidia.com",
        "parameters":{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"Bogus"}}}}]}},
      "reservedFor":[{"resource":"pods","name":"p8","uid":")" + uid + R"("}]}})");
  auto k = kubelet();
  auto failed = [&]() -> std::optional<std::string> {
    for (const auto& e : api_.objects("events")) {
      if (FakeApi::field(e, {"reason"}) == "FailedPrepareDynamicResources") return e;
    }
    return std::nullopt;
  };
  ASSERT_TRUE(api_.wait_for([&] { return failed().has_value(); }));
  std::string e = *failed();
  EXPECT_EQ(FakeApi::field(e, {"type"}), "Warning");
  EXPECT_EQ(FakeApi::field(e, {"involvedObject", "name"}), "p8");
  EXPECT_EQ(FakeApi::field(e, {"involvedObject", "fieldPath"}), "");
  std::string msg = FakeApi::field(e, {"message"});
  EXPECT_EQ(msg.rfind("Failed to prepare dynamic resources: prepare claim claim-p8: ", 0), 0u) << msg;
  EXPECT_NE(msg.find("Bogus"), std::string::npos) << msg;
  EXPECT_EQ(phase("p8"), "Pending");
}

TEST_F(KubeletTest, OrphanedPreparedClaimIsSwept) {
  ClaimRef ref{"default", "gone", "uid-gone"};
  api::AllocationResult a;
  api::DeviceRequestAllocationResult r;
  r.request = "gpu";
  r.driver = "gpu.nvidia.com";
  r.pool = "node-a";
  r.device = "gpu-1";
  a.devices.results.push_back(r);
  ASSERT_TRUE(devices_->prepare(ref, a).has_value());
  auto k = kubelet();
  ASSERT_TRUE(api_.wait_for([&] { return devices_->prepared_claims().empty(); }));
}

// Whether `pid` runs (a zombie has ended).
bool running(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.empty()) return false;
  size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

TEST_F(KubeletTest, ARunningContainerIsRecordedUntilItEnds) {
  std::string uid = put_pod("p9", "sleep 1000", R"(,"finalizers":["test/hold"])");
  put_claim("claim-p9", "p9", uid);
  auto k = kubelet();
  ASSERT_TRUE(api_.wait_for([&] { return phase("p9") == "Running"; })) << phase("p9");
  const std::string record_path = dir_.file("pods/default_p9_" + uid + "/main/process.json");
  ASSERT_TRUE(std::filesystem::exists(record_path));
  auto record = decode_process_record(read_file(record_path));
  ASSERT_TRUE(record.has_value()) << record.error().message();
  EXPECT_EQ(record->boot_id, "boot-1");
  EXPECT_NE(pod("p9").status.containerStatuses.text.find("draplane://" + std::to_string(record->pid)), std::string::npos);
  EXPECT_EQ(process_start_time(record->pid), record->start_time);
  ASSERT_TRUE(api_.del("/api/v1/namespaces/default/pods/p9").has_value());
  ASSERT_TRUE(api_.wait_for([&] { return any_request("DELETE /api/v1/namespaces/default/pods/p9?gracePeriodSeconds=0"); }));
  EXPECT_FALSE(std::filesystem::exists(record_path));
}

TEST_F(KubeletTest, StartEndsTheContainersAnEarlierRunLeftBehind) {
  // What a kill -9 of the agent leaves: containers still running, their
  // records beside their logs. Started here as the dead agent would have.
  auto start = [&](const std::string& script) {
    ProcessSpec spec;
    spec.argv = {"sh", "-c", script};
    spec.env = {"PATH=/usr/bin:/bin"};
    auto pid = launcher_.start(spec);
    EXPECT_TRUE(pid.has_value());
    return pid.value_or(0);
  };
  auto put_record = [&](const std::string& pod_dir, const ProcessRecord& r) {
    std::filesystem::create_directories(dir_.file("pods/" + pod_dir + "/main"));
    write_file(dir_.file("pods/" + pod_dir + "/main/process.json"), encode_process_record(r));
  };
  // 1. A container still leading its group, with a child of its own.
  int leader = start("sleep 1000 & wait");
  put_record("default_a_uid-a", {"boot-1", leader, *process_start_time(leader)});
  // 2. A container whose first process ended, its child still in the group.
  const std::string child_file = dir_.file("child.pid");
  int gone = start("sleep 1000 & echo $! > " + child_file);
  auto gone_start = process_start_time(gone);
  ASSERT_TRUE(gone_start.has_value());
  ASSERT_EQ(launcher_.wait(gone), 0);
  int child = std::stoi(read_file(child_file));
  ASSERT_TRUE(running(child));
  put_record("default_b_uid-b", {"boot-1", gone, *gone_start});
  // 3. A record whose pid now names another process (start time differs), and
  // 4. one of another boot: neither is touched.
  int other = start("sleep 1000");
  put_record("default_c_uid-c", {"boot-1", other, *process_start_time(other) + 1});
  int old_boot = start("sleep 1000");
  put_record("default_d_uid-d", {"boot-0", old_boot, *process_start_time(old_boot)});

  auto k = kubelet();
  EXPECT_TRUE(api_.wait_for([&] { return !running(leader); }, 10000));
  if (!running(leader)) {
    EXPECT_EQ(launcher_.wait(leader), 128 + SIGKILL);
  }
  EXPECT_FALSE(running(child));
  EXPECT_TRUE(running(other));
  EXPECT_TRUE(running(old_boot));
  for (const char* d : {"default_a_uid-a", "default_b_uid-b", "default_c_uid-c", "default_d_uid-d"}) {
    EXPECT_FALSE(std::filesystem::exists(dir_.file(std::string("pods/") + d + "/main/process.json"))) << d;
  }
  for (int pid : {leader, child, other, old_boot}) {
    if (running(pid)) ::kill(-::getpgid(pid), SIGKILL);
  }
  if (running(leader)) launcher_.wait(leader);
  launcher_.wait(other);
  launcher_.wait(old_boot);
}

}  // namespace
}  // namespace draplane::node
