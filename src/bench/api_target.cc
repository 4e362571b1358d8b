// --mode api: a `draplane server` as production runs it (cluster::LocalCluster
// with its scheduler and claim controller, HTTPS, the chosen store), no nodes
// running: Node and ResourceSlice objects are created through the API like
// scheduler_perf's createNodes / createResourceDriver. Pods are created by
// `clients` concurrent REST clients; a pod informer (scheduler_perf's method)
// sees them bound.
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "api/codec.h"
#include "bench/modes.h"
#include "client/informer.h"
#include "client/resource_path.h"
#include "client/rest_client.h"
#include "cluster/local_cluster.h"

namespace draplane::bench {
namespace {

namespace res = client::resources;

client::Path collection_of(const api::Object& o) {
  const std::string& ns = api::meta_of(o).namespace_;
  return std::visit(
      [&](const auto& obj) -> client::Path {
        using T = std::decay_t<decltype(obj)>;
        if constexpr (std::is_same_v<T, api::Namespace>) return res::kNamespaces.all();
        if constexpr (std::is_same_v<T, api::Node>) return res::kNodes.all();
        if constexpr (std::is_same_v<T, api::DeviceClass>) return res::kDeviceClasses.all();
        if constexpr (std::is_same_v<T, api::ResourceSlice>) return res::kResourceSlices.all();
        if constexpr (std::is_same_v<T, api::DeviceTaintRule>) return res::kDeviceTaintRules.all();
        if constexpr (std::is_same_v<T, api::ResourceClaimTemplate>) return res::kResourceClaimTemplates.ns(ns);
        if constexpr (std::is_same_v<T, api::ResourceClaim>) return res::kResourceClaims.ns(ns);
        if constexpr (std::is_same_v<T, api::Pod>) return res::kPods.ns(ns);
        return client::Path("/unsupported/" + std::string(api::kind_of(obj)));
      },
      o);
}

// The sum of apiserver_request_total over its series, WATCH and LIST aside.
int64_t requests_in_metrics(const std::string& text) {
  int64_t total = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    if (line.rfind("apiserver_request_total{", 0) != 0) continue;
    if (line.find("verb=\"WATCH\"") != std::string_view::npos || line.find("verb=\"LIST\"") != std::string_view::npos) {
      continue;
    }
    size_t space = line.rfind(' ');
    if (space == std::string_view::npos) continue;
    total += std::atoll(std::string(line.substr(space + 1)).c_str());
  }
  return total;
}

Result<void> annotate(Result<std::string> r, const std::string& what) {
  if (r.has_value()) return {};
  return Status(r.error().code(), what + ": " + r.error().message());
}

}  // namespace

Result<void> parallel_requests(const client::KubeConfig& cfg, int threads, size_t n,
                      const std::function<Result<void>(client::RestClient&, size_t)>& fn) {
  std::atomic<size_t> next{0};
  std::mutex mu;
  Status first;
  std::vector<std::thread> pool;
  for (int t = 0; t < std::max(1, threads); ++t) {
    pool.emplace_back([&] {
      auto rest = client::RestClient::create(cfg);
      if (!rest.has_value()) {
        std::lock_guard<std::mutex> l(mu);
        first = rest.error();
        return;
      }
      for (size_t i = next++; i < n; i = next++) {
        if (auto r = fn(**rest, i); !r.has_value()) {
          std::lock_guard<std::mutex> l(mu);
          if (first.ok()) first = r.error();
        }
      }
    });
  }
  for (auto& t : pool) t.join();
  if (!first.ok()) return first;
  return {};
}

Result<void> parallel_requests(const std::vector<std::unique_ptr<client::RestClient>>& clients, size_t n,
                               const std::function<Result<void>(client::RestClient&, size_t)>& fn) {
  std::atomic<size_t> next{0};
  std::mutex mu;
  Status first;
  std::vector<std::thread> pool;
  for (const auto& rest : clients) {
    pool.emplace_back([&, client = rest.get()] {
      for (size_t i = next++; i < n; i = next++) {
        if (auto r = fn(*client, i); !r.has_value()) {
          std::lock_guard<std::mutex> l(mu);
          if (first.ok()) first = r.error();
        }
      }
    });
  }
  for (auto& t : pool) t.join();
  if (!first.ok()) return first;
  return {};
}

namespace {

class ApiTarget final : public Target {
 public:
  ApiTarget(Tracker& tracker, const Options& options, std::unique_ptr<cluster::LocalCluster> c, std::string dir,
            bool remove_dir)
      : tracker_(tracker), options_(options), cluster_(std::move(c)), dir_(std::move(dir)), remove_dir_(remove_dir) {}

  ~ApiTarget() override {
    stop();
    if (remove_dir_) std::filesystem::remove_all(dir_);
  }

