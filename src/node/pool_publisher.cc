#include "node/pool_publisher.h"

#include "node/agent_node.h"
#include "node/node_devices.h"

namespace draplane::node {

namespace {

// Logs the class warnings and the shared devices when they differ from the last
// time (`last`), so a republish for another reason does not repeat them.
void report_sharing(const SliceOptions& o, const std::vector<std::string>& warnings, std::string& last,
                    spdlog::logger& log) {
  std::string shared;
  for (const auto& [device, shares] : o.sharing) shared += " " + device + "=" + to_string(shares);
  std::string now = shared;
  for (const auto& w : warnings) now += "\n" + w;
  if (now == last) return;
  last = now;
  for (const auto& w : warnings) log.warn("{}", w);
  log.info("node {}: devices shared by DeviceClass config:{}", o.node_name, shared.empty() ? " none" : shared);
}

}  // namespace

PoolPublisher::PoolPublisher(client::RestClient& rest, std::vector<GpuInfo> gpus, SliceOptions options,
                             HealthMonitor& health, spdlog::logger& log)
    : rest_(rest),
      gpus_(std::move(gpus)),
      options_(std::move(options)),
      health_(health),
      log_(log),
      classes_(rest, class_informer()) {
  classes_.add_handler([this](client::EventType, const api::DeviceClass*, const api::DeviceClass&) {
    republish_.store(true);
  });
}

PoolPublisher::~PoolPublisher() { stop(); }

SliceOptions PoolPublisher::desired() {
  std::vector<std::string> warnings;
  SliceOptions o = options_;
  o.taints = health_.taints();
  o = with_class_sharing(std::move(o), gpus_, classes_.list(), warnings);
  report_sharing(o, warnings, last_sharing_, log_);
  return o;
}

Status PoolPublisher::start(const std::atomic<bool>& stop) {
  if (!options_.consumable_shares.enabled()) {
    classes_.start();
    if (!classes_.wait_synced(10000)) log_.warn("DeviceClasses not listed yet: publishing without their sharing");
  }
  Status st = retry(stop, log_, "publish resource slices", [&] { return publish_slices(rest_, gpus_, desired(), log_); });
  if (!st.ok()) return st;
  slices_ = std::make_unique<client::RawInformer>(rest_, slice_informer(options_.node_name));
  slices_->add_handler([this](client::EventType type, const std::string&, const std::string&, const std::string&) {
    if (type != client::EventType::kAdded) republish_.store(true);
  });
  slices_->start();
  return {};
}

bool PoolPublisher::poll_once(int timeout_ms) {
  bool health_changed = health_.poll_once(timeout_ms);
  bool changed_elsewhere = republish_.exchange(false);
  if (!health_changed && !changed_elsewhere) return false;
  Status s = publish_slices(rest_, gpus_, desired(), log_);
  if (!s.ok()) {
    log_.warn("republish slices after {}: {}", health_changed ? "a health event" : "a change elsewhere", s.to_string());
    republish_.store(true);  // tried again on the next round
  }
  return health_changed;
}

void PoolPublisher::stop() {
  if (slices_) slices_->stop();
  classes_.stop();
}

}  // namespace draplane::node
