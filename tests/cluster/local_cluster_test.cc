// LocalCluster and the demo against a real in-process cluster: API server (memory
// store), scheduler, controllers and one simulated node; a pod with a claim runs
// and prints its GPU's UUID; --nodes parsing.
#include "cluster/local_cluster.h"

#include <gtest/gtest.h>

#include <rapidjson/document.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "client/rest_client.h"
#include "cluster/demo.h"

namespace draplane::cluster {
namespace {

namespace fs = std::filesystem;

TEST(SimNodes, Parse) {
  auto n = parse_sim_nodes("2");
  ASSERT_TRUE(n.has_value());
  ASSERT_EQ(n->size(), 2u);
  EXPECT_EQ((*n)[1].name, "node-2");
  EXPECT_EQ((*n)[1].gpus, "sim:8xH100");
  n = parse_sim_nodes("a=sim:4xA100-40GB;b=sim:2xH200");
  ASSERT_TRUE(n.has_value());
  ASSERT_EQ(n->size(), 2u);
  EXPECT_EQ((*n)[0].gpus, "sim:4xA100-40GB");
  EXPECT_EQ(parse_sim_nodes("a").error().message(),
            "--nodes: \"a\": expected NAME=GPUS (e.g. node-1=sim:8xH100)");
  EXPECT_EQ(parse_sim_nodes("A=sim:1xH100").error().message(),
            "--nodes: \"A\": a node name must be a lowercase RFC 1123 subdomain");
  EXPECT_EQ(parse_sim_nodes("a=x;a=y").error().message(), "--nodes: duplicate node a");
  EXPECT_EQ(parse_sim_nodes("a=").error().message(), "--nodes: a: GPUS must not be empty");
  EXPECT_EQ(default_sim_nodes().size(), 3u);
}

// Agent flags per node, as a query after GPUS.
TEST(SimNodes, AgentFlags) {
  auto n = parse_sim_nodes("a=sim:2xH100?mig=none&consumable-shares=memory;b=sim:1xH100");
  ASSERT_TRUE(n.has_value()) << n.error().message();
  EXPECT_EQ((*n)[0].gpus, "sim:2xH100");
  EXPECT_FALSE((*n)[0].dynamic_mig);
  EXPECT_EQ(node::to_string((*n)[0].consumable_shares), "memory");
  EXPECT_TRUE((*n)[1].dynamic_mig);
  EXPECT_EQ(node::to_string((*n)[1].consumable_shares), "disabled");
  EXPECT_EQ(parse_sim_nodes("a=sim:1xH100?consumable-shares=0").error().message(),
            "--nodes: a: \"consumable-shares=0\": expected mig=dynamic|none or "
            "consumable-shares=disabled|unlimited|memory|N");
  EXPECT_EQ(parse_sim_nodes("a=?mig=none").error().message(), "--nodes: a: GPUS must not be empty");
}

// --request-timeout takes a Go duration, as kube-apiserver's flag does.
TEST(Duration, ParsesGoDurations) {
  using std::chrono::milliseconds;
  EXPECT_EQ(*parse_duration("1m0s"), milliseconds(60'000));
  EXPECT_EQ(*parse_duration("30s"), milliseconds(30'000));
  EXPECT_EQ(*parse_duration("1.5s"), milliseconds(1'500));
  EXPECT_EQ(*parse_duration("500ms"), milliseconds(500));
  EXPECT_EQ(*parse_duration("1h2m3s"), milliseconds(3'723'000));
  EXPECT_EQ(*parse_duration("0"), milliseconds(0));
  for (const char* bad : {"", "60", "1x", "s", "1m0", "-1s"}) {
    EXPECT_FALSE(parse_duration(bad).has_value()) << bad;
  }
  EXPECT_EQ(parse_duration("soon").error().message(), "invalid duration \"soon\" (want e.g. 1m0s, 30s, 500ms)");
}

TEST(LocalCluster, BadOptions) {
  LocalClusterOptions o;
  o.data_dir = (fs::temp_directory_path() / "draplane-lc-bad").string();
  o.listen = "nowhere";
  auto c = LocalCluster::start(o);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().message(), "--listen must be HOST:PORT, got \"nowhere\"");
  o.listen = "127.0.0.1:0";
  o.policy = "best";
  c = LocalCluster::start(o);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().code(), Code::kInvalid);
  o.policy = "packing";
  o.store = "memory";
  o.request_timeout = "soon";
  c = LocalCluster::start(o);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().code(), Code::kInvalid);
  EXPECT_EQ(c.error().message(), "--request-timeout: invalid duration \"soon\" (want e.g. 1m0s, 30s, 500ms)");
  fs::remove_all(o.data_dir);
}

TEST(LocalCluster, PodWithClaimRunsOnSimulatedNode) {
  std::string dir = (fs::temp_directory_path() / ("draplane-lc-" + std::to_string(::getpid()))).string();
  fs::remove_all(dir);
  LocalClusterOptions o;
  o.data_dir = dir;
  o.listen = "127.0.0.1:0";
  o.store = "memory";
  o.heartbeat_seconds = 1;
  o.nodes = {{"gpu-node", "sim:2xH100"}};
  auto c = LocalCluster::start(o);
  ASSERT_TRUE(c.has_value()) << c.error().to_string();
  ASSERT_TRUE((*c)->wait_nodes_ready(60000).has_value());
  EXPECT_TRUE(fs::exists((*c)->kubeconfig_path()));
  EXPECT_EQ((*c)->url().rfind("https://127.0.0.1:", 0), 0u);

  std::string manifest = dir + "/m.yaml";
  std::ofstream(manifest) << R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: one, namespace: team}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.nvidia.com}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: team}
spec:
  containers:
  - name: c
    image: busybox
    command: ["sh", "-c", "echo got $NVIDIA_VISIBLE_DEVICES; exec sleep 600"]
    resources: {claims: [{name: gpu}]}
  resourceClaims: [{name: gpu, resourceClaimName: one}]
---
apiVersion: v1
kind: Node
metadata: {name: other}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: bad, namespace: team}
spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: -2}}]}}
)";
  auto rest = client::RestClient::create((*c)->admin_config());
  ASSERT_TRUE(rest.has_value());
  auto outcomes = apply_manifests(**rest, {manifest});
  ASSERT_EQ(outcomes.size(), 4u);
  EXPECT_EQ(outcomes[0].kind, ApplyOutcome::Kind::kCreated);  // namespace team created on the way
  EXPECT_EQ(outcomes[1].kind, ApplyOutcome::Kind::kCreated);
  EXPECT_EQ(outcomes[2].kind, ApplyOutcome::Kind::kSkipped);
  EXPECT_EQ(outcomes[3].kind, ApplyOutcome::Kind::kFailed);
  EXPECT_NE(outcomes[3].message.find("spec.devices.requests[0].exactly.count: Invalid value: -2"), std::string::npos)
      << outcomes[3].message;
  EXPECT_EQ(wait_pods_settled(**rest, 60000), std::vector<std::string>{});
  std::string report = demo_report(**rest);
  EXPECT_NE(report.find("team/one: allocated on gpu-node"), std::string::npos) << report;
  EXPECT_NE(report.find("team/p: Running on gpu-node"), std::string::npos) << report;
  EXPECT_NE(report.find("got GPU-"), std::string::npos) << report;  // the pod's output, via pods/log
  EXPECT_EQ((*c)->failure(), "");
  (*c)->stop();
  fs::remove_all(dir);
}

