#include "node/kubelet_pod.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>

#include "api/pod_group_claims.h"
#include "common/split.h"

namespace draplane::node {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void kv(Writer& w, const char* k, const std::string& v) {
  w.Key(k);
  w.String(v.c_str(), static_cast<rapidjson::SizeType>(v.size()));
}

void write_state(Writer& w, const ContainerState& c) {
  w.StartObject();
  switch (c.kind) {
    case ContainerState::Kind::kWaiting:
      w.Key("waiting");
      w.StartObject();
      if (!c.reason.empty()) kv(w, "reason", c.reason);
      if (!c.message.empty()) kv(w, "message", c.message);
      w.EndObject();
      break;
    case ContainerState::Kind::kRunning:
      w.Key("running");
      w.StartObject();
      kv(w, "startedAt", c.started_at);
      w.EndObject();
      break;
    case ContainerState::Kind::kTerminated:
      w.Key("terminated");
      w.StartObject();
      w.Key("exitCode");
      w.Int(c.exit_code);
      kv(w, "reason", c.reason);
      if (!c.message.empty()) kv(w, "message", c.message);
      kv(w, "startedAt", c.started_at);
      kv(w, "finishedAt", c.finished_at);
      if (!c.container_id.empty()) kv(w, "containerID", c.container_id);
      w.EndObject();
      break;
  }
  w.EndObject();
}

std::string container_statuses_json(const api::Pod& pod, const std::vector<ContainerState>& containers) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartArray();
  for (const auto& c : containers) {
    std::string image;
    for (const auto& spec : pod.spec.containers) {
      if (spec.name == c.name) image = spec.image;
    }
    w.StartObject();
    kv(w, "name", c.name);
    w.Key("state");
    write_state(w, c);
    w.Key("lastState");
    if (c.last_exit_code) {
      w.StartObject();
      w.Key("terminated");
      w.StartObject();
      w.Key("exitCode");
      w.Int(*c.last_exit_code);
      kv(w, "reason", *c.last_exit_code == 0 ? "Completed" : "Error");
      w.EndObject();
      w.EndObject();
    } else {
      w.StartObject();
      w.EndObject();
    }
    w.Key("ready");
    w.Bool(c.kind == ContainerState::Kind::kRunning);
    w.Key("restartCount");
    w.Int(c.restart_count);
    kv(w, "image", image);
    kv(w, "imageID", "");
    if (!c.container_id.empty()) kv(w, "containerID", c.container_id);
    w.Key("started");
    w.Bool(c.kind == ContainerState::Kind::kRunning);
    if (!c.allocated_resources_status.empty()) {
      w.Key("allocatedResourcesStatus");
      w.StartArray();
      for (const auto& rs : c.allocated_resources_status) {
        w.StartObject();
        kv(w, "name", rs.name);
        w.Key("resources");
        w.StartArray();
        for (const auto& r : rs.resources) {
          w.StartObject();
          kv(w, "resourceID", r.resource_id);
          kv(w, "health", r.health);
          w.EndObject();
        }
        w.EndArray();
        w.EndObject();
      }
      w.EndArray();
    }
    w.EndObject();
  }
  w.EndArray();
  return buf.GetString();
}

std::string env_name(const std::string& entry) { return entry.substr(0, entry.find('=')); }

void set_env(std::vector<std::string>& env, const std::string& entry, bool join) {
  const std::string name = env_name(entry);
  for (auto& e : env) {
    if (env_name(e) != name) continue;
    if (join) {
      std::string have = e.substr(name.size() + 1), add = entry.substr(name.size() + 1);
      if (have.empty() || have == "void") {
        e = entry;
      } else if (!add.empty() && add != "void") {
        // Merge the UUID lists without repeating one.
        std::string merged = have;
        for (std::string_view id : common::split(add, ',')) {
          if (("," + merged + ",").find("," + std::string(id) + ",") == std::string::npos) merged += "," + std::string(id);
        }
        e = name + "=" + merged;
      }
    } else {
      e = entry;
    }
    return;
  }
  env.push_back(entry);
}

bool request_matches(const std::vector<std::string>& request_names, const std::string& request) {
  if (request.empty()) return true;
  for (const auto& r : request_names) {
    if (r == request || r.rfind(request + "/", 0) == 0) return true;
  }
  return false;
}

void add_claim_env(std::vector<std::string>& env, const PreparedClaimInfo& info, const std::string& request,
                   std::vector<std::string>& seen_visible) {
  for (const auto& e : info.cdi.edits.env) set_env(env, e, false);
  for (const auto& d : info.devices) {
    if (!request_matches(d.request_names, request)) continue;
    for (const auto& id : d.cdi_device_ids) {
      // "k8s.gpu.nvidia.com/claim=<name>": find the CDI device by name.
      std::string name = id.substr(id.find('=') + 1);
      for (const auto& dev : info.cdi.devices) {
        if (dev.name != name) continue;
        for (const auto& e : dev.edits.env) set_env(env, e, env_name(e) == "NVIDIA_VISIBLE_DEVICES");
      }
    }
  }
  (void)seen_visible;
}

