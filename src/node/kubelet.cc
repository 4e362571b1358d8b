#include "node/kubelet.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include <spdlog/sinks/null_sink.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "api/codec.h"
#include "client/get_optional.h"
#include "client/resource_path.h"
#include "node/cdi.h"
#include "node/checkpoint.h"
#include "node/kubelet_env.h"

namespace draplane::node {
namespace {

using Clock = std::chrono::steady_clock;

using namespace client::resources;

client::Path pod_path(const std::string& ns, const std::string& name) { return kPods.ns(ns).name(name); }

constexpr const char* kProcessRecord = "process.json";
constexpr client::ResourcePath kConfigMaps{"", "v1", "configmaps"};
constexpr client::ResourcePath kSecrets{"", "v1", "secrets"};

bool terminal(const api::Pod& pod) { return pod.status.phase == "Succeeded" || pod.status.phase == "Failed"; }

client::EventRecorderOptions kubelet_events(const std::string& node) {
  client::EventRecorderOptions o;
  o.api = client::EventRecorderOptions::Api::kCoreV1;  // the kubelet's tools/record recorder
  o.component = "kubelet";
  o.instance = node;
  return o;
}

client::RawInformer::Options pod_informer(const std::string& node) {
  client::RawInformer::Options o;
  o.api_version = "v1";
  o.kind = "Pod";
  o.path = kPods.all().str();
  o.field_selector = "spec.nodeName=" + node;
  o.strip_managed_fields = true;  // status updates from this copy keep the server's
  return o;
}

}  // namespace

struct Kubelet::Worker {
  struct Proc {
    ContainerState state;
    int pid = 0;
    bool exited = true;
    int exit_code = 0;
    std::thread waiter;
    std::optional<Clock::time_point> restart_at;
  };
  std::mutex mu;
  std::condition_variable cv;
  api::Pod pod;          // latest seen; guarded by mu
  bool deleted = false;  // gone from the API; guarded by mu
  std::atomic<bool> finished{false};
  bool delete_sent = false;
  std::thread thread;
  std::string uid, ns, name, dir;
  std::vector<Proc> procs;              // guarded by mu
  std::vector<std::string> claim_uids;  // registered in holders_
  std::string last_message;
  std::map<std::string, PreparedClaimInfo> claims;  // prepared, by pod claim name; guarded by mu
  std::vector<std::pair<std::string, std::string>> claim_names;  // (ns, name) of the prepared claims; guarded by mu
  bool health_changed = false;  // report again; guarded by mu

  bool going_away() {  // mu held
    return deleted || !pod.metadata.deletionTimestamp.empty();
  }
};

Kubelet::Kubelet(client::RestClient& rest, DeviceState& devices, ProcessLauncher& launcher, KubeletOptions options)
    : rest_(rest), devices_(devices), launcher_(launcher), options_(std::move(options)),
      pods_(rest, pod_informer(options_.node_name)), events_(rest, kubelet_events(options_.node_name)) {
  if (!options_.logger) {
    options_.logger = std::make_shared<spdlog::logger>("kubelet", std::make_shared<spdlog::sinks::null_sink_mt>());
  }
  if (options_.boot_id.empty()) options_.boot_id = read_boot_id();
  pods_.add_handler([this](client::EventType t, const api::Pod*, const api::Pod& pod) { on_pod(t, pod); });
}

Kubelet::~Kubelet() { stop(); }

std::string Kubelet::now() const { return options_.clock->rfc3339(); }

void Kubelet::event(const Worker& w, const std::string& container, const char* type, const char* reason,
                    std::string message) {
  client::ObjectReference ref;
  ref.api_version = "v1";
  ref.kind = "Pod";
  ref.namespace_ = w.ns;
  ref.name = w.name;
  ref.uid = w.uid;
  if (!container.empty()) ref = client::container_reference(ref, container);
  events_.record(ref, type, reason, "", std::move(message));
}

void Kubelet::start() {
  if (started_) return;
  started_ = true;
  stopping_ = false;
  end_previous_containers();
  pods_.start();
  sweeper_ = std::thread([this] {
    std::unique_lock<std::mutex> l(mu_);
    while (!sweep_cv_.wait_for(l, std::chrono::milliseconds(options_.orphan_sweep_ms), [this] { return stopping_.load(); })) {
      l.unlock();
      if (pods_.synced()) sweep_orphans();
      l.lock();
    }
  });
}

void Kubelet::stop() {
  if (!started_) return;
  started_ = false;
  pods_.stop();
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
    sweep_cv_.notify_all();
    for (auto& [uid, w] : workers_) {
      std::lock_guard<std::mutex> wl(w->mu);
      w->cv.notify_all();
    }
  }
  sweeper_.join();
  std::map<std::string, std::shared_ptr<Worker>> workers;
  {
    std::lock_guard<std::mutex> l(mu_);
    workers.swap(workers_);
  }
  for (auto& [uid, w] : workers) {
    if (w->thread.joinable()) w->thread.join();
  }
}

