// The scheduler's node groups (sched/node_classes.h): one node per group of
// interchangeable nodes is tried, and the answers are those of trying every
// node, which a randomized comparison checks event by event.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "harness.h"

namespace draplane::sched::node_groups {
namespace {

using namespace ::draplane::sched::testing;  // NOLINT: the harness's builders

// `count` nodes node-100, node-101, ... with `gpus` GPUs each.
void add_gpu_nodes(Harness& h, int count, int gpus) {
  for (int i = 0; i < count; ++i) {
    const std::string n = "node-" + std::to_string(100 + i);
    h.add(node(n));
    h.add(gpu_slice(n, gpus));
  }
}

TEST(NodeGroups, IdenticalNodesCostOneTry) {
  Harness h;
  add_gpu_nodes(h, 50, 4);
  h.add(gpu_class());
  h.add(claim("c1"));
  h.add(pod("p1", {"c1"}));
  h.run();
  EXPECT_EQ(h.pod("p1").spec.nodeName, "node-100");
  EXPECT_EQ(h.sched.stats().allocator_runs, 1);
  EXPECT_EQ(h.sched.stats().node_group_cycles, 1);
  // node-100 now differs (a GPU in use): two groups, two tries.
  h.add(claim("c2"));
  h.add(pod("p2", {"c2"}));
  h.run();
  EXPECT_EQ(h.sched.stats().allocator_runs, 3);
  EXPECT_EQ(h.pod("p2").spec.nodeName, "node-100") << "the placement score packs onto the used node";
  ASSERT_TRUE(h.claim("c2").status.allocation.has_value());
  EXPECT_EQ(h.claim("c2").status.allocation->devices.results.at(0).pool, "node-100");
}

TEST(NodeGroups, PodsReadingLabelsAreScheduledNodeByNode) {
  Harness h;
  for (const char* n : {"n1", "n2", "n3"}) {
    h.add(node(n, {{"zone", std::string(n) == "n3" ? "b" : "a"}}));
    h.add(gpu_slice(n, 1));
  }
  h.add(gpu_class());
  h.add(claim("c"));
  api::Pod p = pod("p", {"c"});
  p.spec.nodeSelector["zone"] = "b";
  h.add(p);
  h.run();
  EXPECT_EQ(h.pod("p").spec.nodeName, "n3");
  EXPECT_EQ(h.sched.stats().node_group_cycles, 0);
}

TEST(NodeGroups, NothingFitsExplainsEveryNode) {
  Harness h;
  for (const char* n : {"n1", "n2", "n3"}) {
    h.add(node(n));
    h.add(gpu_slice(n, 1));
  }
  h.add(gpu_class());
  h.add(claim("two", 2));
  h.add(pod("p", {"two"}));
  h.run();
  EXPECT_TRUE(h.pod("p").spec.nodeName.empty());
  EXPECT_NE(h.condition_message("p").find("0/3 nodes are available: 3 cannot allocate all claims"), std::string::npos)
      << h.condition_message("p");
}

// ---------------------------------------------------------------- randomized

// One random cluster and workload, played on two schedulers: with node groups
// and node by node. Every pod must land on the same node with the same
// devices, and every unschedulable pod must say the same.
struct Twin {
  explicit Twin(size_t max_signature_candidates = SchedulerOptions{}.max_signature_candidates)
      : grouped([&] {
          SchedulerOptions o;
          o.max_signature_candidates = max_signature_candidates;
          return o;
        }()) {}
  Harness grouped, single{[] {
    SchedulerOptions o;
    o.node_classes = false;
    return o;
  }()};
  template <typename T>
  void add(const T& obj) {
    grouped.add(obj);
    single.add(obj);
  }
  void run() {
    grouped.run();
    single.run();
  }
  void delete_pod(const std::string& name, const std::vector<std::string>& claims) {
    for (Harness* h : {&grouped, &single}) {
      if (h->api.pods.count("default/" + name) == 0) continue;
      h->sched.handle(Event{Event::Op::kDelete, h->pod(name)});
      h->api.pods.erase("default/" + name);
      for (const auto& c : claims) {
        api::ResourceClaim freed = h->claim(c);
        if (!freed.status.allocation) continue;
        freed.status = {};
        h->add(freed);
      }
    }
  }
};

// A node of one of a few kinds (as real clusters are: node pools), so that
// groups form; a tenth of the nodes also publish a device of their own.
struct NodeKind {
  int gpus;
  const char* product;
  bool cpu, tainted, unschedulable, few_pods;
  bool device_plugin;  // offers example.com/gpu itself (allocatable)
};

void add_random_node(std::mt19937& rng, Twin& t, const std::vector<NodeKind>& kinds, const std::string& n,
                     bool own_devices = true) {
  const NodeKind& k = kinds[rng() % kinds.size()];
  api::Node nd = node(n, {{"zone", rng() % 2 ? "a" : "b"}});
  if (k.cpu) {
    nd.status.allocatable["cpu"] = api::Quantity::from_int(8);
    nd.status.allocatable["memory"] = api::Quantity::from_int(int64_t{64} << 30);
  }
  if (k.tainted) nd.spec.taints.push_back(api::Taint{"dedicated", "infer", "NoSchedule", ""});
  nd.spec.unschedulable = k.unschedulable;
  if (k.few_pods) nd.status.allocatable["pods"] = api::Quantity::from_int(2);
  if (k.device_plugin) nd.status.allocatable["example.com/gpu"] = api::Quantity::from_int(2);
  api::ResourceSlice s = gpu_slice(n, k.gpus, k.product);
  if (rng() % 10 == 0) {
    api::Device d;
    d.name = "nic-0";
    d.attributes["type"].string_ = "nic";
    d.attributes["node"].string_ = n;
    s.spec.devices.push_back(d);
  }
  t.add(nd);
  if (own_devices) t.add(s);
}

std::vector<NodeKind> random_kinds(std::mt19937& rng) {
  static const char* kProducts[] = {"H100", "A100"};
  std::vector<NodeKind> kinds(2 + rng() % 3);
  for (auto& k : kinds) {
    k = NodeKind{1 + static_cast<int>(rng() % 3), kProducts[rng() % 2], rng() % 2 == 0, rng() % 5 == 0,
                 rng() % 8 == 0, rng() % 6 == 0, false};
  }
  return kinds;
}

// Seeds 13-18 group nodes by their views' structure alone (every view above
// max_signature_candidates), as nodes seeing thousands of shared devices are.
TEST(NodeGroups, SameAnswersAsNodeByNodeOnRandomClusters) {
  for (uint32_t seed = 1; seed <= 18; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    Twin t(seed > 12 ? 0 : SchedulerOptions{}.max_signature_candidates);
    const std::vector<NodeKind> kinds = random_kinds(rng);
    // Half the clusters: some nodes offer example.com/gpu through a device
    // plugin (pods asking for it are then placed node by node); all: a class
    // serves it through DRA where a node does not.
    std::vector<NodeKind> with_plugin = kinds;
    if (seed % 2 == 0) {
      for (size_t k = 0; k + 1 < with_plugin.size(); ++k) with_plugin[k].device_plugin = true;
    }
    // Seeds 13-18: the GPUs are in two pools every node sees (views of one
    // structure: the nodes are grouped by it alone), a quarter of the nodes
    // also with GPUs of their own (another structure each).
    const bool shared_pools = seed > 12;
    const int nodes = 12 + static_cast<int>(rng() % 20);
    for (int i = 0; i < nodes; ++i) {
      add_random_node(rng, t, with_plugin, "node-" + std::to_string(i), !shared_pools || i % 4 == 3);
    }
    for (int p = 0; shared_pools && p < 2; ++p) {
      api::ResourceSlice shared = gpu_slice("shared-" + std::to_string(p), 3 + p);
      shared.spec.nodeName.reset();
      shared.spec.allNodes = true;
      t.add(shared);
    }
    t.add(gpu_class());
    api::DeviceClass extended = gpu_class();
    extended.metadata.name = "extended.example.com";
    extended.spec.extendedResourceName = "example.com/gpu";
    t.add(extended);
    std::vector<std::pair<std::string, std::vector<std::string>>> live;
    for (int step = 0; step < 40; ++step) {
      const std::string name = "p" + std::to_string(step);
      const int claims = static_cast<int>(rng() % 3);  // 0: a pod without devices
      std::vector<std::string> names;
      for (int c = 0; c < claims; ++c) {
        names.push_back(name + "-c" + std::to_string(c));
        t.add(claim(names.back(), 1 + static_cast<int64_t>(rng() % 2)));
      }
      api::Pod p = pod(name, names);
      if (rng() % 2) p.spec.containers[0].resources.requests["cpu"] = api::Quantity::from_int(1 + rng() % 4);
      if (rng() % 4 == 0) p.spec.tolerations.push_back(api::Toleration{"dedicated", "Equal", "infer", "NoSchedule", {}});
      if (rng() % 6 == 0) p.spec.nodeSelector["zone"] = "a";
      if (rng() % 3 == 0) p.spec.containers[0].resources.limits["example.com/gpu"] = api::Quantity::from_int(1 + rng() % 2);
      t.add(p);
      live.emplace_back(name, names);
      if (rng() % 3 == 0 && !live.empty()) {
        const size_t victim = rng() % live.size();
        t.delete_pod(live[victim].first, live[victim].second);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(victim));
      }
      t.grouped.clock.advance(std::chrono::seconds(2));
      t.single.clock.advance(std::chrono::seconds(2));
      t.run();
      for (const auto& [pname, cnames] : live) {
        ASSERT_EQ(t.grouped.pod(pname).spec.nodeName, t.single.pod(pname).spec.nodeName) << pname << " step " << step;
        ASSERT_EQ(t.grouped.condition_message(pname), t.single.condition_message(pname)) << pname;
        for (const auto& c : cnames) {
          ASSERT_EQ(t.grouped.claim(c).status.allocation, t.single.claim(c).status.allocation) << c;
        }
        const auto& ext = t.grouped.pod(pname).status.extendedResourceClaimStatus;
        ASSERT_EQ(ext, t.single.pod(pname).status.extendedResourceClaimStatus) << pname;
        if (ext) {
          ASSERT_EQ(t.grouped.claim(ext->resourceClaimName).status.allocation,
                    t.single.claim(ext->resourceClaimName).status.allocation)
              << pname;
        }
      }
    }
    EXPECT_GT(t.grouped.sched.stats().node_group_cycles, 0);
  }
}

TEST(NodeGroups, ExtendedResourcesServedByDraUseTheGroups) {
  Harness h;
  add_gpu_nodes(h, 20, 2);
  api::DeviceClass cls = gpu_class();
  cls.spec.extendedResourceName = "example.com/gpu";
  h.add(cls);
  api::Pod p = pod("p1");
  p.spec.containers[0].resources.limits["example.com/gpu"] = api::Quantity::from_int(1);
  h.add(p);
  h.run();
  EXPECT_EQ(h.pod("p1").spec.nodeName, "node-100");
  EXPECT_EQ(h.sched.stats().node_group_cycles, 1);
  // A node offering the resource itself checks it against its own pods: the
  // next pod asking for it is placed node by node.
  api::Node plugin = node("node-099");
  plugin.status.allocatable["example.com/gpu"] = api::Quantity::from_int(4);
  h.add(plugin);
  api::Pod q = pod("p2");
  q.spec.containers[0].resources.limits["example.com/gpu"] = api::Quantity::from_int(1);
  h.add(q);
  h.run();
  EXPECT_FALSE(h.pod("p2").spec.nodeName.empty());
  EXPECT_EQ(h.sched.stats().node_group_cycles, 1);
}

}  // namespace
}  // namespace draplane::sched::node_groups
