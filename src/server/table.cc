// Table output (meta.k8s.io/v1 Table) with the columns kubectl shows for each
// kind in Kubernetes 1.36 (pkg/printers/internalversion/printers.go).
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "server/internal/api_impl.h"
#include "server/internal/event_conversion.h"

namespace draplane::server {
namespace {

struct Column {
  const char* name;
  const char* type;  // string | integer
  int priority;      // 1: only with -o wide
  const char* format = "";
};

using Cell = std::variant<std::string, int64_t>;

std::string age(const JsonValue& o, int64_t now) {
  int64_t t = common::parse_rfc3339(get_string(o, {"metadata", "creationTimestamp"})).value_or(-1);
  return t < 0 ? "<unknown>" : human_duration(now - t);
}

std::string or_none(std::string s) { return s.empty() ? "<none>" : s; }

int64_t array_size(const JsonValue& o, std::initializer_list<std::string_view> path) {
  const JsonValue* v = find(o, path);
  return v && v->IsArray() ? static_cast<int64_t>(v->Size()) : 0;
}

std::vector<Column> columns(const ResourceInfo& r) {
  const std::string& k = r.kind;
  if (k == "ResourceClaim") return {{"Name", "string", 0, "name"}, {"State", "string", 0}, {"Age", "string", 0}};
  if (k == "ResourceSlice") {
    return {{"Name", "string", 0, "name"}, {"Node", "string", 0}, {"Driver", "string", 0}, {"Pool", "string", 0},
            {"Age", "string", 0}};
  }
  if (k == "Pod") {
    return {{"Name", "string", 0, "name"}, {"Ready", "string", 0}, {"Status", "string", 0}, {"Restarts", "string", 0},
            {"Age", "string", 0}, {"IP", "string", 1}, {"Node", "string", 1}, {"Nominated Node", "string", 1},
            {"Readiness Gates", "string", 1}};
  }
  if (k == "Node") {
    return {{"Name", "string", 0, "name"}, {"Status", "string", 0}, {"Roles", "string", 0}, {"Age", "string", 0},
            {"Version", "string", 0}, {"Internal-IP", "string", 1}, {"External-IP", "string", 1},
            {"OS-Image", "string", 1}, {"Kernel-Version", "string", 1}, {"Container-Runtime", "string", 1}};
  }
  if (k == "Namespace") return {{"Name", "string", 0, "name"}, {"Status", "string", 0}, {"Age", "string", 0}};
  if (k == "Event") {
    return {{"Last Seen", "string", 0}, {"Type", "string", 0},    {"Reason", "string", 0},
            {"Object", "string", 0},    {"Subobject", "string", 1}, {"Source", "string", 1},
            {"Message", "string", 0},   {"First Seen", "string", 1}, {"Count", "integer", 1},
            {"Name", "string", 1}};
  }
  if (k == "Lease") return {{"Name", "string", 0, "name"}, {"Holder", "string", 0}, {"Age", "string", 0}};
  if (k == "PriorityClass") {
    return {{"Name", "string", 0, "name"}, {"Value", "integer", 0}, {"Global-Default", "string", 0},
            {"Age", "string", 0}, {"PreemptionPolicy", "string", 0}};
  }
  return {{"Name", "string", 0, "name"}, {"Age", "string", 0}};
}

std::string claim_state(const JsonValue& o) {
  std::vector<std::string> states;
  bool deleted = !get_string(o, {"metadata", "deletionTimestamp"}).empty();
  const JsonValue* alloc = find(o, {"status", "allocation"});
  if (deleted) states.push_back("deleted");
  if (alloc == nullptr || alloc->IsNull()) {
    if (!deleted) states.push_back("pending");
  } else {
    states.push_back("allocated");
    if (array_size(o, {"status", "reservedFor"}) > 0) states.push_back("reserved");
    else if (deleted) states.push_back("deallocating");
  }
  std::string out;
  for (size_t i = 0; i < states.size(); ++i) out += (i ? "," : "") + states[i];
  return out;
}

std::vector<Cell> pod_cells(const JsonValue& o, int64_t now) {
  int64_t total = array_size(o, {"spec", "containers"}), ready = 0, restarts = 0;
  const JsonValue* cs = find(o, {"status", "containerStatuses"});
  if (cs && cs->IsArray()) {
    for (const auto& c : cs->GetArray()) {
      const JsonValue* rd = find(c, {"ready"});
      if (rd && rd->IsBool() && rd->GetBool()) ++ready;
      const JsonValue* rc = find(c, {"restartCount"});
      if (rc && rc->IsInt64()) restarts += rc->GetInt64();
    }
  }
  std::string status = get_string(o, {"status", "reason"});
  if (status.empty()) status = get_string(o, {"status", "phase"});
  if (!get_string(o, {"metadata", "deletionTimestamp"}).empty()) status = "Terminating";
  return {get_string(o, {"metadata", "name"}), std::to_string(ready) + "/" + std::to_string(total), status,
          std::to_string(restarts), age(o, now), or_none(get_string(o, {"status", "podIP"})),
          or_none(get_string(o, {"spec", "nodeName"})), or_none(get_string(o, {"status", "nominatedNodeName"})),
          "<none>"};
}

std::vector<Cell> node_cells(const JsonValue& o, int64_t now) {
  std::string status = "Unknown";
  const JsonValue* conds = find(o, {"status", "conditions"});
  if (conds && conds->IsArray()) {
    for (const auto& c : conds->GetArray()) {
      if (get_string(c, {"type"}) == "Ready") status = get_string(c, {"status"}) == "True" ? "Ready" : "NotReady";
    }
  }
  const JsonValue* unsched = find(o, {"spec", "unschedulable"});
  if (unsched && unsched->IsBool() && unsched->GetBool()) status += ",SchedulingDisabled";
  std::string roles;
  if (const JsonValue* labels = find(o, {"metadata", "labels"}); labels && labels->IsObject()) {
    for (auto& m : labels->GetObject()) {
      std::string k(m.name.GetString());
      const std::string p = "node-role.kubernetes.io/";
      if (k.rfind(p, 0) == 0) roles += (roles.empty() ? "" : ",") + k.substr(p.size());
    }
  }
  std::string internal_ip, external_ip;
  if (const JsonValue* addrs = find(o, {"status", "addresses"}); addrs && addrs->IsArray()) {
    for (const auto& a : addrs->GetArray()) {
      if (get_string(a, {"type"}) == "InternalIP" && internal_ip.empty()) internal_ip = get_string(a, {"address"});
      if (get_string(a, {"type"}) == "ExternalIP" && external_ip.empty()) external_ip = get_string(a, {"address"});
    }
  }
  return {get_string(o, {"metadata", "name"}), status, or_none(roles), age(o, now),
          get_string(o, {"status", "nodeInfo", "kubeletVersion"}), or_none(internal_ip), or_none(external_ip),
          get_string(o, {"status", "nodeInfo", "osImage"}), get_string(o, {"status", "nodeInfo", "kernelVersion"}),
          get_string(o, {"status", "nodeInfo", "containerRuntimeVersion"})};
}

// printEvent: the core/v1 view of either version.
std::vector<Cell> event_cells(const JsonValue& served, int64_t now) {
  Json core;
  core.CopyFrom(served, core.GetAllocator());
  if (get_string(core, {"apiVersion"}) == "events.k8s.io/v1") event_to_core(core);
  const JsonValue& o = core;
  auto since = [&](const std::string& t) {
    int64_t s = common::parse_rfc3339(t).value_or(-1);
    return s < 0 ? std::string("<unknown>") : human_duration(now - s);
  };
  auto or_else = [](std::string a, std::string b) { return a.empty() ? b : a; };
  std::string first = since(or_else(get_string(o, {"firstTimestamp"}), get_string(o, {"eventTime"})));
  std::string last = get_string(o, {"lastTimestamp"}).empty() ? first : since(get_string(o, {"lastTimestamp"}));
  const JsonValue* c = find(o, {"count"});
  int64_t count = c && c->IsInt64() ? c->GetInt64() : 0;
  const JsonValue* series = find(o, {"series"});
  if (series != nullptr && series->IsObject()) {
    last = since(get_string(*series, {"lastObservedTime"}));
    const JsonValue* sc = find(*series, {"count"});
    count = sc && sc->IsInt64() ? sc->GetInt64() : 0;
  } else if (count == 0) {
    count = 1;  // singleton events of the new API have no count
  }
  std::string object = get_string(o, {"involvedObject", "kind"});
  for (char& ch : object) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  object += "/" + get_string(o, {"involvedObject", "name"});
  std::string component = or_else(get_string(o, {"source", "component"}), get_string(o, {"reportingComponent"}));
  std::string instance = or_else(get_string(o, {"source", "host"}), get_string(o, {"reportingInstance"}));
  std::string source = instance.empty() ? component : component + ", " + instance;
  std::string message = get_string(o, {"message"});
  size_t b = message.find_first_not_of(" \t\n\r"), e = message.find_last_not_of(" \t\n\r");
  message = b == std::string::npos ? "" : message.substr(b, e - b + 1);
  return {last, get_string(o, {"type"}), get_string(o, {"reason"}), object, get_string(o, {"involvedObject", "fieldPath"}),
          source, message, first, count, get_string(o, {"metadata", "name"})};
}

std::vector<Cell> cells(const ResourceInfo& r, const JsonValue& o, int64_t now) {
  const std::string& k = r.kind;
  std::string name = get_string(o, {"metadata", "name"});
  if (k == "ResourceClaim") return {name, claim_state(o), age(o, now)};
  if (k == "ResourceSlice") {
    return {name, or_none(get_string(o, {"spec", "nodeName"})), get_string(o, {"spec", "driver"}),
            get_string(o, {"spec", "pool", "name"}), age(o, now)};
  }
  if (k == "Pod") return pod_cells(o, now);
  if (k == "Node") return node_cells(o, now);
  if (k == "Namespace") return {name, get_string(o, {"status", "phase"}), age(o, now)};
  if (k == "Event") return event_cells(o, now);
  if (k == "Lease") return {name, or_none(get_string(o, {"spec", "holderIdentity"})), age(o, now)};
  if (k == "PriorityClass") {
    const JsonValue* v = find(o, {"value"});
    const JsonValue* gd = find(o, {"globalDefault"});
    std::string pp = get_string(o, {"preemptionPolicy"});
    return {name, v && v->IsInt64() ? v->GetInt64() : int64_t{0}, gd && gd->IsBool() && gd->GetBool() ? "true" : "false",
            age(o, now), pp.empty() ? "PreemptLowerPriority" : pp};
  }
  return {name, age(o, now)};
}

}  // namespace

std::string to_table(const ResourceInfo& r, const std::vector<const JsonValue*>& objects, const std::string& rv,
                     const std::string& continue_token, int64_t now, bool include_object) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("kind"); w.String("Table");
  w.Key("apiVersion"); w.String("meta.k8s.io/v1");
  w.Key("metadata");
  w.StartObject();
  w.Key("resourceVersion"); w.String(rv.c_str());
  if (!continue_token.empty()) { w.Key("continue"); w.String(continue_token.c_str()); }
  w.EndObject();
  w.Key("columnDefinitions");
  w.StartArray();
  for (const auto& c : columns(r)) {
    w.StartObject();
    w.Key("name"); w.String(c.name);
    w.Key("type"); w.String(c.type);
    w.Key("format"); w.String(c.format);
    w.Key("description"); w.String("");
    w.Key("priority"); w.Int(c.priority);
    w.EndObject();
  }
  w.EndArray();
  w.Key("rows");
  w.StartArray();
  for (const JsonValue* o : objects) {
    w.StartObject();
    w.Key("cells");
    w.StartArray();
    for (const Cell& c : cells(r, *o, now)) {
      if (std::holds_alternative<int64_t>(c)) w.Int64(std::get<int64_t>(c));
      else w.String(std::get<std::string>(c).c_str());
    }
    w.EndArray();
    if (include_object) {
      w.Key("object");
      o->Accept(w);
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace draplane::server