bool Kubelet::wait_synced(int timeout_ms) { return pods_.wait_synced(timeout_ms); }

void Kubelet::device_health_changed() {
  if (!options_.device_health) return;
  std::set<std::pair<std::string, std::string>> claims;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (auto& [uid, w] : workers_) {
      std::lock_guard<std::mutex> wl(w->mu);
      w->health_changed = true;
      w->cv.notify_all();
      claims.insert(w->claim_names.begin(), w->claim_names.end());
    }
  }
  for (const auto& [ns, name] : claims) update_claim_health(ns, name);
}

void Kubelet::update_claim_health(const std::string& ns, const std::string& name) {
  const client::Path path = kResourceClaims.ns(ns).name(name);
  for (int attempt = 0; attempt < 8; ++attempt) {
    auto body = rest_.get(path);
    if (!body.has_value()) return;  // gone (or unreachable: the next change writes it)
    auto claim = api::decode_as<api::ResourceClaim>(*body);
    if (!claim.has_value()) return;
    auto devices = claim_device_statuses(*claim, options_.driver_name, options_.node_name, options_.device_health, now());
    if (devices == claim->status.devices) return;
    claim->status.devices = std::move(devices);
    auto out = rest_.put(path.sub("status"), api::to_json(api::Object(*claim)));
    if (out.has_value() || out.error().code() == Code::kNotFound) return;
    if (out.error().code() != Code::kConflict) {
      options_.logger->warn("claim {}/{}: device health status: {}", ns, name, out.error().to_string());
      return;
    }
  }
}

void Kubelet::on_pod(client::EventType type, const api::Pod& pod) {
  std::shared_ptr<Worker> w;
  std::vector<std::shared_ptr<Worker>> done;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stopping_) return;
    // Reap workers whose pods are gone.
    for (auto it = workers_.begin(); it != workers_.end();) {
      bool gone;
      {
        std::lock_guard<std::mutex> wl(it->second->mu);
        gone = it->second->deleted;
      }
      if (gone && it->second->finished) {
        done.push_back(it->second);
        it = workers_.erase(it);
      } else {
        ++it;
      }
    }
    auto it = workers_.find(pod.metadata.uid);
    if (it != workers_.end()) {
      w = it->second;
    } else if (type != client::EventType::kDeleted) {
      if (terminal(pod)) {
        // Finished before this agent (re)started: only a pending deletion to finish.
        if (!pod.metadata.deletionTimestamp.empty()) {
          w = std::make_shared<Worker>();
          w->finished = true;
        }
      } else {
        w = std::make_shared<Worker>();
      }
      if (w) {
        w->uid = pod.metadata.uid;
        w->ns = pod.metadata.namespace_;
        w->name = pod.metadata.name;
        w->dir = options_.state_dir + "/pods/" + w->ns + "_" + w->name + "_" + w->uid;
        w->pod = pod;
        workers_[w->uid] = w;
        if (!w->finished) w->thread = std::thread([this, w] {
          pthread_setname_np(pthread_self(), "kubelet-pod");
          run_worker(w);
        });
      }
    }
  }
  for (auto& d : done) {
    if (d->thread.joinable()) d->thread.join();
    // The pod is gone from the API: its working directory and logs go too (as the
    // kubelet removes /var/log/pods/<ns>_<name>_<uid>), or a long-running agent
    // keeps a directory and a log file for every pod it ever ran.
    std::error_code ec;
    if (!d->dir.empty()) std::filesystem::remove_all(d->dir, ec);
  }
  if (!w) return;
  bool send_delete = false;
  {
    std::lock_guard<std::mutex> wl(w->mu);
    if (type == client::EventType::kDeleted) {
      w->deleted = true;
    } else {
      w->pod = pod;
    }
    w->cv.notify_all();
    if (w->finished && !w->deleted && !w->pod.metadata.deletionTimestamp.empty() && !w->delete_sent) {
      send_delete = w->delete_sent = true;
    }
  }
  if (send_delete) delete_pod(w->ns, w->name, w->uid);
}

