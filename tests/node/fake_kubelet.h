// FakeKubelet: the kubelet's side of the DRA plugin API, as a test client built
// from the same .proto files: it finds the plugin's registration socket in the
// registry dir (the kubelet's plugin watcher), calls GetInfo, checks what the
// plugin says, connects to its endpoint, sends NotifyRegistrationStatus, then
// calls NodePrepareResources / NodeUnprepareResources (v1 or v1beta1) and
// reads the NodeWatchResources health stream (header-only: tests/node and
// tests/cluster use it).
//
// Thread-safety: one test thread; the health stream is read on its own thread.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "dra_health_v1alpha1.grpc.pb.h"
#include "dra_v1.grpc.pb.h"
#include "dra_v1beta1.grpc.pb.h"
#include "pluginregistration.grpc.pb.h"

namespace draplane::node::testing {

namespace drapb = k8s::io::kubelet::pkg::apis::dra::v1;
namespace drapb_beta = k8s::io::kubelet::pkg::apis::dra::v1beta1;

class FakeKubelet {
 public:
  explicit FakeKubelet(std::string registry_dir) : registry_dir_(std::move(registry_dir)) {}
  ~FakeKubelet() { stop_health(); }

  // Waits up to timeout_ms for a *-reg.sock in the registry dir, then
  // registers the plugin as the kubelet does. Returns "" or what was wrong
  // (the kubelet then sends plugin_registered=false with that error).
  std::string register_plugin(int timeout_ms = 5000) {
    std::string socket = wait_registration_socket(timeout_ms);
    if (socket.empty()) return "no registration socket in " + registry_dir_;
    auto reg = pluginregistration::Registration::NewStub(channel(socket));
    grpc::ClientContext ctx;
    pluginregistration::InfoRequest req;
    grpc::Status st = reg->GetInfo(&ctx, req, &info_);
    if (!st.ok()) return "GetInfo: " + st.error_message();
    std::string error = check_info();
    if (error.empty()) {
      plugin_ = channel(info_.endpoint());
      if (!plugin_->WaitForConnected(deadline(timeout_ms))) error = "cannot connect to " + info_.endpoint();
    }
    grpc::ClientContext nctx;
    pluginregistration::RegistrationStatus status;
    status.set_plugin_registered(error.empty());
    status.set_error(error);
    pluginregistration::RegistrationStatusResponse resp;
    st = reg->NotifyRegistrationStatus(&nctx, status, &resp);
    if (!st.ok() && error.empty()) error = "NotifyRegistrationStatus: " + st.error_message();
    return error;
  }

  const pluginregistration::PluginInfo& info() const { return info_; }

  static drapb::Claim claim(const std::string& ns, const std::string& name, const std::string& uid) {
    drapb::Claim c;
    c.set_namespace_(ns);
    c.set_name(name);
    c.set_uid(uid);
    return c;
  }

  // NodePrepareResources (v1); a gRPC failure comes back as `status`.
  drapb::NodePrepareResourcesResponse prepare(const std::vector<drapb::Claim>& claims, grpc::Status* status = nullptr) {
    drapb::NodePrepareResourcesRequest req;
    for (const auto& c : claims) *req.add_claims() = c;
    drapb::NodePrepareResourcesResponse resp;
    grpc::ClientContext ctx;
    grpc::Status st = drapb::DRAPlugin::NewStub(plugin_)->NodePrepareResources(&ctx, req, &resp);
    if (status) *status = st;
    return resp;
  }
  drapb::NodeUnprepareResourcesResponse unprepare(const std::vector<drapb::Claim>& claims,
                                                  grpc::Status* status = nullptr) {
    drapb::NodeUnprepareResourcesRequest req;
    for (const auto& c : claims) *req.add_claims() = c;
    drapb::NodeUnprepareResourcesResponse resp;
    grpc::ClientContext ctx;
    grpc::Status st = drapb::DRAPlugin::NewStub(plugin_)->NodeUnprepareResources(&ctx, req, &resp);
    if (status) *status = st;
    return resp;
  }
  // The same through v1beta1 (an older kubelet).
  drapb_beta::NodePrepareResourcesResponse prepare_v1beta1(const drapb::Claim& c) {
    drapb_beta::NodePrepareResourcesRequest req;
    auto* claim = req.add_claims();
    claim->set_namespace_(c.namespace_());
    claim->set_name(c.name());
    claim->set_uid(c.uid());
    drapb_beta::NodePrepareResourcesResponse resp;
    grpc::ClientContext ctx;
    grpc::Status st = drapb_beta::DRAPlugin::NewStub(plugin_)->NodePrepareResources(&ctx, req, &resp);
    if (!st.ok()) resp.mutable_claims()->clear();
    return resp;
  }