  Result<void> start() {
    auto rest = client::RestClient::create(cluster_->admin_config());
    if (!rest.has_value()) return rest.error();
    rest_ = std::move(*rest);
    auto watch_rest = client::RestClient::create(cluster_->admin_config());
    if (!watch_rest.has_value()) return watch_rest.error();
    watch_rest_ = std::move(*watch_rest);
    for (int i = 0; i < std::max(1, options_.clients); ++i) {
      auto c = client::RestClient::create(cluster_->admin_config());
      if (!c.has_value()) return c.error();
      clients_.push_back(std::move(*c));
    }
    pods_ = std::make_unique<client::Informer<api::Pod>>(
        *watch_rest_, client::RawInformer::Options{"v1", "Pod", res::kPods.all().str(), "", "", 1000, true, nullptr});
    pods_->add_handler(
        [this](client::EventType type, const api::Pod*, const api::Pod& pod) {
          if (type == client::EventType::kDeleted) return;
          if (!pod.spec.nodeName.empty()) {
            tracker_.bound(pod_key(pod));
            return;
          }
          for (const auto& c : pod.status.conditions) {
            if (c.type == "PodScheduled" && c.status == "False") tracker_.unschedulable(pod_key(pod), c.message);
          }
        });
    pods_->start();
    if (!pods_->wait_synced(30000)) return Status(Code::kUnavailable, "the pod informer did not sync");
    return {};
  }

  Result<void> create(const api::Object& object) override {
    return annotate(rest_->post(collection_of(object), api::to_json(object)),
                    "create " + std::string(api::kind_of(object)) + " " + api::meta_of(object).name);
  }

  Result<void> create_allocated(const api::ResourceClaim& claim) override {
    api::ResourceClaim c = claim;
    c.status = {};
    auto created = rest_->post(collection_of(c), api::to_json(c));
    if (!created.has_value()) return annotate(created, "create claim " + c.metadata.name);
    auto stored = api::decode_as<api::ResourceClaim>(*created);
    if (!stored.has_value()) return stored.error();
    stored->status.allocation = claim.status.allocation;
    return annotate(rest_->put(res::kResourceClaims.ns(c.metadata.namespace_).name(c.metadata.name).sub("status"),
                               api::to_json(*stored)),
                    "allocate claim " + c.metadata.name);
  }

  Result<void> create_pods(const std::vector<api::Pod>& pods) override {
    // Encoded before the clock starts for each pod: what is measured is the
    // API server, controller and scheduler, not this program's encoder.
    std::vector<std::string> bodies;
    bodies.reserve(pods.size());
    for (const auto& p : pods) bodies.push_back(api::to_json(p));
    return parallel_requests(clients_, pods.size(),
                    [&](client::RestClient& rest, size_t i) -> Result<void> {
                      tracker_.created(pod_key(pods[i]));
                      return annotate(rest.post(res::kPods.ns(pods[i].metadata.namespace_), bodies[i]),
                                      "create pod " + pods[i].metadata.name);
                    });
  }

  Result<void> delete_pods(const std::vector<api::Pod>& pods) override {
    return parallel_requests(clients_, pods.size(),
                    [&](client::RestClient& rest, size_t i) -> Result<void> {
                      const auto& m = pods[i].metadata;
                      auto path = res::kPods.ns(m.namespace_).name(m.name).str() + "?gracePeriodSeconds=0";
                      return annotate(rest.del(path), "delete pod " + m.name);
                    });
  }

  int64_t api_requests() override {
    auto text = rest_->get("/metrics");
    if (!text.has_value()) return -1;
    return requests_in_metrics(*text);
  }

  Result<FinalState> final_state() override {
    FinalState s;
    client::Informer<api::Pod> pods(*rest_, {"v1", "Pod", res::kPods.all().str(), "", "", 1000, true, nullptr});
    client::Informer<api::ResourceClaim> claims(
        *rest_, {"resource.k8s.io/v1", "ResourceClaim", res::kResourceClaims.all().str(), "", "", 1000, true, nullptr});
    pods.start();
    claims.start();
    if (!pods.wait_synced(60000) || !claims.wait_synced(60000)) {
      return Status(Code::kUnavailable, "listing pods and claims for the check failed");
    }
    s.pods = pods.list();
    s.claims = claims.list();
    pods.stop();
    claims.stop();
    return s;
  }

  int64_t stop() override {
    if (pods_) pods_->stop();
    clients_.clear();
    if (cluster_) cluster_->stop();
    return -1;
  }

 private:
  Tracker& tracker_;
  Options options_;
  std::unique_ptr<cluster::LocalCluster> cluster_;
  std::string dir_;
  bool remove_dir_;
  std::unique_ptr<client::RestClient> rest_, watch_rest_;
  std::vector<std::unique_ptr<client::RestClient>> clients_;  // --clients, kept connected
  std::unique_ptr<client::Informer<api::Pod>> pods_;
};

}  // namespace

std::string run_data_dir(const Options& options, const std::string& prefix, bool* temporary) {
  *temporary = options.data_dir.empty();
  if (!*temporary) return options.data_dir;
  std::string dir = (std::filesystem::temp_directory_path() / (prefix + "-" + std::to_string(::getpid()))).string();
  std::filesystem::remove_all(dir);
  return dir;
}

Result<std::unique_ptr<Target>> make_api_target(Tracker& tracker, const Options& options) {
  if (options.store != "sqlite" && options.store != "memory") {
    return Status(Code::kInvalid, "--store: must be sqlite or memory, not \"" + options.store + "\"");
  }
  bool temp = false;
  const std::string dir = run_data_dir(options, "draplane-bench", &temp);
  cluster::LocalClusterOptions o;
  o.data_dir = dir;
  o.listen = "127.0.0.1:0";
  o.store = options.store;
  auto c = cluster::LocalCluster::start(o);
  if (!c.has_value()) return c.error();
  auto t = std::make_unique<ApiTarget>(tracker, options, std::move(*c), dir, temp);
  if (auto r = t->start(); !r.has_value()) return r.error();
  return std::unique_ptr<Target>(std::move(t));
}

}  // namespace draplane::bench