std::string find_transition(const api::Pod& pod, const std::string& type, const std::string& status,
                            const std::string& now) {
  for (const auto& c : pod.status.conditions) {
    if (c.type == type && c.status == status && !c.lastTransitionTime.empty()) return c.lastTransitionTime;
  }
  return now;
}

}  // namespace

Result<std::vector<PodClaimRef>> pod_claim_refs(const api::Pod& pod) {
  std::vector<PodClaimRef> out;
  for (size_t i = 0; i < pod.spec.resourceClaims.size(); ++i) {
    const auto& pc = pod.spec.resourceClaims[i];
    if (pc.resourceClaimName) {
      out.push_back({pc.name, *pc.resourceClaimName});
      continue;
    }
    auto it = std::find_if(pod.status.resourceClaimStatuses.begin(), pod.status.resourceClaimStatuses.end(),
                           [&](const auto& s) { return s.name == pc.name; });
    if (it == pod.status.resourceClaimStatuses.end()) {
      return Status(Code::kUnavailable, "pod " + pod.metadata.namespace_ + "/" + pod.metadata.name +
                                            ": spec.resourceClaims[" + std::to_string(i) +
                                            "]: waiting for the claim generated from template \"" +
                                            pc.resourceClaimTemplateName.value_or("") + "\"");
    }
    if (it->resourceClaimName) out.push_back({pc.name, *it->resourceClaimName});
  }
  if (pod.status.extendedResourceClaimStatus && !pod.status.extendedResourceClaimStatus->resourceClaimName.empty()) {
    out.push_back({"", pod.status.extendedResourceClaimStatus->resourceClaimName});
  }
  return out;
}

std::string claim_not_ready_reason(const api::ResourceClaim& claim, const api::Pod& pod) {
  if (!claim.status.allocation) return "claim " + claim.metadata.name + " is not allocated yet";
  if (api::reserved_for_pod_or_group(claim, pod)) return "";
  return "claim " + claim.metadata.name + " is not reserved for the pod";
}

std::vector<std::string> container_env(const api::Pod& pod, const api::Container& container,
                                       const std::map<std::string, PreparedClaimInfo>& claims,
                                       const std::vector<std::string>& base,
                                       const std::vector<std::string>* own) {
  std::vector<std::string> env;
  for (const auto& e : base) set_env(env, e, false);
  std::vector<std::string> seen;
  for (const auto& ref : container.resources.claims) {
    auto it = claims.find(ref.name);
    if (it != claims.end()) add_claim_env(env, it->second, ref.request, seen);
  }
  if (pod.status.extendedResourceClaimStatus) {
    auto it = claims.find("");
    if (it != claims.end()) {
      for (const auto& m : pod.status.extendedResourceClaimStatus->requestMappings) {
        if (m.containerName == container.name) add_claim_env(env, it->second, m.requestName, seen);
      }
    }
  }
  if (own != nullptr) {
    for (const auto& e : *own) set_env(env, e, false);
    return env;
  }
  for (const auto& e : container.env) {
    if (!e.valueFrom.empty()) continue;
    set_env(env, e.name + "=" + e.value, false);
  }
  return env;
}

std::vector<ResourceStatusEntry> allocated_resources_status(const api::Container& container,
                                                            const std::map<std::string, PreparedClaimInfo>& claims,
                                                            const std::string& driver, const DeviceHealthFn& health) {
  std::vector<ResourceStatusEntry> out;
  for (const auto& ref : container.resources.claims) {
    auto it = claims.find(ref.name);
    if (it == claims.end() || ref.name.empty()) continue;
    ResourceStatusEntry entry;
    entry.name = "claim:" + ref.name + (ref.request.empty() ? "" : "/" + ref.request);
    for (const auto& d : it->second.devices) {
      if (!d.request_names.empty() && !request_matches(d.request_names, ref.request)) continue;
      std::string id = d.cdi_device_ids.empty() ? driver + "/" + d.pool_name + "/" + d.device_name : d.cdi_device_ids[0];
      bool seen = std::any_of(entry.resources.begin(), entry.resources.end(),
                              [&](const ResourceHealthEntry& r) { return r.resource_id == id; });
      if (!seen) entry.resources.push_back({id, health(d.pool_name, d.device_name)});
    }
    if (!entry.resources.empty()) out.push_back(std::move(entry));
  }
  return out;
}