void Kubelet::run_worker(std::shared_ptr<Worker> w) {
  std::map<std::string, PreparedClaimInfo> claims;
  if (prepare_claims(*w, claims)) {
    {
      std::lock_guard<std::mutex> l(w->mu);
      w->claims = claims;
    }
    if (options_.device_health) {
      std::vector<std::pair<std::string, std::string>> names;
      {
        std::lock_guard<std::mutex> l(w->mu);
        names = w->claim_names;
      }
      for (const auto& [ns, name] : names) update_claim_health(ns, name);
    }
    run_containers(*w, claims);
  } else if (!stopping_) {
    bool graceful;
    {
      std::lock_guard<std::mutex> l(w->mu);
      graceful = !w->deleted && !w->pod.metadata.deletionTimestamp.empty();
      w->delete_sent = graceful;
    }
    release_claims(*w);
    if (graceful) delete_pod(w->ns, w->name, w->uid);
  }
  w->finished = true;
}

bool Kubelet::prepare_claims(Worker& w, std::map<std::string, PreparedClaimInfo>& out) {
  int backoff_ms = 20;
  auto wait = [&](const std::string& message) {
    if (!message.empty() && message != w.last_message) {
      w.last_message = message;
      options_.logger->info("pod {}/{}: {}", w.ns, w.name, message);
      (void)report(w, "Pending", message);
    }
    std::unique_lock<std::mutex> l(w.mu);
    w.cv.wait_for(l, std::chrono::milliseconds(backoff_ms), [&] { return w.going_away() || stopping_.load(); });
    backoff_ms = std::min(backoff_ms * 2, 1000);
  };
  while (true) {
    api::Pod pod;
    {
      std::lock_guard<std::mutex> l(w.mu);
      if (w.going_away() || stopping_) return false;
      pod = w.pod;
    }
    if (terminal(pod)) return false;
    auto refs = pod_claim_refs(pod);
    if (!refs.has_value()) {
      wait(refs.error().message());
      continue;
    }
    std::vector<std::pair<PodClaimRef, api::ResourceClaim>> ready;
    std::string not_ready;
    for (const auto& ref : *refs) {
      auto body = rest_.get(kResourceClaims.ns(w.ns).name(ref.claim_name));
      if (!body.has_value()) {
        not_ready = "claim " + ref.claim_name + ": " + body.error().message();
        break;
      }
      auto claim = api::decode_as<api::ResourceClaim>(*body);
      if (!claim.has_value()) {
        not_ready = "claim " + ref.claim_name + ": " + claim.error().message();
        break;
      }
      if (std::string why = claim_not_ready_reason(*claim, pod); !why.empty()) {
        not_ready = why;
        break;
      }
      ready.emplace_back(ref, std::move(*claim));
    }
    if (!not_ready.empty()) {
      wait("waiting for resource claims: " + not_ready);
      continue;
    }
    {
      // Registered before preparing, so the orphan sweep never unprepares a
      // claim this pod is about to use.
      std::lock_guard<std::mutex> l(mu_);
      w.claim_uids.clear();
      for (const auto& [ref, claim] : ready) {
        holders_[claim.metadata.uid].insert(w.uid);
        w.claim_uids.push_back(claim.metadata.uid);
      }
    }
    std::string failure;
    for (const auto& [ref, claim] : ready) {
      ClaimRef cref{claim.metadata.namespace_, claim.metadata.name, claim.metadata.uid};
      auto devices = devices_.prepare(cref, *claim.status.allocation);
      if (!devices.has_value()) {
        failure = "prepare claim " + claim.metadata.name + ": " + devices.error().message();
        break;
      }
      PreparedClaimInfo info;
      info.claim_uid = claim.metadata.uid;
      info.devices = std::move(*devices);
      std::ifstream in(cdi_spec_path(options_.cdi_dir, claim.metadata.uid));
      if (in) {
        std::stringstream ss;
        ss << in.rdbuf();
        auto spec = decode_cdi_spec(ss.str());
        if (spec.has_value()) info.cdi = std::move(*spec);
      }
      out[ref.pod_claim_name] = std::move(info);
    }
    if (failure.empty()) {
      std::lock_guard<std::mutex> l(w.mu);
      w.claim_names.clear();
      for (const auto& [ref, claim] : ready) w.claim_names.emplace_back(claim.metadata.namespace_, claim.metadata.name);
      return true;
    }
    out.clear();
    event(w, "", "Warning", "FailedPrepareDynamicResources", "Failed to prepare dynamic resources: " + failure);
    wait(failure);
  }
}