  // Opens the health stream; its messages queue up for next_health().
  void watch_health() {
    health_ctx_ = std::make_unique<grpc::ClientContext>();
    health_thread_ = std::thread([this] {
      auto stub = v1alpha1::DRAResourceHealth::NewStub(plugin_);
      v1alpha1::NodeWatchResourcesRequest req;
      auto reader = stub->NodeWatchResources(health_ctx_.get(), req);
      v1alpha1::NodeWatchResourcesResponse msg;
      while (reader->Read(&msg)) {
        std::lock_guard<std::mutex> l(mu_);
        health_.push_back(msg);
        cv_.notify_all();
      }
      (void)reader->Finish();
      std::lock_guard<std::mutex> l(mu_);
      health_ended_ = true;
      cv_.notify_all();
    });
  }
  // The next health message, or nullopt after timeout_ms or the stream's end.
  std::optional<v1alpha1::NodeWatchResourcesResponse> next_health(int timeout_ms = 5000) {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait_for(l, std::chrono::milliseconds(timeout_ms), [&] { return !health_.empty() || health_ended_; });
    if (health_.empty()) return std::nullopt;
    auto m = health_.front();
    health_.pop_front();
    return m;
  }
  bool health_ended(int timeout_ms) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, std::chrono::milliseconds(timeout_ms), [&] { return health_ended_; });
  }
  void stop_health() {
    if (!health_thread_.joinable()) return;
    health_ctx_->TryCancel();
    health_thread_.join();
  }

 private:
  static std::shared_ptr<grpc::Channel> channel(const std::string& path) {
    return grpc::CreateChannel("unix:" + path, grpc::InsecureChannelCredentials());
  }
  static std::chrono::system_clock::time_point deadline(int ms) {
    return std::chrono::system_clock::now() + std::chrono::milliseconds(ms);
  }
  std::string wait_registration_socket(int timeout_ms) {
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < end) {
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(registry_dir_, ec)) {
        const std::string name = e.path().filename().string();
        if (e.is_socket() && name.size() > 9 && name.ends_with("-reg.sock")) return e.path().string();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return "";
  }
  // What the kubelet's DRA plugin handler checks of PluginInfo.
  std::string check_info() const {
    if (info_.type() != "DRAPlugin") return "unexpected plugin type " + info_.type();
    if (info_.name().empty()) return "empty driver name";
    if (info_.endpoint().empty()) return "empty endpoint";
    for (const auto& v : info_.supported_versions()) {
      if (v == "v1.DRAPlugin" || v == "v1beta1.DRAPlugin") return "";
    }
    return "none of the supported versions is v1.DRAPlugin or v1beta1.DRAPlugin";
  }

  const std::string registry_dir_;
  pluginregistration::PluginInfo info_;
  std::shared_ptr<grpc::Channel> plugin_;
  std::unique_ptr<grpc::ClientContext> health_ctx_;
  std::thread health_thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<v1alpha1::NodeWatchResourcesResponse> health_;
  bool health_ended_ = false;
};

}  // namespace draplane::node::testing
