#include "cluster/demo.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "api/codec.h"
#include "client/resource_path.h"

namespace draplane::cluster {
namespace {

namespace fs = std::filesystem;
using namespace client::resources;

// The collection path of an object's kind ("" for kinds the demo leaves alone).
std::string collection_path(std::string_view kind, const std::string& ns) {
  if (kind == "Namespace") return kNamespaces.all().str();
  if (kind == "DeviceClass") return kDeviceClasses.all().str();
  if (kind == "ResourceClaim") return kResourceClaims.ns(ns).str();
  if (kind == "ResourceClaimTemplate") return kResourceClaimTemplates.ns(ns).str();
  if (kind == "Pod") return kPods.ns(ns).str();
  return "";
}

bool namespaced(std::string_view kind) { return kind == "ResourceClaim" || kind == "ResourceClaimTemplate" || kind == "Pod"; }

template <typename T>
std::vector<T> list_of(client::RestClient& rest, std::string_view path) {
  std::vector<T> out;
  auto body = rest.get(path);
  if (!body.has_value()) return out;
  for (auto& d : api::decode_stream(*body)) {
    if (!d.object.has_value()) continue;
    if (auto* t = std::get_if<T>(&d.object.value())) out.push_back(std::move(*t));
  }
  return out;
}

const api::PodCondition* condition(const api::Pod& p, const std::string& type) {
  for (const auto& c : p.status.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

std::string key(const api::ObjectMeta& m) { return m.namespace_ + "/" + m.name; }

// The claims a pod uses: "namespace/name".
std::vector<std::string> pod_claims(const api::Pod& p) {
  std::vector<std::string> out;
  for (const auto& pc : p.spec.resourceClaims) {
    if (pc.resourceClaimName) {
      out.push_back(p.metadata.namespace_ + "/" + *pc.resourceClaimName);
      continue;
    }
    for (const auto& s : p.status.resourceClaimStatuses) {
      if (s.name == pc.name && s.resourceClaimName) out.push_back(p.metadata.namespace_ + "/" + *s.resourceClaimName);
    }
  }
  if (p.status.extendedResourceClaimStatus) {
    out.push_back(p.metadata.namespace_ + "/" + p.status.extendedResourceClaimStatus->resourceClaimName);
  }
  return out;
}

std::string indent(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) out += prefix + line + "\n";
  return out;
}

}  // namespace

Result<std::vector<std::string>> manifest_files(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status(Code::kNotFound, path + ": no such file or directory");
  std::vector<std::string> out;
  if (!fs::is_directory(path, ec)) {
    out.push_back(path);
    return out;
  }
  for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    std::string ext = it->path().extension().string();
    if (ext == ".yaml" || ext == ".yml" || ext == ".json") out.push_back(it->path().string());
  }
  if (ec) return Status(Code::kUnavailable, path + ": " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<ApplyOutcome> apply_manifests(client::RestClient& rest, const std::vector<std::string>& files) {
  std::vector<ApplyOutcome> out;
  std::set<std::string> namespaces;
  for (const auto& n : list_of<api::Namespace>(rest, kNamespaces.all())) namespaces.insert(n.metadata.name);
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in) {
      out.push_back({ApplyOutcome::Kind::kFailed, file, 0, "", "cannot read the file"});
      continue;
    }
    for (auto& d : api::decode_stream(ss.str())) {
      ApplyOutcome o;
      o.file = file;
      o.document = d.index;
      o.object = d.kind + "/" + d.name;
      if (!d.object.has_value()) {
        o.message = d.object.error().message();
        out.push_back(std::move(o));
        continue;
      }
      api::Object& obj = d.object.value();
      std::string kind(api::kind_of(obj));
      api::ObjectMeta& meta = api::meta_of(obj);
      if (namespaced(kind) && meta.namespace_.empty()) meta.namespace_ = "default";
      o.object = kind + "/" + (namespaced(kind) ? meta.namespace_ + "/" : "") + meta.name;
      std::string path = collection_path(kind, meta.namespace_);
      if (path.empty()) {
        o.kind = ApplyOutcome::Kind::kSkipped;
        o.message = "published by the node agents here";
        out.push_back(std::move(o));
        continue;
      }
      if (namespaced(kind) && !namespaces.count(meta.namespace_)) {
        auto r = rest.post(kNamespaces.all(), R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" +
                                                     meta.namespace_ + R"("}})");
        if (r.has_value() || r.error().code() == Code::kAlreadyExists) namespaces.insert(meta.namespace_);
      }
      auto r = rest.post(path, api::to_json(obj));
      if (r.has_value()) {
        o.kind = ApplyOutcome::Kind::kCreated;
        if (kind == "Namespace") namespaces.insert(meta.name);
      } else if (r.error().code() == Code::kAlreadyExists) {
        o.kind = ApplyOutcome::Kind::kExists;
        o.message = r.error().message();
      } else {
        o.message = r.error().message();
      }
      out.push_back(std::move(o));
    }
  }
  return out;
}