void Kubelet::release_claims(Worker& w) {
  std::lock_guard<std::mutex> l(mu_);
  for (const auto& uid : w.claim_uids) {
    auto it = holders_.find(uid);
    if (it == holders_.end()) continue;
    it->second.erase(w.uid);
    if (!it->second.empty()) continue;
    holders_.erase(it);
    Status st = devices_.unprepare(uid);
    if (!st.ok()) options_.logger->warn("unprepare claim {}: {}", uid, st.to_string());
  }
  w.claim_uids.clear();
}


void Kubelet::start_container(Worker& w, size_t i, const std::map<std::string, PreparedClaimInfo>& claims) {
  // Called with w.mu held.
  const api::Container& c = w.pod.spec.containers[i];
  Worker::Proc& p = w.procs[i];
  if (p.waiter.joinable()) p.waiter.join();
  EnvSources sources;
  sources.config_map = [&](const std::string& name) {
    return client::get_optional<api::ConfigMap>(rest_, kConfigMaps.ns(w.ns).name(name));
  };
  sources.secret = [&](const std::string& name) { return client::get_optional<api::Secret>(rest_, kSecrets.ns(w.ns).name(name)); };
  auto own = resolve_container_env(w.pod, c, sources);
  if (!own.has_value()) {
    // The kubelet's CreateContainerConfigError: the container waits, and is
    // tried again (the ConfigMap or Secret may appear).
    const bool config = own.error().code() == Code::kFailedPrecondition;
    p.pid = 0;
    p.exited = true;
    p.state.kind = ContainerState::Kind::kWaiting;
    p.state.reason = config ? "CreateContainerConfigError" : "ContainerCreating";
    p.state.message = own.error().message();
    p.restart_at = Clock::now() + std::chrono::seconds(1);
    if (config) event(w, c.name, "Warning", "Failed", "Error: " + own.error().message());
    return;
  }
  std::vector<std::string> base = options_.base_env;
  base.push_back("HOSTNAME=" + pod_hostname(w.pod));
  ProcessSpec spec;
  spec.env = container_env(w.pod, c, claims, base, &*own);
  spec.argv = c.command;
  if (spec.argv.empty() && !c.args.empty() && !c.args[0].empty() && c.args[0][0] != '-' &&
      ::access(resolve_program(c.args[0], spec.env).c_str(), X_OK) == 0) {
    // Args alone whose first word is a program (kubectl run IMAGE -- sh -c ...):
    // taken as an image without an ENTRYPOINT takes them (busybox, ubuntu,
    // alpine): they replace the image's CMD and run as the command line. Args
    // for an image's own entrypoint (--model ...) get the stand-in below.
    spec.argv = c.args;
  } else if (spec.argv.empty()) {
    // No command: the image's entrypoint would run, and there are no images here.
    // A stand-in keeps the container running like a service, and its log says what
    // it stands for and which devices it was given (docs/compat.md).
    std::string line = "draplane: no command for image " + c.image +
                       " (images are not run on this node); standing in with the devices NVIDIA_VISIBLE_DEVICES=";
    spec.argv = {"/bin/sh", "-c", "echo \"$0$NVIDIA_VISIBLE_DEVICES\"; exec sleep 2147483647", line};
  } else {
    spec.argv.insert(spec.argv.end(), c.args.begin(), c.args.end());
  }
  spec.working_dir = c.workingDir.empty() ? w.dir : c.workingDir;
  spec.log_path = w.dir + "/" + c.name + "/" + std::to_string(p.state.restart_count) + ".log";
  std::error_code ec;
  std::filesystem::create_directories(w.dir + "/" + c.name, ec);
  p.restart_at.reset();
  auto pid = launcher_.start(spec);
  const std::string t = now();
  if (!pid.has_value()) {
    p.pid = 0;
    p.exited = true;
    p.state.kind = ContainerState::Kind::kTerminated;
    p.state.exit_code = 128;
    p.state.reason = "StartError";
    p.state.message = pid.error().message();
    p.state.started_at = p.state.finished_at = t;
    std::ofstream(spec.log_path, std::ios::app) << pid.error().message() << "\n";
    event(w, c.name, "Warning", "Failed", "Error: " + pid.error().message());
    return;
  }
  // Creating and starting are one step here; both are reported, as the kubelet words them.
  event(w, c.name, "Normal", "Created", "Created container: " + c.name);
  event(w, c.name, "Normal", "Started", "Started container " + c.name);
  p.pid = *pid;
  p.exited = false;
  p.state.kind = ContainerState::Kind::kRunning;
  p.state.reason.clear();
  p.state.message.clear();
  p.state.started_at = t;
  p.state.finished_at.clear();
  p.state.container_id = "draplane://" + std::to_string(*pid);
  std::string record_path;
  if (auto started = launcher_.start_time(*pid)) {
    // Until it exits: what a restarted agent ends if this one dies first.
    record_path = w.dir + "/" + c.name + "/" + kProcessRecord;
    Status st = write_file_atomic(record_path, encode_process_record({options_.boot_id, *pid, *started}),
                                  FileSync::kUntilReboot);
    if (!st.ok()) options_.logger->warn("pod {}/{}: record container {}: {}", w.ns, w.name, c.name, st.to_string());
  }
  Worker* wp = &w;
  int cpid = *pid;
  p.waiter = std::thread([this, wp, i, cpid, record_path] {
    int code = launcher_.wait(cpid);
    if (!record_path.empty()) {
      // Before the exit is seen: a restart of the container writes the record anew.
      std::error_code ec;
      std::filesystem::remove(record_path, ec);
    }
    std::lock_guard<std::mutex> l(wp->mu);
    if (wp->procs[i].pid == cpid) {
      wp->procs[i].exited = true;
      wp->procs[i].exit_code = code;
    }
    wp->cv.notify_all();
  });
}