// The names of the ResourceSlices of `node` the admin sees.
std::set<std::string> slices_of(client::RestClient& rest, const std::string& node) {
  std::set<std::string> out;
  auto body = rest.get("/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName%3D" + node);
  if (!body.has_value()) return out;
  rapidjson::Document d;
  d.Parse(body->data(), body->size());
  if (d.HasParseError() || !d.IsObject() || !d.HasMember("items") || !d["items"].IsArray()) return out;
  for (const auto& item : d["items"].GetArray()) out.insert(item["metadata"]["name"].GetString());
  return out;
}

// A node's token may not delete other nodes' slices (issue 22: a delete-collection
// with any node's token wiped every node's slices); when an admin deletes them,
// the agents publish them again.
TEST(LocalCluster, NodeSlicesComeBackAfterAnAdminDeletesThem) {
  std::string dir = (fs::temp_directory_path() / ("draplane-lc-slices-" + std::to_string(::getpid()))).string();
  fs::remove_all(dir);
  LocalClusterOptions o;
  o.data_dir = dir;
  o.listen = "127.0.0.1:0";
  o.store = "memory";
  o.heartbeat_seconds = 1;
  o.scheduler = false;
  o.controllers = false;
  o.nodes = {{"node-a", "sim:1xH100"}, {"node-b", "sim:1xH100"}};
  auto c = LocalCluster::start(o);
  ASSERT_TRUE(c.has_value()) << c.error().to_string();
  ASSERT_TRUE((*c)->wait_nodes_ready(60000).has_value());
  auto admin = client::RestClient::create((*c)->admin_config());
  ASSERT_TRUE(admin.has_value());
  std::set<std::string> a = slices_of(**admin, "node-a"), b = slices_of(**admin, "node-b");
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());

  // node-a's own token, from the token file.
  client::KubeConfig cfg = (*c)->admin_config();
  cfg.token.clear();
  std::ifstream tokens(dir + "/tokens.csv");
  for (std::string line; std::getline(tokens, line);) {
    if (line.find(",system:node:node-a,") != std::string::npos) cfg.token = line.substr(0, line.find(','));
  }
  ASSERT_FALSE(cfg.token.empty());
  auto node = client::RestClient::create(cfg);
  ASSERT_TRUE(node.has_value());
  const std::string slices = "/apis/resource.k8s.io/v1/resourceslices";
  auto r = (*node)->request("DELETE", slices);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 403) << r->body;
  r = (*node)->request("DELETE", slices + "?fieldSelector=spec.nodeName%3Dnode-b");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 403) << r->body;
  r = (*node)->request("GET", slices);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 403) << r->body;
  EXPECT_EQ(slices_of(**admin, "node-b"), b);

  r = (*admin)->request("DELETE", slices);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->status, 200) << r->body;
  // Back, as they were (names and pools), from both agents.
  std::set<std::string> a2, b2;
  for (int i = 0; i < 600 && (a2 != a || b2 != b); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    a2 = slices_of(**admin, "node-a");
    b2 = slices_of(**admin, "node-b");
  }
  EXPECT_EQ(a2, a);
  EXPECT_EQ(b2, b);
  EXPECT_EQ((*c)->failure(), "");
  (*c)->stop();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace draplane::cluster