std::vector<api::AllocatedDeviceStatus> claim_device_statuses(const api::ResourceClaim& claim,
                                                              const std::string& driver, const std::string& pool,
                                                              const DeviceHealthFn& health, const std::string& now) {
  std::vector<api::AllocatedDeviceStatus> out = claim.status.devices;
  if (!claim.status.allocation) return out;
  for (const auto& r : claim.status.allocation->devices.results) {
    if (r.driver != driver || r.pool != pool) continue;
    auto it = std::find_if(out.begin(), out.end(), [&](const api::AllocatedDeviceStatus& d) {
      return d.driver == r.driver && d.pool == r.pool && d.device == r.device && d.shareID == r.shareID;
    });
    if (it == out.end()) {
      api::AllocatedDeviceStatus d;
      d.driver = r.driver;
      d.pool = r.pool;
      d.device = r.device;
      d.shareID = r.shareID;
      out.push_back(std::move(d));
      it = out.end() - 1;
    }
    const std::string h = health(r.pool, r.device);
    api::Condition c;
    c.type = kDeviceHealthyCondition;
    c.status = h == "Healthy" ? "True" : h == "Unhealthy" ? "False" : "Unknown";
    c.reason = h;
    c.observedGeneration = claim.metadata.generation;
    c.message = h == "Healthy"     ? "the device reports no errors"
                : h == "Unhealthy" ? "the device has a critical error (see its gpu.nvidia.com taints)"
                                   : "the device's health is not monitored";
    auto cond = std::find_if(it->conditions.begin(), it->conditions.end(),
                             [](const api::Condition& x) { return x.type == kDeviceHealthyCondition; });
    if (cond == it->conditions.end()) {
      c.lastTransitionTime = now;
      it->conditions.push_back(std::move(c));
    } else {
      c.lastTransitionTime = cond->status == c.status ? cond->lastTransitionTime : now;
      *cond = std::move(c);
    }
  }
  return out;
}

std::string pod_phase(const std::string& restart_policy, const std::vector<ContainerState>& containers) {
  if (containers.empty()) return "Pending";
  int waiting = 0, running = 0, succeeded = 0, failed = 0, ever_ran = 0;
  for (const auto& c : containers) {
    if (c.restart_count > 0 || c.kind != ContainerState::Kind::kWaiting) ++ever_ran;
    switch (c.kind) {
      case ContainerState::Kind::kWaiting: ++waiting; break;
      case ContainerState::Kind::kRunning: ++running; break;
      case ContainerState::Kind::kTerminated: (c.exit_code == 0 ? succeeded : failed)++; break;
    }
  }
  if (ever_ran == 0) return "Pending";
  if (running > 0 || waiting > 0) return "Running";
  // All terminated: they restart under Always (and OnFailure after a failure).
  const std::string policy = restart_policy.empty() ? "Always" : restart_policy;
  if (policy == "Always") return "Running";
  if (failed > 0) return policy == "OnFailure" ? "Running" : "Failed";
  return "Succeeded";
}

api::PodStatus build_pod_status(const api::Pod& pod, const std::string& phase,
                                const std::vector<ContainerState>& containers, const std::string& now,
                                const std::string& host_ip, const std::string& message) {
  api::PodStatus st = pod.status;
  st.phase = phase;
  st.message = message;
  st.hostIP = host_ip;
  st.podIP = host_ip;
  if (st.startTime.empty()) st.startTime = now;
  bool all_running = !containers.empty() &&
                     std::all_of(containers.begin(), containers.end(),
                                 [](const auto& c) { return c.kind == ContainerState::Kind::kRunning; });
  bool terminal = phase == "Succeeded" || phase == "Failed";
  auto cond = [&](const std::string& type, bool ok, const std::string& reason) {
    api::PodCondition c;
    c.type = type;
    c.status = ok ? "True" : "False";
    c.lastTransitionTime = find_transition(pod, type, c.status, now);
    c.reason = ok ? "" : reason;
    return c;
  };
  std::string not_ready = terminal ? "PodCompleted" : "ContainersNotReady";
  std::vector<api::PodCondition> conds = {
      cond("PodReadyToStartContainers", phase != "Pending" || !containers.empty(), ""),
      cond("Initialized", true, ""),
      cond("Ready", all_running && !terminal, not_ready),
      cond("ContainersReady", all_running && !terminal, not_ready),
      cond("PodScheduled", true, ""),
  };
  // Keep conditions written by others (e.g. DisruptionTarget).
  for (const auto& c : pod.status.conditions) {
    if (std::none_of(conds.begin(), conds.end(), [&](const auto& x) { return x.type == c.type; })) conds.push_back(c);
  }
  st.conditions = conds;
  st.containerStatuses.text = container_statuses_json(pod, containers);
  return st;
}

}  // namespace draplane::node