void Kubelet::run_containers(Worker& w, const std::map<std::string, PreparedClaimInfo>& claims) {
  std::string policy;
  {
    std::lock_guard<std::mutex> l(w.mu);
    policy = w.pod.spec.restartPolicy.empty() ? "Always" : w.pod.spec.restartPolicy;
    w.procs.resize(w.pod.spec.containers.size());
    for (size_t i = 0; i < w.procs.size(); ++i) {
      w.procs[i].state.name = w.pod.spec.containers[i].name;
      start_container(w, i, claims);
    }
  }
  options_.logger->info("pod {}/{}: started {} container(s)", w.ns, w.name, w.procs.size());
  std::string phase;
  bool changed = true;
  while (true) {
    if (changed) {
      std::vector<ContainerState> states;
      {
        std::lock_guard<std::mutex> l(w.mu);
        for (const auto& p : w.procs) states.push_back(p.state);
      }
      phase = pod_phase(policy, states);
      (void)report(w, phase, "");
      changed = false;
      if (phase == "Succeeded" || phase == "Failed") {
        options_.logger->info("pod {}/{}: {}", w.ns, w.name, phase);
        release_claims(w);
        break;
      }
    }
    std::unique_lock<std::mutex> l(w.mu);
    auto next = Clock::now() + std::chrono::milliseconds(500);
    for (const auto& p : w.procs) {
      if (p.restart_at && *p.restart_at < next) next = *p.restart_at;
    }
    w.cv.wait_until(l, next, [&] {
      if (w.going_away() || stopping_ || w.health_changed) return true;
      for (const auto& p : w.procs) {
        if (p.exited && p.state.kind == ContainerState::Kind::kRunning) return true;
        if (p.restart_at && *p.restart_at <= Clock::now()) return true;
      }
      return false;
    });
    if (w.going_away() || stopping_) {
      l.unlock();
      break;
    }
    if (w.health_changed) {
      w.health_changed = false;
      changed = true;
    }
    for (size_t i = 0; i < w.procs.size(); ++i) {
      auto& p = w.procs[i];
      if (p.exited && p.state.kind == ContainerState::Kind::kRunning) {
        p.state.kind = ContainerState::Kind::kTerminated;
        p.state.exit_code = p.exit_code;
        p.state.reason = p.exit_code == 0 ? "Completed" : "Error";
        p.state.finished_at = now();
        changed = true;
        bool restart = policy == "Always" || (policy == "OnFailure" && p.exit_code != 0);
        if (restart) {
          int64_t delay = std::min<int64_t>(300000, int64_t{options_.restart_backoff_ms}
                                                        << std::min(p.state.restart_count, 10));
          p.restart_at = Clock::now() + std::chrono::milliseconds(delay);
          event(w, p.state.name, "Warning", "BackOff",
                "Back-off restarting failed container " + p.state.name + " in pod " + w.name + "_" + w.ns + "(" +
                    w.uid + ")");
        }
      } else if (p.restart_at && *p.restart_at <= Clock::now()) {
        if (p.state.kind != ContainerState::Kind::kWaiting) {  // not a container that never started
          p.state.last_exit_code = p.state.exit_code;
          ++p.state.restart_count;
        }
        start_container(w, i, claims);
        changed = true;
      }
    }
  }
  // The pod ends here only when it is deleted or the kubelet stops.
  if (phase == "Succeeded" || phase == "Failed") {
    for (auto& p : w.procs) {
      if (p.waiter.joinable()) p.waiter.join();
    }
    return;
  }
  int grace = 30;
  bool graceful = false;
  {
    std::lock_guard<std::mutex> l(w.mu);
    if (w.pod.metadata.deletionGracePeriodSeconds) {
      grace = static_cast<int>(*w.pod.metadata.deletionGracePeriodSeconds);
    } else if (w.pod.spec.terminationGracePeriodSeconds) {
      grace = static_cast<int>(*w.pod.spec.terminationGracePeriodSeconds);
    }
    graceful = !w.deleted && !w.pod.metadata.deletionTimestamp.empty();
    if (graceful) w.delete_sent = true;
  }
  if (stopping_) grace = std::min(grace, 1);  // the agent is shutting down
  kill_containers(w, std::min(grace, options_.max_grace_seconds));
  if (stopping_) return;  // claims stay prepared (checkpoint) for the next start
  release_claims(w);
  if (graceful) {
    (void)report(w, "Failed", "");
    delete_pod(w.ns, w.name, w.uid);
  }
  options_.logger->info("pod {}/{}: stopped", w.ns, w.name);
}

