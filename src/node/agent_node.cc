#include "node/agent_node.h"

#include <unistd.h>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <set>
#include <thread>

#include "api/codec.h"
#include "client/get_optional.h"
#include "client/resource_path.h"

namespace draplane::node {
namespace {

using namespace client::resources;

std::string label_value(std::string s) {
  for (char& c : s) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '-';
  }
  if (s.size() > 63) s.resize(63);
  return s;
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

std::string conditions_json(const std::string& now) {
  std::string out = "[";
  struct C {
    const char* type;
    const char* status;
    const char* reason;
    const char* message;
  };
  const C conds[] = {
      {"MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
      {"DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
      {"PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
      {"Ready", "True", "KubeletReady", "draplane agent is posting ready status"},
  };
  for (size_t i = 0; i < 4; ++i) {
    out += std::string(i ? "," : "") + "{\"type\":\"" + conds[i].type + "\",\"status\":\"" + conds[i].status +
           "\",\"lastHeartbeatTime\":\"" + now + "\",\"lastTransitionTime\":\"" + now + "\",\"reason\":\"" +
           conds[i].reason + "\",\"message\":\"" + conds[i].message + "\"}";
  }
  return out + "]";
}

}  // namespace

api::Node build_node(const NodeInfoOptions& o, const std::vector<GpuInfo>& gpus, const std::string& now) {
  api::Node n;
  n.typeMeta = {"v1", "Node"};
  n.metadata.name = o.node_name;
  n.metadata.labels = {{"kubernetes.io/hostname", o.node_name},
                       {"kubernetes.io/os", "linux"},
                       {"kubernetes.io/arch", "amd64"},
                       {"beta.kubernetes.io/os", "linux"},
                       {"beta.kubernetes.io/arch", "amd64"}};
  if (!gpus.empty()) {
    n.metadata.labels["nvidia.com/gpu.present"] = "true";
    n.metadata.labels["nvidia.com/gpu.product"] = label_value(gpus[0].product_name);
    n.metadata.labels["nvidia.com/gpu.count"] = std::to_string(gpus.size());
  }
  for (const auto& [k, v] : o.labels) n.metadata.labels[k] = v;
  int64_t cpu = o.cpu > 0 ? o.cpu : std::max<int64_t>(1, std::thread::hardware_concurrency());
  int64_t mem = o.memory_bytes > 0 ? o.memory_bytes
                                   : static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  mem = mem / 1024 * 1024;  // whole Ki, as the kubelet reports
  n.status.capacity = {{"cpu", api::Quantity::from_int(cpu)},
                       {"memory", api::Quantity::from_int(mem, api::Quantity::Format::kBinarySI)},
                       {"pods", api::Quantity::from_int(110)}};
  n.status.allocatable = n.status.capacity;
  n.status.conditions.text = conditions_json(now);
  n.status.addresses.text = "[{\"type\":\"InternalIP\",\"address\":\"" + json_escape(o.host_ip) +
                            "\"},{\"type\":\"Hostname\",\"address\":\"" + json_escape(o.node_name) + "\"}]";
  n.status.nodeInfo.text = "{\"machineID\":\"\",\"systemUUID\":\"\",\"bootID\":\"\",\"kernelVersion\":\"\","
                           "\"osImage\":\"draplane\",\"containerRuntimeVersion\":\"draplane://process\","
                           "\"kubeletVersion\":\"" + o.version + "\",\"kubeProxyVersion\":\"\","
                           "\"operatingSystem\":\"linux\",\"architecture\":\"amd64\"}";
  if (o.kubelet_port > 0) {
    n.status.extra.text = "{\"daemonEndpoints\":{\"kubeletEndpoint\":{\"Port\":" + std::to_string(o.kubelet_port) + "}}}";
  }
  return n;
}

Status register_node(client::RestClient& rest, const api::Node& node) {
  const client::Path path = kNodes.name(node.metadata.name);
  auto created = rest.post(kNodes.all(), api::to_json(api::Object(node)));
  api::Node cur;
  if (created.has_value()) {
    auto c = api::decode_as<api::Node>(*created);
    if (!c.has_value()) return c.error();
    cur = std::move(*c);
  } else {
    if (created.error().code() != Code::kAlreadyExists) return created.error();
    for (int attempt = 0;; ++attempt) {
      auto body = rest.get(path);
      if (!body.has_value()) return body.error();
      auto c = api::decode_as<api::Node>(*body);
      if (!c.has_value()) return c.error();
      cur = std::move(*c);
      bool changed = false;
      for (const auto& [k, v] : node.metadata.labels) {
        auto it = cur.metadata.labels.find(k);
        if (it == cur.metadata.labels.end() || it->second != v) {
          cur.metadata.labels[k] = v;
          changed = true;
        }
      }
      if (!changed) break;
      auto out = rest.put(path, api::to_json(api::Object(cur)));
      if (out.has_value()) {
        auto c2 = api::decode_as<api::Node>(*out);
        if (c2.has_value()) cur = std::move(*c2);
        break;
      }
      if (out.error().code() != Code::kConflict || attempt >= 5) return out.error();
    }
  }
  cur.status = node.status;
  auto out = rest.put(path.sub("status"), api::to_json(api::Object(cur)));
  return out.has_value() ? Status() : out.error();
}

Status heartbeat_node(client::RestClient& rest, const api::Node& node) {
  const client::Path path = kNodes.name(node.metadata.name);
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto found = client::get_optional<api::Node>(rest, path);
    if (!found.has_value()) return found.error();
    if (!*found) return register_node(rest, node);
    api::Node& cur = **found;
    cur.status = node.status;
    auto out = rest.put(path.sub("status"), api::to_json(api::Object(cur)));
    if (out.has_value()) return {};
    if (out.error().code() != Code::kConflict) return out.error();
  }
  return conflict_error("node " + node.metadata.name + ": status: too many concurrent updates");
}

SlicePlan plan_slices(const std::vector<api::ResourceSlice>& existing,
                      const std::function<Result<std::vector<api::ResourceSlice>>(int64_t)>& build,
                      Status* error) {
  SlicePlan plan;
  int64_t gen = 0;
  std::map<std::string, const api::ResourceSlice*> by_name;
  for (const auto& s : existing) {
    gen = std::max(gen, s.spec.pool.generation);
    by_name[s.metadata.name] = &s;
  }
  auto same = build(std::max<int64_t>(gen, 1));
  if (!same.has_value()) {
    if (error) *error = same.error();
    return plan;
  }
  bool equal = same->size() == existing.size();
  for (const auto& s : *same) {
    auto it = by_name.find(s.metadata.name);
    if (it == by_name.end() || !(it->second->spec == s.spec)) equal = false;
  }
  plan.generation = std::max<int64_t>(gen, 1);
  if (equal) return plan;
  plan.generation = gen + 1;
  auto desired = build(plan.generation);
  if (!desired.has_value()) {
    if (error) *error = desired.error();
    return plan;
  }
  std::set<std::string> wanted;
  for (auto& s : *desired) {
    wanted.insert(s.metadata.name);
    auto it = by_name.find(s.metadata.name);
    if (it == by_name.end()) {
      plan.create.push_back(std::move(s));
    } else {
      s.metadata.resourceVersion = it->second->metadata.resourceVersion;
      s.metadata.uid = it->second->metadata.uid;
      plan.update.push_back(std::move(s));
    }
  }
  for (const auto& s : existing) {
    if (!wanted.count(s.metadata.name)) plan.remove.push_back(s.metadata.name);
  }
  return plan;
}

client::RawInformer::Options slice_informer(const std::string& node_name) {
  client::RawInformer::Options o;
  o.api_version = api::kResourceV1;
  o.kind = "ResourceSlice";
  o.path = kResourceSlices.all().str();
  o.field_selector = "spec.nodeName=" + node_name;
  o.strip_managed_fields = true;
  return o;
}

client::RawInformer::Options class_informer() {
  client::RawInformer::Options o;
  o.api_version = api::kResourceV1;
  o.kind = "DeviceClass";
  o.path = kDeviceClasses.all().str();
  o.strip_managed_fields = true;
  return o;
}

SliceOptions with_class_sharing(SliceOptions options, const std::vector<GpuInfo>& gpus,
                                const std::vector<api::DeviceClass>& classes, std::vector<std::string>& warnings) {
  options.sharing.clear();
  if (options.consumable_shares.enabled()) return options;
  auto derived = class_sharing(gpus, options, classes);
  if (!derived.has_value()) {
    warnings.push_back("sharing from DeviceClasses: " + derived.error().message());
    return options;
  }
  warnings.insert(warnings.end(), derived->warnings.begin(), derived->warnings.end());
  options.sharing = std::move(derived->devices);
  return options;
}

Status publish_slices(client::RestClient& rest, const std::vector<GpuInfo>& gpus, const SliceOptions& options,
                      spdlog::logger& log) {
  auto body = rest.get(kResourceSlices.all().str() + "?fieldSelector=spec.nodeName%3D" + options.node_name);
  if (!body.has_value()) return body.error();
  // List items come without apiVersion/kind on the wire.
  rapidjson::Document doc;
  doc.Parse(body->data(), body->size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("items") || !doc["items"].IsArray()) {
    return Status(Code::kUnavailable, "list resourceslices: malformed answer");
  }
  std::vector<api::ResourceSlice> existing;
  for (auto& item : doc["items"].GetArray()) {
    if (!item.IsObject()) continue;
    auto& a = doc.GetAllocator();
    if (!item.HasMember("apiVersion")) item.AddMember("apiVersion", rapidjson::Value(api::kResourceV1, a), a);
    if (!item.HasMember("kind")) item.AddMember("kind", "ResourceSlice", a);
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    item.Accept(w);
    auto s = api::decode_as<api::ResourceSlice>(std::string_view(buf.GetString(), buf.GetSize()));
    if (!s.has_value()) {
      log.warn("ignoring undecodable ResourceSlice: {}", s.error().message());
      continue;
    }
    if (s->spec.driver == kDriverName && s->spec.pool.name == options.node_name &&
        s->spec.nodeName.value_or("") == options.node_name) {
      existing.push_back(std::move(*s));
    }
  }
  Status err;
  SlicePlan plan = plan_slices(
      existing,
      [&](int64_t gen) {
        SliceOptions o = options;
        o.generation = gen;
        return build_slices(gpus, o);
      },
      &err);
  if (!err.ok()) return err;
  if (plan.empty()) {
    log.debug("resource slices of pool {} are up to date (generation {})", options.node_name, plan.generation);
    return {};
  }
  for (const auto& s : plan.update) {
    auto out = rest.put(kResourceSlices.name(s.metadata.name), api::to_json(api::Object(s)));
    if (!out.has_value()) return out.error();
  }
  for (const auto& s : plan.create) {
    auto out = rest.post(kResourceSlices.all(), api::to_json(api::Object(s)));
    if (!out.has_value()) return out.error();
  }
  for (const auto& name : plan.remove) {
    auto out = rest.del(kResourceSlices.name(name));
    if (!out.has_value() && out.error().code() != Code::kNotFound) return out.error();
  }
  log.info("published pool {} generation {}: {} created, {} updated, {} deleted", options.node_name, plan.generation,
           plan.create.size(), plan.update.size(), plan.remove.size());
  return {};
}

Status ensure_device_classes(client::RestClient& rest, spdlog::logger& log) {
  for (const auto& c : device_classes()) {
    auto got = rest.get(kDeviceClasses.name(c.metadata.name));
    if (got.has_value()) continue;
    if (got.error().code() != Code::kNotFound) return got.error();
    auto out = rest.post(kDeviceClasses.all(), api::to_json(api::Object(c)));
    if (out.has_value()) {
      log.info("created DeviceClass {}", c.metadata.name);
    } else if (out.error().code() == Code::kForbidden) {
      log.warn("cannot create DeviceClass {} with this identity (an admin must): {}", c.metadata.name,
               out.error().message());
    } else if (out.error().code() != Code::kAlreadyExists) {
      return out.error();
    }
  }
  return {};
}

}  // namespace draplane::node
