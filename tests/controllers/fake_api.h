// FakeApi: an in-memory Kubernetes REST API behind the client::RestClient
// interface, for controller and node-agent tests (header-only: tests/<module>
// compiles only *_test.cc files).
//
// It keeps JSON objects by (resource, namespace, name) and implements what the
// controllers and the agent use: GET of objects and lists (namespace and
// fieldSelector filters: spec.nodeName, spec.driver, metadata.name), POST with
// generateName (deterministic suffixes "aaaaa", "aaaab", ...), uid and
// resourceVersion, PUT of objects and of the status subresource with
// resourceVersion preconditions (409 Conflict), DELETE (finalizers turn it into
// deletionTimestamp; a body's preconditions.uid is honoured), and watch
// (?watch=1&resourceVersion=N) from an event log. Failures can be injected per
// "METHOD path" prefix. Every request is recorded.
//
// Thread-safety: all methods may be called concurrently.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "client/rest_client.h"

namespace draplane::testing {

class FakeApi final : public client::RestClient {
 public:
  using Key = std::tuple<std::string, std::string, std::string>;  // resource, namespace, name

  client::Response handle(std::string_view method, std::string_view target, std::string_view body) {
    std::unique_lock<std::mutex> l(mu_);
    log_.push_back(std::string(method) + " " + std::string(target));
    for (auto it = failures_.begin(); it != failures_.end(); ++it) {
      std::string m = std::string(method) + " " + std::string(target);
      if (m.rfind(it->first, 0) == 0) {
        int code = it->second;
        failures_.erase(it);
        return error(code, code == 409 ? "Conflict" : "InternalError", "injected failure");
      }
    }
    Parsed p = parse(target);
    if (!p.ok) return error(404, "NotFound", "unknown path " + std::string(target));
    if (method == "GET" && p.name.empty()) return list(p);
    if (method == "GET") {
      auto it = objects_.find({p.resource, p.ns, p.name});
      if (it == objects_.end()) return not_found(p);
      return ok(200, it->second);
    }
    if (method == "POST") return create(p, std::string(body));
    if (method == "PUT") return update(p, std::string(body));
    if (method == "DELETE") return remove(p, std::string(body));
    return error(405, "MethodNotAllowed", "method not allowed");
  }

  Result<client::Response> request(std::string_view method, std::string_view target, std::string_view body,
                                   std::string_view) override {
    auto r = handle(method, target, body);
    cv_.notify_all();
    return r;
  }

  Result<void> watch(std::string_view target, const std::function<bool(std::string_view)>& on_event,
                     const std::atomic<bool>* stop, int poll_ms) override {
    Parsed p = parse(target);
    if (!p.ok) return Status(Code::kNotFound, "unknown path");
    int64_t from = std::atoll(query(target, "resourceVersion").c_str());
    size_t next = 0;
    while (stop == nullptr || !stop->load()) {
      std::vector<std::string> out;
      {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait_for(l, std::chrono::milliseconds(std::min(poll_ms, 50)),
                     [&] { return next < events_.size() || closed_; });
        if (closed_) return {};
        for (; next < events_.size(); ++next) {
          const Event& e = events_[next];
          if (held_.count(std::get<0>(e.key)) && std::get<0>(e.key) == p.resource) break;  // lagging watch
          if (e.rv <= from || std::get<0>(e.key) != p.resource) continue;
          if (!p.ns.empty() && std::get<1>(e.key) != p.ns) continue;
          if (!matches(p, e.json)) continue;
          out.push_back("{\"type\":\"" + e.type + "\",\"object\":" + e.json + "}");
        }
      }
      for (const auto& ev : out) {
        if (!on_event(ev)) return {};
      }
    }
    return {};
  }