namespace draplane::cluster {
namespace {

std::string lease_holder(client::RestClient& rest, const std::string& name) {
  auto got = rest.get("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/" + name);
  if (!got.has_value()) return "<" + got.error().message() + ">";
  rapidjson::Document d;
  d.Parse(got->c_str());
  const auto& spec = d["spec"];
  return spec.HasMember("holderIdentity") ? spec["holderIdentity"].GetString() : "";
}

// With leader election on, the embedded scheduler and controllers take their
// Leases (the API server accepts client-go's record); a second server started
// on the first one's certificate, CA and token files serves its clients.
TEST(LocalCluster, LeaderElectedComponentsAndASecondServerOnTheSameFiles) {
  std::string dir = (fs::temp_directory_path() / ("draplane-lc-le-" + std::to_string(::getpid()))).string();
  fs::remove_all(dir);
  LocalClusterOptions o;
  o.data_dir = dir;
  o.listen = "127.0.0.1:0";
  o.store = "memory";
  o.leader_elect = true;
  auto c = LocalCluster::start(o);
  ASSERT_TRUE(c.has_value()) << c.error().to_string();
  auto rest = client::RestClient::create((*c)->admin_config());
  ASSERT_TRUE(rest.has_value());
  for (const char* name : {"draplane-scheduler", "draplane-controllers"}) {
    std::string holder;
    for (int i = 0; i < 500 && (holder.empty() || holder[0] == '<'); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      holder = lease_holder(**rest, name);
    }
    EXPECT_NE(holder.find('_'), std::string::npos) << name << ": " << holder;
  }
  // A second server on the same data dir's files named by flags: the clients of
  // the first (CA, admin token) work against it.
  LocalClusterOptions o2 = o;
  o2.data_dir = dir + "-2";
  o2.tls_cert_file = dir + "/pki/server.crt";
  o2.tls_private_key_file = dir + "/pki/server.key";
  o2.client_ca_file = dir + "/pki/ca.crt";
  o2.token_auth_file = dir + "/tokens.csv";
  o2.scheduler = o2.controllers = false;
  auto c2 = LocalCluster::start(o2);
  ASSERT_TRUE(c2.has_value()) << c2.error().to_string();
  client::KubeConfig cfg = (*c)->admin_config();
  cfg.server = (*c2)->url();
  auto rest2 = client::RestClient::create(cfg);
  ASSERT_TRUE(rest2.has_value());
  EXPECT_TRUE((*rest2)->get("/api/v1/namespaces").has_value());
  const std::string ca_file = o2.client_ca_file;
  o2.client_ca_file.clear();
  EXPECT_EQ(LocalCluster::start(o2).error().message(),
            "--tls-cert-file needs --client-ca-file: the CA that signed it, written into the kubeconfig");
  o2.client_ca_file = ca_file;
  o2.tls_private_key_file.clear();
  EXPECT_EQ(LocalCluster::start(o2).error().message(),
            "--tls-cert-file and --tls-private-key-file must be given together");
  (*c2)->stop();
  (*c)->stop();
  fs::remove_all(dir);
  fs::remove_all(dir + "-2");
}

}  // namespace
}  // namespace draplane::cluster