std::vector<std::string> wait_pods_settled(client::RestClient& rest, int timeout_ms) {
  // Unschedulable pods are retried as the cluster changes (claims created by the
  // controller, devices freed), so they count as settled only once nothing about
  // the pods has changed for a while.
  constexpr auto kQuiet = std::chrono::seconds(4);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto last_change = std::chrono::steady_clock::now();
  std::string last_state;
  std::vector<std::string> pending;
  while (true) {
    pending.clear();
    std::string state;
    bool all_started = true;
    for (const auto& p : list_of<api::Pod>(rest, kPods.all())) {
      const std::string& ph = p.status.phase;
      bool started = ph == "Running" || ph == "Succeeded" || ph == "Failed";
      all_started = all_started && started;
      if (!started) pending.push_back(key(p.metadata));
      const api::PodCondition* c = condition(p, "PodScheduled");
      state += key(p.metadata) + " " + ph + " " + p.spec.nodeName + " " + (c ? c->message : "") + "\n";
    }
    auto now = std::chrono::steady_clock::now();
    if (state != last_state) {
      last_state = state;
      last_change = now;
    }
    if (all_started || now >= deadline) return pending;
    if (now - last_change >= kQuiet) return pending;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::vector<api::Pod> list_pods(client::RestClient& rest) { return list_of<api::Pod>(rest, kPods.all()); }

PendingSummary summarize_pending(const std::vector<std::string>& pending, const std::vector<api::Pod>& pods) {
  PendingSummary out;
  std::map<std::string, const api::Pod*> by_key;
  for (const auto& p : pods) by_key[key(p.metadata)] = &p;
  std::set<std::string> waiting(pending.begin(), pending.end());
  for (const auto& k : pending) {
    auto it = by_key.find(k);
    const std::map<std::string, std::string>* annotations = it == by_key.end() ? nullptr : &it->second->metadata.annotations;
    auto a = annotations ? annotations->find(kExpectPendingAnnotation) : std::map<std::string, std::string>::const_iterator();
    if (annotations && a != annotations->end()) {
      out.expected.emplace_back(k, a->second);
    } else {
      out.unexpected.push_back(k);
    }
  }
  for (const auto& p : pods) {
    if (p.metadata.annotations.count(kExpectPendingAnnotation) && !waiting.count(key(p.metadata))) {
      out.started_anyway.push_back(key(p.metadata));
    }
  }
  return out;
}

std::string render_pending_summary(const PendingSummary& s, int timeout_s) {
  std::string out;
  if (!s.expected.empty()) {
    out += std::to_string(s.expected.size()) + (s.expected.size() == 1 ? " example waits" : " examples wait") +
           " as intended (" + kExpectPendingAnnotation + "); see the explanations above:\n";
    for (const auto& [k, why] : s.expected) out += "  " + k + (why.empty() ? "" : ": " + why) + "\n";
  }
  for (const auto& k : s.started_anyway) {
    out += "note: " + k + " is marked " + kExpectPendingAnnotation + " but started; its annotation is out of date\n";
  }
  if (!s.unexpected.empty()) {
    out += "ERROR: " + std::to_string(s.unexpected.size()) + " pod(s) still pending after " + std::to_string(timeout_s) +
           " s that should have started:";
    for (const auto& k : s.unexpected) out += " " + k;
    out += "\n";
  }
  return out;
}

std::string demo_report(client::RestClient& rest) {
  auto claims = list_of<api::ResourceClaim>(rest, kResourceClaims.all());
  auto pods = list_of<api::Pod>(rest, kPods.all());
  auto slices = list_of<api::ResourceSlice>(rest, kResourceSlices.all());
  // driver/pool/device -> "productName uuid"
  std::map<std::string, std::string> devices;
  for (const auto& s : slices) {
    for (const auto& d : s.spec.devices) {
      std::string desc;
      for (const char* a : {"productName", "profile", "uuid"}) {
        auto it = d.attributes.find(a);
        if (it != d.attributes.end() && it->second.string_) desc += (desc.empty() ? "" : ", ") + *it->second.string_;
      }
      devices[s.spec.driver + "/" + s.spec.pool.name + "/" + d.name] = desc;
    }
  }
  std::map<std::string, std::vector<const api::Pod*>> users;  // claim key -> pods
  for (const auto& p : pods) {
    for (const auto& c : pod_claims(p)) users[c].push_back(&p);
  }
  std::ostringstream out;
  out << "ResourceClaims:\n";
  if (claims.empty()) out << "  (none)\n";
  for (const auto& c : claims) {
    out << "  " << key(c.metadata) << ": ";
    if (c.status.allocation) {
      std::string node;
      const auto& ns = c.status.allocation->nodeSelector;
      if (ns && !ns->nodeSelectorTerms.empty() && !ns->nodeSelectorTerms[0].matchFields.empty() &&
          !ns->nodeSelectorTerms[0].matchFields[0].values.empty()) {
        node = ns->nodeSelectorTerms[0].matchFields[0].values[0];
      }
      out << "allocated" << (node.empty() ? "" : " on " + node) << ", reserved for "
          << c.status.reservedFor.size() << " pod(s)\n";
      for (const auto& r : c.status.allocation->devices.results) {
        std::string id = r.driver + "/" + r.pool + "/" + r.device;
        out << "    " << r.request << ": " << r.device;
        auto it = devices.find(id);
        if (it != devices.end() && !it->second.empty()) out << " (" << it->second << ")";
        if (r.shareID) out << " share " << *r.shareID;
        out << "\n";
      }
      continue;
    }
    auto u = users.find(key(c.metadata));
    if (u == users.end()) {
      out << "pending: no pod uses it (claims are allocated when a pod that needs them is scheduled)\n";
      continue;
    }
    std::string why;
    for (const api::Pod* p : u->second) {
      const api::PodCondition* sc = condition(*p, "PodScheduled");
      if (sc && sc->status == "False" && !sc->message.empty()) {
        why = "pod " + p->metadata.name + ": " + sc->message;
        break;
      }
    }
    out << "pending" << (why.empty() ? "" : ": " + why) << "\n";
  }
  out << "Pods:\n";
  if (pods.empty()) out << "  (none)\n";
  for (const auto& p : pods) {
    out << "  " << key(p.metadata) << ": " << (p.status.phase.empty() ? "Pending" : p.status.phase);
    if (!p.spec.nodeName.empty()) out << " on " << p.spec.nodeName;
    out << "\n";
    const api::PodCondition* sc = condition(p, "PodScheduled");
    if (p.spec.nodeName.empty() && sc && sc->status == "False") out << indent(sc->message, "    ");
    if (p.spec.nodeName.empty()) continue;
    for (const auto& c : p.spec.containers) {
      auto log = rest.get(kPods.ns(p.metadata.namespace_).name(p.metadata.name).sub("log").str() + "?container=" + c.name + "&tailLines=5");
      if (!log.has_value()) continue;
      out << "    " << c.name << " output:\n" << indent(log->empty() ? "(none yet)" : *log, "      ");
    }
  }
  return out.str();
}

}  // namespace draplane::cluster
