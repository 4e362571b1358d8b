#include "node/driver.h"

#include <spdlog/sinks/null_sink.h>

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "api/codec.h"
#include "client/resource_path.h"
#include "dra_health_v1alpha1.grpc.pb.h"
#include "dra_v1.grpc.pb.h"
#include "dra_v1beta1.grpc.pb.h"
#include "node/agent_node.h"
#include "node/checkpoint.h"
#include "node/gpu_backend.h"
#include "node/health.h"
#include "node/node_devices.h"
#include "node/pool_publisher.h"
#include "pluginregistration.grpc.pb.h"

namespace draplane::node {

namespace dra_v1 = k8s::io::kubelet::pkg::apis::dra::v1;
namespace dra_v1beta1 = k8s::io::kubelet::pkg::apis::dra::v1beta1;

// ---------------------------------------------------------------- claims

ClaimOutcome ClaimPreparer::prepare_one(const ClaimRef& ref) {
  const std::string who = ref.namespace_ + "/" + ref.name;
  auto body = rest_.get(client::resources::kResourceClaims.ns(ref.namespace_).name(ref.name));
  if (!body.has_value()) return {{}, fmt::format("retrieve claim {}: {}", who, body.error().message())};
  auto claim = api::decode_as<api::ResourceClaim>(*body);
  if (!claim.has_value()) return {{}, fmt::format("decode claim {}: {}", who, claim.error().message())};
  if (claim->metadata.uid != ref.uid) {
    // Deleted and created again under the same name: not the claim the
    // kubelet means, whose allocation is gone with it.
    return {{}, fmt::format("claim {}: metadata.uid: is {}, the kubelet asked for {} (the claim was replaced)", who,
                            claim->metadata.uid, ref.uid)};
  }
  if (!claim->status.allocation) return {{}, fmt::format("claim {}: status.allocation: not allocated", who)};
  auto devices = devices_.prepare(ref, *claim->status.allocation);
  if (!devices.has_value()) return {{}, fmt::format("prepare claim {}: {}", who, devices.error().message())};
  return {std::move(*devices), ""};
}

std::map<std::string, ClaimOutcome> ClaimPreparer::prepare(const std::vector<ClaimRef>& claims) {
  std::map<std::string, ClaimOutcome> out;
  for (const ClaimRef& c : claims) out[c.uid] = prepare_one(c);
  return out;
}

std::map<std::string, ClaimOutcome> ClaimPreparer::unprepare(const std::vector<ClaimRef>& claims) {
  std::map<std::string, ClaimOutcome> out;
  for (const ClaimRef& c : claims) {
    Status st = devices_.unprepare(c.uid);
    out[c.uid].error = st.ok() ? "" : fmt::format("unprepare claim {}/{}: {}", c.namespace_, c.name, st.message());
  }
  return out;
}

// ---------------------------------------------------------------- gRPC

namespace {

// v1 and v1beta1 carry the same messages in two packages: one body for both.
template <typename Request>
std::vector<ClaimRef> claims_of(const Request& request) {
  std::vector<ClaimRef> out;
  for (const auto& c : request.claims()) out.push_back({c.namespace_(), c.name(), c.uid()});
  return out;
}

template <typename Request, typename Response>
void prepare_rpc(ClaimPreparer& preparer, const Request& request, Response& response) {
  for (auto& [uid, outcome] : preparer.prepare(claims_of(request))) {
    auto& entry = (*response.mutable_claims())[uid];
    if (!outcome.error.empty()) {
      entry.set_error(outcome.error);
      continue;
    }
    for (const PreparedDeviceResult& d : outcome.devices) {
      auto* dev = entry.add_devices();
      for (const auto& r : d.request_names) dev->add_request_names(r);
      dev->set_pool_name(d.pool_name);
      dev->set_device_name(d.device_name);
      for (const auto& id : d.cdi_device_ids) dev->add_cdi_device_ids(id);
    }
  }
}

template <typename Request, typename Response>
void unprepare_rpc(ClaimPreparer& preparer, const Request& request, Response& response) {
  for (auto& [uid, outcome] : preparer.unprepare(claims_of(request))) {
    (*response.mutable_claims())[uid].set_error(outcome.error);
  }
}

// One DRAPlugin service for a package (v1, v1beta1): the same calls on that
// package's message types.
template <typename Service, typename PrepareRequest, typename PrepareResponse, typename UnprepareRequest,
          typename UnprepareResponse>
class DraService final : public Service {
 public:
  explicit DraService(ClaimPreparer& p) : p_(p) {}
  grpc::Status NodePrepareResources(grpc::ServerContext*, const PrepareRequest* req, PrepareResponse* resp) override {
    prepare_rpc(p_, *req, *resp);
    return grpc::Status::OK;
  }
  grpc::Status NodeUnprepareResources(grpc::ServerContext*, const UnprepareRequest* req,
                                      UnprepareResponse* resp) override {
    unprepare_rpc(p_, *req, *resp);
    return grpc::Status::OK;
  }

