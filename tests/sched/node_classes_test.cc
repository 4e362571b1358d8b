// The scheduler's node groups (sched/node_classes.h): one node per group of
// interchangeable nodes is tried, and the answers are those of trying every
// node, which a randomized comparison checks event by event.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "harness.h"
#include "sched/node_classes.h"
#include "sched/plugins/dynamic_resources.h"

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

// ---------------------------------------------------------------- incremental grouping

// The groups kept from the cache's changes are the groups of equal inputs,
// as regrouping every node from scratch would make them: checked after every
// event of a random history of allocations in pools that many nodes share
// (one view for all the nodes of a zone: its changes move whole groups),
// pods bound and deleted, and nodes relabelled (a node moves to the other
// zone's view).
TEST(NodeGroups, GroupsFollowSharedViewsAsRegroupingFromScratchWould) {
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    ClusterCache cache;
    SchedulerOptions options;
    SchedulerStats stats;
    plugins::DynamicResources dra(framework::Handle{&cache, &options, &stats, nullptr, nullptr});
    NodeClasses classes(cache, dra);
    cache.upsert_class(gpu_class());
    const int nodes = 8 + static_cast<int>(rng() % 8);
    std::vector<std::string> names;
    std::map<std::string, int> own_gpus;  // nodes with GPUs of their own
    for (int i = 0; i < nodes; ++i) {
      names.push_back("n" + std::to_string(i));
      api::Node n = node(names.back(), {{"zone", i % 2 ? "a" : "b"}});
      if (i % 5 == 4) n.spec.taints.push_back(api::Taint{"dedicated", "infer", "NoSchedule", ""});
      cache.upsert_node(n);
      if (i % 4 == 3) {
        own_gpus[names.back()] = 2;
        cache.upsert_slice(gpu_slice(names.back(), 2));
      }
    }
    // shared-all: every node; shared-a: the nodes labelled zone=a.
    std::map<std::string, int> pools = own_gpus;
    for (const char* pool : {"shared-all", "shared-a"}) {
      api::ResourceSlice s = gpu_slice(pool, 3);
      s.spec.nodeName.reset();
      if (std::string(pool) == "shared-all") {
        s.spec.allNodes = true;
      } else {
        api::NodeSelectorTerm term;
        term.matchExpressions.push_back(api::NodeSelectorRequirement{"zone", "In", {"a"}});
        s.spec.nodeSelector = api::NodeSelector{{term}};
      }
      cache.upsert_slice(s);
      pools[pool] = 3;
    }
    std::map<std::string, std::pair<std::string, std::string>> held;  // claim -> (pool, device)
    std::vector<std::string> pods;
    int made = 0;
    for (int step = 0; step < 60; ++step) {
      const int op = static_cast<int>(rng() % 6);
      if (op <= 1) {  // allocate a free device of a random pool
        auto p = pools.begin();
        std::advance(p, static_cast<long>(rng() % pools.size()));
        const std::string device = "gpu-" + std::to_string(rng() % static_cast<uint32_t>(p->second));
        bool taken = false;
        for (const auto& [c, at] : held) taken = taken || at == std::make_pair(p->first, device);
        if (taken) continue;
        api::ResourceClaim c = claim("c" + std::to_string(++made));
        api::AllocationResult a;
        api::DeviceRequestAllocationResult r;
        r.request = "gpu";
        r.driver = kDriver;
        r.pool = p->first;
        r.device = device;
        a.devices.results.push_back(r);
        c.status.allocation = a;
        held[c.metadata.name] = {p->first, device};
        cache.assume_claim(c);
      } else if (op == 2 && !held.empty()) {  // release one
        auto c = held.begin();
        std::advance(c, static_cast<long>(rng() % held.size()));
        cache.forget_claim("default/" + c->first);
        held.erase(c);
      } else if (op == 3) {  // a pod bound to a random node
        api::Pod p = pod("p" + std::to_string(++made));
        p.spec.nodeName = names[rng() % names.size()];
        pods.push_back(p.metadata.name);
        cache.upsert_pod(p);
      } else if (op == 4 && !pods.empty()) {
        const size_t i = rng() % pods.size();
        cache.delete_pod("default/" + pods[i]);
        pods.erase(pods.begin() + static_cast<std::ptrdiff_t>(i));
      } else if (op == 5) {  // to the other zone
        api::Node n = *cache.node(names[rng() % names.size()]);
        n.metadata.labels["zone"] = n.metadata.labels["zone"] == "a" ? "b" : "a";
        cache.upsert_node(n);
      }
      classes.refresh();
      for (size_t i = 0; i < names.size(); ++i) {
        for (size_t j = i + 1; j < names.size(); ++j) {
          const api::Node &a = *cache.node(names[i]), &b = *cache.node(names[j]);
          const auto sa = dra.device_signature(names[i]), sb = dra.device_signature(names[j]);
          const bool alike = a.spec.taints == b.spec.taints && cache.pods_on_node(names[i]) == cache.pods_on_node(names[j]) &&
                             sa.values != nullptr && sb.values != nullptr && sa == sb;
          ASSERT_EQ(classes.group_of(names[i]) == classes.group_of(names[j]), alike)
              << names[i] << " and " << names[j] << " at step " << step;
        }
      }
    }
    // The nodes without GPUs of their own share their zone's view.
    EXPECT_LE(cache.views_kept(), own_gpus.size() + 2);
  }
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