void Kubelet::kill_containers(Worker& w, int grace_seconds) {
  std::unique_lock<std::mutex> l(w.mu);
  auto all_exited = [&] {
    return std::all_of(w.procs.begin(), w.procs.end(), [](const auto& p) { return p.exited; });
  };
  for (auto& p : w.procs) {
    if (p.exited) continue;
    // Not when the agent itself shuts down (the kubelet does not report that either).
    if (!stopping_) event(w, p.state.name, "Normal", "Killing", "Stopping container " + p.state.name);
    launcher_.kill(p.pid, SIGTERM);
  }
  w.cv.wait_for(l, std::chrono::seconds(std::max(grace_seconds, 0)), all_exited);
  for (auto& p : w.procs) {
    if (!p.exited) launcher_.kill(p.pid, SIGKILL);
  }
  w.cv.wait(l, all_exited);
  const std::string t = now();
  for (auto& p : w.procs) {
    p.restart_at.reset();
    if (p.state.kind == ContainerState::Kind::kRunning) {
      p.state.kind = ContainerState::Kind::kTerminated;
      p.state.exit_code = p.exit_code;
      p.state.reason = "Error";
      p.state.finished_at = t;
    }
  }
  std::vector<std::thread> waiters;
  for (auto& p : w.procs) {
    if (p.waiter.joinable()) waiters.push_back(std::move(p.waiter));
  }
  l.unlock();
  for (auto& t2 : waiters) t2.join();
}