 private:
  ClaimPreparer& p_;
};

using DraV1 = DraService<dra_v1::DRAPlugin::Service, dra_v1::NodePrepareResourcesRequest,
                         dra_v1::NodePrepareResourcesResponse, dra_v1::NodeUnprepareResourcesRequest,
                         dra_v1::NodeUnprepareResourcesResponse>;
using DraV1beta1 = DraService<dra_v1beta1::DRAPlugin::Service, dra_v1beta1::NodePrepareResourcesRequest,
                              dra_v1beta1::NodePrepareResourcesResponse, dra_v1beta1::NodeUnprepareResourcesRequest,
                              dra_v1beta1::NodeUnprepareResourcesResponse>;

v1alpha1::HealthStatus health_status(const std::string& health) {
  if (health == "Healthy") return v1alpha1::HEALTHY;
  if (health == "Unhealthy") return v1alpha1::UNHEALTHY;
  return v1alpha1::UNKNOWN;
}

}  // namespace

struct KubeletPlugin::Impl final : public v1alpha1::DRAResourceHealth::Service,
                                   public pluginregistration::Registration::Service {
  Impl(ClaimPreparer& p, HealthFn h, std::shared_ptr<const common::Clock> c, PluginSockets s, spdlog::logger& l)
      : v1(p), v1beta1(p), health(std::move(h)), clock(std::move(c)), sockets(std::move(s)), log(l) {
    updated_at = unix_now();
  }

  int64_t unix_now() const {
    return std::chrono::duration_cast<std::chrono::seconds>(clock->wall().time_since_epoch()).count();
  }

  v1alpha1::NodeWatchResourcesResponse health_list() {
    int64_t at;
    {
      std::lock_guard<std::mutex> l(mu);
      at = updated_at;
    }
    v1alpha1::NodeWatchResourcesResponse out;
    for (const DeviceHealthReport& r : health()) {
      auto* d = out.add_devices();
      d->mutable_device()->set_pool_name(sockets.node_name);
      d->mutable_device()->set_device_name(r.device);
      d->set_health(health_status(r.health));
      d->set_last_updated_time(at);
      d->set_message(r.message);
    }
    return out;
  }

  grpc::Status NodeWatchResources(grpc::ServerContext* ctx, const v1alpha1::NodeWatchResourcesRequest*,
                                  grpc::ServerWriter<v1alpha1::NodeWatchResourcesResponse>* writer) override {
    uint64_t sent = 0;
    bool first = true;
    while (true) {
      {
        std::unique_lock<std::mutex> l(mu);
        // Woken by a change or stop; the timeout notices a kubelet that went away.
        cv.wait_for(l, std::chrono::milliseconds(200), [&] { return stopping || first || version != sent; });
        if (stopping) return grpc::Status::OK;
        if (ctx->IsCancelled()) return grpc::Status::CANCELLED;
        if (!first && version == sent) continue;
        sent = version;
        first = false;
      }
      if (!writer->Write(health_list())) return grpc::Status::CANCELLED;
    }
  }

  grpc::Status GetInfo(grpc::ServerContext*, const pluginregistration::InfoRequest*,
                       pluginregistration::PluginInfo* info) override {
    info->set_type(kDraPluginType);
    info->set_name(kDriverName);
    info->set_endpoint(dra_socket_path(sockets.plugin_dir));
    for (const char* v : {"v1.DRAPlugin", "v1beta1.DRAPlugin", "v1alpha1.DRAResourceHealth"}) {
      info->add_supported_versions(v);
    }
    return grpc::Status::OK;
  }

  grpc::Status NotifyRegistrationStatus(grpc::ServerContext*, const pluginregistration::RegistrationStatus* status,
                                        pluginregistration::RegistrationStatusResponse*) override {
    if (status->plugin_registered()) {
      log.info("registered with the kubelet");
    } else {
      log.error("the kubelet refused the registration: {}", status->error());
    }
    std::lock_guard<std::mutex> l(mu);
    registration = Registration{status->plugin_registered(), status->error()};
    return grpc::Status::OK;
  }

  DraV1 v1;
  DraV1beta1 v1beta1;
  HealthFn health;
  std::shared_ptr<const common::Clock> clock;
  const PluginSockets sockets;
  spdlog::logger& log;
  std::unique_ptr<grpc::Server> dra_server, reg_server;

  mutable std::mutex mu;
  std::condition_variable cv;
  uint64_t version = 0;  // health changes so far
  int64_t updated_at = 0;
  bool stopping = false;
  std::optional<Registration> registration;
};

namespace {

// Binds `path` (a stale socket left by a crash is removed first) with `services`.
Result<std::unique_ptr<grpc::Server>> serve(const std::string& path, const std::vector<grpc::Service*>& services) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  std::filesystem::remove(path, ec);
  grpc::ServerBuilder b;
  int bound = 0;
  b.AddListeningPort("unix:" + path, grpc::InsecureServerCredentials(), &bound);
  for (grpc::Service* s : services) b.RegisterService(s);
  std::unique_ptr<grpc::Server> server = b.BuildAndStart();
  if (!server || bound == 0) return Status(Code::kUnavailable, fmt::format("kubelet plugin: cannot listen on {}", path));
  return server;
}

}  // namespace

