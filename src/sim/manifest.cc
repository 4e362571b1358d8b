#include "sim/manifest.h"

#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "api/codec.h"

namespace draplane::sim {
namespace {

Result<std::vector<api::Object>> read_objects(const std::string& path) {
  std::ifstream in(path);
  if (!in) return invalid_error(path + ": cannot open file");
  std::stringstream text;
  text << in.rdbuf();
  std::vector<api::Object> out;
  for (auto& doc : api::decode_stream(text.str())) {
    if (!doc.object) {
      return invalid_error(path + ": document " + std::to_string(doc.index + 1) + " (" + doc.kind + " " + doc.name +
                           "): " + doc.object.error().message());
    }
    out.push_back(std::move(*doc.object));
  }
  return out;
}

std::string where(const std::string& path, std::string_view kind, const api::ObjectMeta& meta) {
  std::string ns = meta.namespace_.empty() ? "" : meta.namespace_ + "/";
  return path + ": " + std::string(kind) + " " + ns + meta.name;
}

// The attribute's local name is productName, with or without a domain.
std::optional<std::string> product_name(const api::Device& device) {
  for (const auto& [name, value] : device.attributes) {
    if ((name == "productName" || name.ends_with("/productName")) && value.string_) return *value.string_;
  }
  return std::nullopt;
}

const api::Quantity* resource(const api::NodeStatus& status, const std::string& name) {
  auto it = status.allocatable.find(name);
  if (it != status.allocatable.end()) return &it->second;
  it = status.capacity.find(name);
  return it != status.capacity.end() ? &it->second : nullptr;
}

Result<std::optional<int64_t>> seconds_annotation(const std::string& at, const api::ObjectMeta& meta, const char* key) {
  auto it = meta.annotations.find(key);
  if (it == meta.annotations.end()) return std::optional<int64_t>{};
  try {
    size_t used = 0;
    long long v = std::stoll(it->second, &used);
    if (used == it->second.size() && v >= 0) return std::optional<int64_t>{v};
  } catch (const std::exception&) {
  }
  return invalid_error(at + ": metadata.annotations[" + key + "]: \"" + it->second +
                       "\": must be a whole number of seconds, 0 or more");
}

// GPUs of one claim spec into the task; `at` names it for errors.
Result<void> add_claim(const std::string& at, const api::ResourceClaimSpec& spec, TaskSpec& task) {
  for (size_t i = 0; i < spec.devices.requests.size(); ++i) {
    const auto& req = spec.devices.requests[i];
    std::string field = at + ": spec.devices.requests[" + std::to_string(i) + "]";
    if (!req.exactly) return invalid_error(field + ".exactly: required (firstAvailable is not simulated)");
    const auto& ex = *req.exactly;
    if (ex.allocationMode == "All") return invalid_error(field + ".exactly.allocationMode: All is not simulated");
    if (task.num_gpu > 0) {
      return invalid_error(field + ": a simulated pod asks for one set of GPUs (one request in all its claims)");
    }
    task.num_gpu = static_cast<int>(ex.count.value_or(1));
    task.gpu_milli = 1000;
    if (ex.capacity) {
      for (const auto& [name, q] : ex.capacity->requests) {
        if (name != "milli" && !name.ends_with("/milli")) {
          return invalid_error(field + ".exactly.capacity.requests[" + name + "]: only milli (of a GPU) is simulated");
        }
        int64_t milli = q.value();
        if (milli < 1 || milli > 1000) {
          return invalid_error(field + ".exactly.capacity.requests[" + name + "]: must be 1..1000");
        }
        if (task.num_gpu != 1 && milli < 1000) {
          return invalid_error(field + ".exactly.count: a share (milli < 1000) is of one GPU");
        }
        task.gpu_milli = milli;
      }
    }
    for (const auto& sel : ex.selectors) {
      if (!sel.cel || sel.cel->expression.find("productName") == std::string::npos) continue;
      static const std::regex quoted("\"([^\"]*)\"|'([^']*)'");
      // The models are the strings quoted after productName (the attribute's
      // domain, quoted before it, is not one).
      const std::string e = sel.cel->expression.substr(sel.cel->expression.find("productName"));
      for (std::sregex_iterator it(e.begin(), e.end(), quoted), end; it != end; ++it) {
        task.models.push_back((*it)[1].matched ? (*it)[1].str() : (*it)[2].str());
      }
    }
  }
  return {};
}

}  // namespace

Result<std::vector<NodeSpec>> load_cluster_manifests(const std::string& path) {
  ASSIGN_OR_RETURN(auto objects, read_objects(path));
  std::vector<NodeSpec> nodes;
  std::map<std::string, size_t> index;
  for (const auto& obj : objects) {
    const auto* node = std::get_if<api::Node>(&obj);
    if (!node) continue;
    std::string at = where(path, "Node", node->metadata);
    const api::Quantity* cpu = resource(node->status, "cpu");
    const api::Quantity* mem = resource(node->status, "memory");
    if (!cpu || !mem) return invalid_error(at + ": status.allocatable: cpu and memory are required");
    NodeSpec n;
    n.name = node->metadata.name;
    n.cpu_milli = cpu->milli_value();
    n.memory_mib = mem->value() / (1024 * 1024);
    if (!index.try_emplace(n.name, nodes.size()).second) return invalid_error(at + ": metadata.name: duplicate Node");
    nodes.push_back(n);
  }
  for (const auto& obj : objects) {
    if (std::holds_alternative<api::Node>(obj) || std::holds_alternative<api::DeviceClass>(obj)) continue;
    const auto* slice = std::get_if<api::ResourceSlice>(&obj);
    if (!slice) {
      return invalid_error(path + ": " + std::string(api::kind_of(obj)) + " " + api::meta_of(obj).name +
                           ": a cluster holds Nodes, ResourceSlices and DeviceClasses");
    }
    std::string at = where(path, "ResourceSlice", slice->metadata);
    if (!slice->spec.nodeName) return invalid_error(at + ": spec.nodeName: required (node-local GPUs)");
    auto it = index.find(*slice->spec.nodeName);
    if (it == index.end()) return invalid_error(at + ": spec.nodeName: no Node \"" + *slice->spec.nodeName + "\"");
    NodeSpec& n = nodes[it->second];
    for (size_t d = 0; d < slice->spec.devices.size(); ++d) {
      auto model = product_name(slice->spec.devices[d]);
      std::string field = at + ": spec.devices[" + std::to_string(d) + "]";
      if (!model) return invalid_error(field + ".attributes: productName (a string) is required");
      if (n.gpus > 0 && *model != n.model) {
        return invalid_error(field + ".attributes.productName: \"" + *model + "\": node " + n.name +
                             " already has " + n.model + " (one GPU model per simulated node)");
      }
      n.model = *model;
      if (++n.gpus > 8) return invalid_error(field + ": a simulated node has at most 8 GPUs");
    }
  }
  return nodes;
}

Result<std::vector<TaskSpec>> load_workload_manifests(const std::string& path) {
  ASSIGN_OR_RETURN(auto objects, read_objects(path));
  std::map<std::string, const api::ResourceClaimSpec*> claims, templates;  // "ns/name"
  for (const auto& obj : objects) {
    const auto& meta = api::meta_of(obj);
    std::string key = (meta.namespace_.empty() ? "default" : meta.namespace_) + "/" + meta.name;
    if (const auto* c = std::get_if<api::ResourceClaim>(&obj)) claims[key] = &c->spec;
    if (const auto* t = std::get_if<api::ResourceClaimTemplate>(&obj)) templates[key] = &t->spec.spec;
  }
  std::vector<TaskSpec> tasks;
  for (const auto& obj : objects) {
    if (std::holds_alternative<api::ResourceClaim>(obj) || std::holds_alternative<api::ResourceClaimTemplate>(obj)) {
      continue;
    }
    const auto* pod = std::get_if<api::Pod>(&obj);
    if (!pod) {
      return invalid_error(path + ": " + std::string(api::kind_of(obj)) + " " + api::meta_of(obj).name +
                           ": a workload holds Pods, ResourceClaims and ResourceClaimTemplates");
    }
    std::string at = where(path, "Pod", pod->metadata);
    std::string ns = pod->metadata.namespace_.empty() ? "default" : pod->metadata.namespace_;
    TaskSpec task;
    task.name = pod->metadata.name;
    for (const auto& c : pod->spec.containers) {
      if (auto it = c.resources.requests.find("cpu"); it != c.resources.requests.end()) task.cpu_milli += it->second.milli_value();
      if (auto it = c.resources.requests.find("memory"); it != c.resources.requests.end()) {
        task.memory_mib += it->second.value() / (1024 * 1024);
      }
    }
    for (size_t i = 0; i < pod->spec.resourceClaims.size(); ++i) {
      const auto& ref = pod->spec.resourceClaims[i];
      std::string field = at + ": spec.resourceClaims[" + std::to_string(i) + "]";
      const api::ResourceClaimSpec* spec = nullptr;
      if (ref.resourceClaimName) {
        auto it = claims.find(ns + "/" + *ref.resourceClaimName);
        if (it == claims.end()) return invalid_error(field + ".resourceClaimName: no ResourceClaim \"" + *ref.resourceClaimName + "\" in the workload");
        spec = it->second;
      } else if (ref.resourceClaimTemplateName) {
        auto it = templates.find(ns + "/" + *ref.resourceClaimTemplateName);
        if (it == templates.end()) {
          return invalid_error(field + ".resourceClaimTemplateName: no ResourceClaimTemplate \"" +
                               *ref.resourceClaimTemplateName + "\" in the workload");
        }
        spec = it->second;
      } else {
        return invalid_error(field + ": resourceClaimName or resourceClaimTemplateName is required");
      }
      RETURN_IF_ERROR(add_claim(field, *spec, task));
    }
    ASSIGN_OR_RETURN(task.creation_time, seconds_annotation(at, pod->metadata, kArrivalAnnotation));
    ASSIGN_OR_RETURN(auto duration, seconds_annotation(at, pod->metadata, kDurationAnnotation));
    if (duration) {
      if (!task.creation_time) return invalid_error(at + ": metadata.annotations[" + std::string(kDurationAnnotation) + "]: needs " + kArrivalAnnotation);
      task.deletion_time = *task.creation_time + *duration;
    }
    tasks.push_back(std::move(task));
  }
  return tasks;
}

}  // namespace draplane::sim
