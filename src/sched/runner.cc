#include "sched/runner.h"

#include <spdlog/spdlog.h>

#include <unistd.h>

#include <chrono>
#include <map>
#include <thread>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/resource_path.h"
#include "sched/plugins/queues.h"
#include "sched/rest_binder.h"

namespace draplane::sched {
namespace {

using namespace client::resources;

template <typename T>
std::unique_ptr<client::Informer<T>> informer(client::RestClient& c, Scheduler& s, std::string api_version,
                                              std::string kind, std::string path) {
  client::RawInformer::Options o;
  o.api_version = std::move(api_version);
  o.kind = std::move(kind);
  o.path = std::move(path);
  o.strip_managed_fields = true;  // writes from the cache keep the server's
  o.keep_objects = false;         // the scheduler's cache keeps them
  auto inf = std::make_unique<client::Informer<T>>(c, std::move(o));
  inf->add_handler(
      [&s](client::EventType type, const T*, const T& obj) {
        s.post(Event{type == client::EventType::kDeleted ? Event::Op::kDelete : Event::Op::kUpsert, obj});
      });
  return inf;
}

// KAI Queues: spec changes go to the scheduler (untyped: KAI's CRD).
std::unique_ptr<client::RawInformer> queue_informer(client::RestClient& c, Scheduler& s) {
  client::RawInformer::Options o;
  o.api_version = "scheduling.run.ai/v2";
  o.kind = "Queue";
  o.path = "/apis/scheduling.run.ai/v2/queues";
  o.strip_managed_fields = true;
  auto inf = std::make_unique<client::RawInformer>(c, std::move(o));
  inf->add_handler([&s](client::EventType type, const std::string&, const std::string&, const std::string& json) {
    s.post_queue(json, type == client::EventType::kDeleted);
  });
  return inf;
}

// Writes each queue's status (allocated, requested, fairShare, childQueues)
// when it changed, about every two seconds, until `stop`.
void write_queue_statuses(client::RestClient& c, Scheduler& s, const std::atomic<bool>& stop,
                          spdlog::logger& log) {
  std::map<std::string, std::string> written;
  while (!stop.load()) {
    for (int i = 0; i < 20 && !stop.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (const auto& r : s.queue_reports()) {
      std::string status = plugins::queue_status_json(r);
      auto& last = written[r.name];
      if (last == status) continue;
      auto out = c.patch("/apis/scheduling.run.ai/v2/queues/" + r.name + "/status", "{\"status\":" + status + "}");
      if (out.has_value()) last = status;
      else log.debug("queue {}: status not written: {}", r.name, out.error().message());
    }
  }
}

}  // namespace

Result<void> run_scheduler(client::RestClient& client, client::RestClient& binder_client,
                           const RunnerOptions& options, const std::atomic<bool>& stop) {
  auto log = options.logger ? options.logger : spdlog::default_logger();
  common::RealClock clock;
  // Scheduled / FailedScheduling through events.k8s.io/v1, as kube-scheduler
  // writes them; on their own thread so no cycle waits for an event's write.
  client::EventRecorderOptions eo;
  eo.api = client::EventRecorderOptions::Api::kEventsV1;
  eo.component = "default-scheduler";
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  client::EventRecorder recorder(binder_client, eo);
  RestBinder binder(binder_client);
  binder.set_recorder(&recorder, host);
  Scheduler scheduler(binder, clock, options.scheduler, log);

  auto nodes = informer<api::Node>(client, scheduler, "v1", "Node", kNodes.all().str());
  auto classes = informer<api::DeviceClass>(client, scheduler, api::kResourceV1, "DeviceClass",
                                            kDeviceClasses.all().str());
  auto slices = informer<api::ResourceSlice>(client, scheduler, api::kResourceV1, "ResourceSlice",
                                             kResourceSlices.all().str());
  auto rules = informer<api::DeviceTaintRule>(client, scheduler, api::kResourceV1, "DeviceTaintRule",
                                              kDeviceTaintRules.all().str());
  auto claims = informer<api::ResourceClaim>(client, scheduler, api::kResourceV1, "ResourceClaim",
                                             kResourceClaims.all().str());
  auto groups = informer<api::PodGroup>(client, scheduler, "scheduling.k8s.io/v1beta1", "PodGroup",
                                        kPodGroups.all().str());
  auto pods = informer<api::Pod>(client, scheduler, "v1", "Pod", kPods.all().str());
  auto queues = queue_informer(client, scheduler);
  queues->start();
  // Inventory and claims first, so the first pods already see them.
  nodes->start();
  classes->start();
  slices->start();
  rules->start();
  claims->start();
  groups->start();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(options.sync_timeout_ms);
  auto synced_by_deadline = [&](const auto& inf) {
    while (!inf->synced()) {
      if (stop.load() || std::chrono::steady_clock::now() > deadline) return false;
      inf->wait_synced(100);
    }
    return true;
  };
  bool synced = synced_by_deadline(nodes) && synced_by_deadline(classes) && synced_by_deadline(slices) &&
                synced_by_deadline(rules) && synced_by_deadline(claims) && synced_by_deadline(groups);
  if (synced) {
    pods->start();
    synced = synced_by_deadline(pods);
  }
  Result<void> result;
  if (!synced && !stop.load()) {
    result = Status(Code::kUnavailable, "scheduler: informers did not sync within " +
                                            std::to_string(options.sync_timeout_ms) + " ms");
  } else if (synced) {
    log->info("scheduler {} started", options.scheduler.name);
    std::thread queue_status([&] { write_queue_statuses(binder_client, scheduler, stop, *log); });
    std::thread waker([&] {
      while (!stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      scheduler.wake();
    });
    scheduler.run(stop);
    waker.join();
    queue_status.join();
    const auto& st = scheduler.stats();
    log->info("scheduler stopped: {} cycles, {} bound, {} unschedulable attempts, {} retries ({} conflicts), "
              "{} allocator runs ({} failures known from pods of the same claim shape), {} view builds, {} snapshot builds; {:.2f} s in cycles, {:.2f} s applying {} events; "
              "waiting pods retried after {} node changes, {} flushes, {} releases",
              st.cycles, st.bound, st.unschedulable, st.retries, st.conflicts, st.allocator_runs, st.shape_memo_hits,
              scheduler.cache().view_builds(), scheduler.cache().snapshot_builds(), st.cycle_seconds, st.event_seconds, st.events, st.node_wakeups, st.flushes,
              st.releases);
  }
  queues->stop();
  pods->stop();
  groups->stop();
  claims->stop();
  rules->stop();
  slices->stop();
  classes->stop();
  nodes->stop();
  return result;
}

}  // namespace draplane::sched