KubeletPlugin::KubeletPlugin(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

KubeletPlugin::~KubeletPlugin() { stop(); }

Result<std::unique_ptr<KubeletPlugin>> KubeletPlugin::start(ClaimPreparer& preparer, HealthFn health,
                                                            std::shared_ptr<const common::Clock> clock,
                                                            const PluginSockets& sockets, spdlog::logger& log) {
  auto impl = std::make_unique<Impl>(preparer, std::move(health), std::move(clock), sockets, log);
  const std::string dra = dra_socket_path(sockets.plugin_dir);
  ASSIGN_OR_RETURN(impl->dra_server, serve(dra, {&impl->v1, &impl->v1beta1,
                                                 static_cast<v1alpha1::DRAResourceHealth::Service*>(impl.get())}));
  const std::string reg = registration_socket_path(sockets.registry_dir);
  auto r = serve(reg, {static_cast<pluginregistration::Registration::Service*>(impl.get())});
  if (!r.has_value()) {
    impl->dra_server->Shutdown();
    return r.status();
  }
  impl->reg_server = std::move(*r);
  log.info("kubelet plugin: registration on {}, DRA services on {}", reg, dra);
  return std::unique_ptr<KubeletPlugin>(new KubeletPlugin(std::move(impl)));
}

void KubeletPlugin::health_changed() {
  std::lock_guard<std::mutex> l(impl_->mu);
  ++impl_->version;
  impl_->updated_at = impl_->unix_now();
  impl_->cv.notify_all();
}

std::optional<KubeletPlugin::Registration> KubeletPlugin::registration() const {
  std::lock_guard<std::mutex> l(impl_->mu);
  return impl_->registration;
}

void KubeletPlugin::stop() {
  {
    std::lock_guard<std::mutex> l(impl_->mu);
    if (impl_->stopping) return;
    impl_->stopping = true;
    impl_->cv.notify_all();
  }
  // Registration first: the kubelet's plugin watcher sees the socket go and
  // deregisters before the DRA socket disappears.
  // In-flight calls get a moment to finish (the health streams end at once on
  // `stopping`), then they are cancelled.
  auto deadline = [] { return std::chrono::system_clock::now() + std::chrono::seconds(2); };
  std::error_code ec;
  impl_->reg_server->Shutdown(deadline());
  std::filesystem::remove(registration_socket_path(impl_->sockets.registry_dir), ec);
  impl_->dra_server->Shutdown(deadline());
  std::filesystem::remove(dra_socket_path(impl_->sockets.plugin_dir), ec);
}

// ---------------------------------------------------------------- run

Result<void> run_driver(client::RestClient& rest, const DriverOptions& options, const std::atomic<bool>& stop) {
  if (options.node_name.empty()) return invalid_error("driver: --node is required");
  auto log = options.logger ? options.logger
                            : std::make_shared<spdlog::logger>("driver", std::make_shared<spdlog::sinks::null_sink_mt>());
  // Absolute: GetInfo tells the kubelet where dra.sock is, and the kubelet
  // runs in another directory.
  const std::string plugin_dir = std::filesystem::absolute(options.plugin_dir).lexically_normal().string();
  const std::string registry_dir = std::filesystem::absolute(options.registry_dir).lexically_normal().string();
  PrepareOptions po;
  po.node_name = options.node_name;
  po.cdi_dir = std::filesystem::absolute(options.cdi_root).lexically_normal().string();
  po.plugin_dir = plugin_dir;
  po.driver_root = options.driver_root;
  ASSIGN_OR_RETURN(NodeDevices opened,
                   open_node_devices(options.gpus, po, options.boot_id.empty() ? read_boot_id() : options.boot_id));
  GpuBackend& backend = *opened.backend;
  DeviceState& devices = *opened.devices;
  const std::vector<GpuInfo> gpus = devices.gpus();
  log->info("node {}: {} GPU(s) ({})", options.node_name, gpus.size(), options.gpus);

  // The kubelet plugin first: a driver restarted while the API server is
  // unreachable still unprepares (that needs only the checkpoint); prepare
  // reports its claim's retrieval error until the server answers.
  HealthMonitor health(backend, gpus, options.dynamic_mig, *options.clock);
  ClaimPreparer preparer(rest, devices);
  auto report = [&health, &gpus, dynamic = options.dynamic_mig] {
    std::vector<DeviceHealthReport> out;
    auto taints = health.taints();
    for (const GpuInfo& g : gpus) {
      for (const std::string& name : device_names_of_gpu(g, dynamic)) {
        DeviceHealthReport r{name, health.health(name), ""};
        if (auto t = taints.find(name); t != taints.end()) {
          for (const api::DeviceTaint& taint : t->second) {
            r.message += (r.message.empty() ? "" : ", ") + taint.key + "=" + taint.value + ":" + taint.effect;
          }
        }
        out.push_back(std::move(r));
      }
    }
    return out;
  };
  ASSIGN_OR_RETURN(std::unique_ptr<KubeletPlugin> plugin,
                   KubeletPlugin::start(preparer, report, options.clock,
                                        {options.node_name, plugin_dir, registry_dir}, *log));

  // A node identity may not create DeviceClasses (NodeRestriction): the
  // cluster admin applies them (deploy/); this only helps a test cluster.
  SliceOptions so;
  so.node_name = options.node_name;
  so.dynamic_mig = options.dynamic_mig;
  so.consumable_shares = options.consumable_shares;
  PoolPublisher publisher(rest, gpus, so, health, *log);
  Status st = retry(stop, *log, "device classes", [&] { return ensure_device_classes(rest, *log); });
  if (st.ok()) st = publisher.start(stop);
  if (!st.ok()) {
    plugin->stop();
    return st;
  }
  while (!stop.load()) {
    if (publisher.poll_once(500)) plugin->health_changed();
  }
  plugin->stop();
  publisher.stop();
  return {};
}

}  // namespace draplane::node