Status Kubelet::report(Worker& w, const std::string& phase, const std::string& message) {
  const client::Path path = pod_path(w.ns, w.name);
  for (int attempt = 0; attempt < 8; ++attempt) {
    // First from the pod as last seen through the watch (its resourceVersion
    // guards the update); after a conflict, as the server has it now.
    std::optional<api::Pod> cur;
    if (attempt == 0) {
      std::lock_guard<std::mutex> l(w.mu);
      if (!w.pod.metadata.resourceVersion.empty()) cur = w.pod;
    }
    if (!cur) {
      auto found = client::get_optional<api::Pod>(rest_, path);
      if (!found.has_value()) return found.error();
      if (!*found) return {};
      cur = std::move(**found);
    }
    if (cur->metadata.uid != w.uid) return {};
    std::vector<ContainerState> states;
    {
      std::lock_guard<std::mutex> l(w.mu);
      for (const auto& p : w.procs) states.push_back(p.state);
      if (options_.device_health) {
        for (auto& s : states) {
          for (const auto& c : cur->spec.containers) {
            if (c.name != s.name) continue;
            s.allocated_resources_status =
                allocated_resources_status(c, w.claims, options_.driver_name, options_.device_health);
          }
        }
      }
    }
    if (states.empty()) {
      for (const auto& c : cur->spec.containers) {
        ContainerState s;
        s.name = c.name;
        s.reason = "ContainerCreating";
        states.push_back(s);
      }
    }
    cur->status = build_pod_status(*cur, phase, states, now(), options_.host_ip, message);
    auto out = rest_.put(path.sub("status"), api::to_json(api::Object(*cur)));
    if (out.has_value()) return {};
    if (out.error().code() == Code::kNotFound) return {};
    if (out.error().code() != Code::kConflict) {
      options_.logger->warn("pod {}/{}: status update: {}", w.ns, w.name, out.error().to_string());
      return out.error();
    }
  }
  return conflict_error("pod " + w.ns + "/" + w.name + ": status: too many concurrent updates");
}