  // Test helpers.
  // Watches of `resource` deliver nothing from now until release() (an informer
  // lagging behind the server); lists and requests are unaffected.
  void hold(const std::string& resource) {
    std::lock_guard<std::mutex> l(mu_);
    held_.insert(resource);
  }
  void release(const std::string& resource) {
    std::lock_guard<std::mutex> l(mu_);
    held_.erase(resource);
    cv_.notify_all();
  }
  std::string put_object(const std::string& resource, const std::string& json) {
    std::string ns = field(json, {"metadata", "namespace"});
    Parsed p;
    p.ok = true;
    p.resource = resource;
    p.ns = ns;
    std::lock_guard<std::mutex> l(mu_);
    auto resp = create(p, json);
    cv_.notify_all();
    return resp.body;
  }
  std::optional<std::string> object(const std::string& resource, const std::string& ns, const std::string& name) {
    std::lock_guard<std::mutex> l(mu_);
    auto it = objects_.find({resource, ns, name});
    if (it == objects_.end()) return std::nullopt;
    return it->second;
  }
  std::vector<std::string> objects(const std::string& resource) {
    std::lock_guard<std::mutex> l(mu_);
    std::vector<std::string> out;
    for (const auto& [k, v] : objects_) {
      if (std::get<0>(k) == resource) out.push_back(v);
    }
    return out;
  }
  std::vector<std::string> requests() {
    std::lock_guard<std::mutex> l(mu_);
    return log_;
  }
  void clear_requests() {
    std::lock_guard<std::mutex> l(mu_);
    log_.clear();
  }
  // The next request starting with `prefix` ("PUT /api/v1/...") answers `code`.
  void fail_next(const std::string& prefix, int code) {
    std::lock_guard<std::mutex> l(mu_);
    failures_.emplace_back(prefix, code);
  }
  // Deletes an object outright (as a garbage collector or an admin would).
  void erase(const std::string& resource, const std::string& ns, const std::string& name) {
    std::lock_guard<std::mutex> l(mu_);
    auto it = objects_.find({resource, ns, name});
    if (it == objects_.end()) return;
    ++rv_;
    record("DELETED", it->first, it->second);
    objects_.erase(it);
    cv_.notify_all();
  }
  // Ends every watch.
  void close() {
    std::lock_guard<std::mutex> l(mu_);
    closed_ = true;
    cv_.notify_all();
  }
  // Waits (up to timeout_ms) until pred() holds, re-checking on every change.
  template <typename Pred>
  bool wait_for(Pred pred, int timeout_ms = 20000) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < deadline) {
      if (pred()) return true;
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait_for(l, std::chrono::milliseconds(20));
    }
    return pred();
  }

  // Reads a string field of JSON text ("" when absent).
  static std::string field(const std::string& json, std::initializer_list<const char*> path) {
    rapidjson::Document d;
    d.Parse(json.data(), json.size());
    if (d.HasParseError()) return "";
    const rapidjson::Value* v = &d;
    for (const char* p : path) {
      if (!v->IsObject() || !v->HasMember(p)) return "";
      v = &(*v)[p];
    }
    if (v->IsString()) return v->GetString();
    if (v->IsInt64()) return std::to_string(v->GetInt64());
    if (v->IsBool()) return v->GetBool() ? "true" : "false";
    rapidjson::StringBuffer b;
    rapidjson::Writer<rapidjson::StringBuffer> w(b);
    v->Accept(w);
    return b.GetString();
  }

 private:
  struct Parsed {
    bool ok = false;
    std::string resource, ns, name, sub;
    std::string field_selector;
  };
  struct Event {
    int64_t rv;
    std::string type;
    Key key;
    std::string json;
  };

  static std::string query(std::string_view target, const std::string& key) {
    size_t q = target.find('?');
    if (q == std::string_view::npos) return "";
    std::string qs(target.substr(q + 1));
    size_t pos = 0;
    while (pos <= qs.size()) {
      size_t amp = qs.find('&', pos);
      std::string kv = qs.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
      size_t eq = kv.find('=');
      if (kv.substr(0, eq) == key) return eq == std::string::npos ? "" : unescape(kv.substr(eq + 1));
      if (amp == std::string::npos) break;
      pos = amp + 1;
    }
    return "";
  }
  static std::string unescape(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '%' && i + 2 < s.size()) {
        out.push_back(static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16)));
        i += 2;
      } else {
        out.push_back(s[i]);
      }
    }
    return out;
  }

  static Parsed parse(std::string_view target) {
    Parsed p;
    std::string path(target.substr(0, target.find('?')));
    std::vector<std::string> parts;
    size_t pos = 1;
    while (pos <= path.size()) {
      size_t s = path.find('/', pos);
      parts.push_back(path.substr(pos, s == std::string::npos ? std::string::npos : s - pos));
      if (s == std::string::npos) break;
      pos = s + 1;
    }
    size_t i = 0;
    if (parts.size() >= 2 && parts[0] == "api") {
      i = 2;
    } else if (parts.size() >= 3 && parts[0] == "apis") {
      i = 3;
    } else {
      return p;
    }
    if (i + 1 < parts.size() && parts[i] == "namespaces" && i + 2 < parts.size()) {
      p.ns = parts[i + 1];
      i += 2;
    }
    if (i >= parts.size()) return p;
    p.resource = parts[i];
    if (i + 1 < parts.size()) p.name = parts[i + 1];
    if (i + 2 < parts.size()) p.sub = parts[i + 2];
    p.field_selector = query(target, "fieldSelector");
    p.ok = true;
    return p;
  }

  static bool matches(const Parsed& p, const std::string& json) {
    if (p.field_selector.empty()) return true;
    size_t pos = 0;
    while (pos <= p.field_selector.size()) {
      size_t c = p.field_selector.find(',', pos);
      std::string term = p.field_selector.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
      size_t eq = term.find('=');
      std::string k = term.substr(0, eq), v = term.substr(eq + 1);
      std::string have;
      if (k == "spec.nodeName") have = field(json, {"spec", "nodeName"});
      if (k == "spec.driver") have = field(json, {"spec", "driver"});
      if (k == "metadata.name") have = field(json, {"metadata", "name"});
      if (have != v) return false;
      if (c == std::string::npos) break;
      pos = c + 1;
    }
    return true;
  }

  static std::string kind_of(const std::string& resource) {
    static const std::map<std::string, std::string> kinds = {
        {"pods", "Pod"}, {"nodes", "Node"}, {"resourceclaims", "ResourceClaim"},
        {"resourceclaimtemplates", "ResourceClaimTemplate"}, {"resourceslices", "ResourceSlice"},
        {"deviceclasses", "DeviceClass"}, {"leases", "Lease"}, {"jobs", "Job"}, {"podgroups", "PodGroup"}};
    auto it = kinds.find(resource);
    return it == kinds.end() ? "Unknown" : it->second;
  }

  client::Response ok(int code, const std::string& body) { return {code, body, "application/json"}; }
  client::Response error(int code, const std::string& reason, const std::string& message) {
    return {code,
            "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"" + reason +
                "\",\"message\":\"" + message + "\",\"code\":" + std::to_string(code) + "}",
            "application/json"};
  }
  client::Response not_found(const Parsed& p) {
    return error(404, "NotFound", p.resource + " \\\"" + p.name + "\\\" not found");
  }

  client::Response list(const Parsed& p) {
    std::string items;
    for (const auto& [k, v] : objects_) {
      if (std::get<0>(k) != p.resource || (!p.ns.empty() && std::get<1>(k) != p.ns) || !matches(p, v)) continue;
      if (!items.empty()) items += ",";
      items += v;
    }
    return ok(200, "{\"kind\":\"" + kind_of(p.resource) + "List\",\"apiVersion\":\"v1\",\"metadata\":{" +
                       "\"resourceVersion\":\"" + std::to_string(rv_) + "\"},\"items\":[" + items + "]}");
  }

  static std::string write(const rapidjson::Value& v) {
    rapidjson::StringBuffer b;
    rapidjson::Writer<rapidjson::StringBuffer> w(b);
    v.Accept(w);
    return b.GetString();
  }
  static void set(rapidjson::Value& obj, const char* key, const std::string& value,
                  rapidjson::Document::AllocatorType& a) {
    if (obj.HasMember(key)) obj.RemoveMember(key);
    obj.AddMember(rapidjson::Value(key, a), rapidjson::Value(value.c_str(), a), a);
  }

  void record(const std::string& type, const Key& key, const std::string& json) {
    events_.push_back({rv_, type, key, json});
  }

  client::Response create(const Parsed& p, const std::string& body) {
    rapidjson::Document d;
    d.Parse(body.data(), body.size());
    if (d.HasParseError() || !d.IsObject()) return error(400, "BadRequest", "bad json");
    auto& a = d.GetAllocator();
    if (!d.HasMember("metadata")) d.AddMember("metadata", rapidjson::Value(rapidjson::kObjectType), a);
    auto& md = d["metadata"];
    std::string name = md.HasMember("name") ? md["name"].GetString() : "";
    if (name.empty() && md.HasMember("generateName")) {
      std::string suffix = "aaaaa";
      int64_t n = next_suffix_++;
      for (int i = 4; i >= 0; --i, n /= 26) suffix[i] = static_cast<char>('a' + n % 26);
      name = std::string(md["generateName"].GetString()) + suffix;
      set(md, "name", name, a);
    }
    if (name.empty()) return error(422, "Invalid", "metadata.name: Required value");
    if (!p.ns.empty()) set(md, "namespace", p.ns, a);
    Key key{p.resource, p.ns, name};
    if (objects_.count(key)) return error(409, "AlreadyExists", p.resource + " \\\"" + name + "\\\" already exists");
    ++rv_;
    set(md, "uid", "uid-" + std::to_string(++next_uid_), a);
    set(md, "resourceVersion", std::to_string(rv_), a);
    set(md, "creationTimestamp", "2026-01-01T00:00:00Z", a);
    std::string json = write(d);
    objects_[key] = json;
    record("ADDED", key, json);
    return ok(201, json);
  }

  client::Response update(const Parsed& p, const std::string& body) {
    Key key{p.resource, p.ns, p.name};
    auto it = objects_.find(key);
    if (it == objects_.end()) return not_found(p);
    rapidjson::Document in, cur;
    in.Parse(body.data(), body.size());
    cur.Parse(it->second.data(), it->second.size());
    if (in.HasParseError() || !in.IsObject()) return error(400, "BadRequest", "bad json");
    auto& a = cur.GetAllocator();
    std::string want_rv = field(body, {"metadata", "resourceVersion"});
    if (!want_rv.empty() && want_rv != std::to_string(rv_of(cur))) {
      return error(409, "Conflict",
                   "Operation cannot be fulfilled on " + p.resource + " \\\"" + p.name +
                       "\\\": the object has been modified; please apply your changes to the latest version and try again");
    }
    const bool has_status = p.resource == "pods" || p.resource == "nodes" || p.resource == "resourceclaims" ||
                            p.resource == "jobs" || p.resource == "replicasets" || p.resource == "deployments" ||
                            p.resource == "podgroups";
    if (p.sub == "status") {
      if (cur.HasMember("status")) cur.RemoveMember("status");
      if (in.HasMember("status")) cur.AddMember("status", rapidjson::Value(in["status"], a), a);
    } else {
      rapidjson::Value keep_status;
      bool had = has_status && cur.HasMember("status");
      if (had) keep_status.CopyFrom(cur["status"], a);
      rapidjson::Value keep_meta(cur["metadata"], a);
      cur.CopyFrom(in, a);
      if (has_status) {
        if (cur.HasMember("status")) cur.RemoveMember("status");
        if (had) cur.AddMember("status", keep_status, a);
      }
      // Server-owned metadata stays.
      for (const char* k : {"uid", "creationTimestamp", "deletionTimestamp", "namespace"}) {
        if (keep_meta.HasMember(k)) set(cur["metadata"], k, keep_meta[k].GetString(), a);
      }
    }
    ++rv_;
    set(cur["metadata"], "resourceVersion", std::to_string(rv_), a);
    // The last finalizer of a deleted object gone: it goes away.
    auto& md = cur["metadata"];
    bool terminating = md.HasMember("deletionTimestamp");
    bool no_fin = !md.HasMember("finalizers") || !md["finalizers"].IsArray() || md["finalizers"].Empty();
    std::string json = write(cur);
    if (terminating && no_fin) {
      objects_.erase(it);
      record("DELETED", key, json);
      return ok(200, json);
    }
    it->second = json;
    record("MODIFIED", key, json);
    return ok(200, json);
  }

  client::Response remove(const Parsed& p, const std::string& body) {
    Key key{p.resource, p.ns, p.name};
    auto it = objects_.find(key);
    if (it == objects_.end()) return not_found(p);
    std::string puid = body.empty() ? "" : field(body, {"preconditions", "uid"});
    if (!puid.empty() && puid != field(it->second, {"metadata", "uid"})) {
      return error(409, "Conflict", "Precondition failed: UID in precondition: " + puid);
    }
    rapidjson::Document cur;
    cur.Parse(it->second.data(), it->second.size());
    auto& md = cur["metadata"];
    if (md.HasMember("finalizers") && md["finalizers"].IsArray() && !md["finalizers"].Empty()) {
      if (!md.HasMember("deletionTimestamp")) {
        ++rv_;
        set(md, "deletionTimestamp", "2026-01-01T00:00:01Z", cur.GetAllocator());
        set(md, "resourceVersion", std::to_string(rv_), cur.GetAllocator());
        it->second = write(cur);
        record("MODIFIED", key, it->second);
      }
      return ok(200, it->second);
    }
    ++rv_;
    std::string json = it->second;
    objects_.erase(it);
    record("DELETED", key, json);
    return ok(200, json);
  }

  static int64_t rv_of(const rapidjson::Value& obj) {
    if (!obj.HasMember("metadata") || !obj["metadata"].HasMember("resourceVersion")) return 0;
    return std::atoll(obj["metadata"]["resourceVersion"].GetString());
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<Key, std::string> objects_;
  std::deque<Event> events_;
  std::vector<std::string> log_;
  std::vector<std::pair<std::string, int>> failures_;
  int64_t rv_ = 0;
  int64_t next_uid_ = 0;
  int64_t next_suffix_ = 0;
  bool closed_ = false;
  std::set<std::string> held_;
};

}  // namespace draplane::testing