void Kubelet::delete_pod(const std::string& ns, const std::string& name, const std::string& uid) {
  std::string opts = "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"gracePeriodSeconds\":0,"
                     "\"preconditions\":{\"uid\":\"" + uid + "\"}}";
  auto r = rest_.request("DELETE", pod_path(ns, name).str() + "?gracePeriodSeconds=0", opts);
  if (!r.has_value()) {
    options_.logger->warn("delete pod {}/{}: {}", ns, name, r.error().to_string());
  } else if (r->status >= 300 && r->status != 404 && r->status != 409) {
    options_.logger->warn("delete pod {}/{}: {}", ns, name, client::status_from_response(*r).to_string());
  }
}

void Kubelet::end_previous_containers() {
  std::error_code ec;
  const std::filesystem::path pods = options_.state_dir + "/pods";
  if (!std::filesystem::is_directory(pods, ec)) return;
  std::vector<std::filesystem::path> records;
  for (const auto& pod : std::filesystem::directory_iterator(pods, ec)) {
    std::error_code ec2;
    for (const auto& container : std::filesystem::directory_iterator(pod.path(), ec2)) {
      std::filesystem::path record = container.path() / kProcessRecord;
      if (std::filesystem::exists(record, ec2)) records.push_back(record);
    }
  }
  for (const auto& path : records) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    auto record = decode_process_record(ss.str());
    if (!record.has_value()) {
      options_.logger->warn("container record {}: {}", path.string(), record.error().message());
    } else if (record->boot_id == options_.boot_id) {
      // Containers of another boot are gone with it (and their pid may now
      // be anyone's).
      int n = launcher_.end_previous(record->pid, record->start_time);
      if (n > 0) {
        options_.logger->info("ended {} process(es) of container {} left by an earlier run (pid {})", n,
                              path.parent_path().string(), record->pid);
      }
    }
    std::filesystem::remove(path, ec);
  }
}

void Kubelet::sweep_orphans() {
  std::lock_guard<std::mutex> l(mu_);
  for (const auto& uid : devices_.prepared_claims()) {
    if (holders_.count(uid)) continue;
    options_.logger->info("unpreparing claim {}: no pod on this node uses it", uid);
    Status st = devices_.unprepare(uid);
    if (!st.ok()) options_.logger->warn("unprepare claim {}: {}", uid, st.to_string());
  }
}

Result<std::string> Kubelet::log_path(const std::string& ns, const std::string& pod, const std::string& container,
                                      bool previous) const {
  std::shared_ptr<Worker> w;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& [uid, x] : workers_) {
      if (x->ns == ns && x->name == pod) w = x;
    }
  }
  if (!w) return not_found_error("pod \"" + pod + "\" not found on node " + options_.node_name);
  std::lock_guard<std::mutex> l(w->mu);
  const auto& cs = w->pod.spec.containers;
  std::string name = container;
  if (name.empty()) {
    if (cs.size() != 1) {
      std::string names;
      for (const auto& c : cs) names += (names.empty() ? "" : " ") + c.name;
      return invalid_error("a container name must be specified for pod " + pod + ", choose one of: [" + names + "]");
    }
    name = cs[0].name;
  }
  int restart = 0;
  bool found = false;
  for (size_t i = 0; i < cs.size(); ++i) {
    if (cs[i].name != name) continue;
    found = true;
    if (i < w->procs.size()) restart = w->procs[i].state.restart_count;
  }
  if (!found) return not_found_error("container " + name + " is not valid for pod " + pod);
  if (previous) {
    if (restart == 0) {
      return not_found_error("previous terminated container \"" + name + "\" in pod \"" + pod + "\" not found");
    }
    --restart;
  }
  return w->dir + "/" + name + "/" + std::to_string(restart) + ".log";
}

}  // namespace draplane::node
