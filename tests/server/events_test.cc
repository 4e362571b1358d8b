// Events: one stored Event served as core/v1 and events.k8s.io/v1 (field
// mapping, validation of each version, field selectors, Table) and their TTL.
#include <gtest/gtest.h>

#include "server/api_server.h"
#include "server/event_ttl.h"
#include "server/json_util.h"
#include "store/memory_store.h"

namespace draplane::server {
namespace {

const char* kCore = "/api/v1/namespaces/default/events";
const char* kV1 = "/apis/events.k8s.io/v1/namespaces/default/events";

// As the kubelet (client-go tools/record) writes one through core/v1.
const char* kKubeletEvent = R"({"apiVersion":"v1","kind":"Event",
  "metadata":{"name":"p1.17f0a","namespace":"default"},
  "involvedObject":{"kind":"Pod","namespace":"default","name":"p1","uid":"pod-uid-1","apiVersion":"v1",
                    "fieldPath":"spec.containers{main}"},
  "reason":"Started","message":"Started container main","source":{"component":"kubelet","host":"node-a"},
  "firstTimestamp":"2026-01-01T00:00:00Z","lastTimestamp":"2026-01-01T00:00:05Z","count":3,"type":"Normal",
  "eventTime":null,"reportingComponent":"kubelet","reportingInstance":"node-a"})";

// As kube-scheduler (client-go tools/events) writes one through events.k8s.io/v1.
const char* kSchedulerEvent = R"({"apiVersion":"events.k8s.io/v1","kind":"Event",
  "metadata":{"name":"p2.17f0b","namespace":"default"},
  "eventTime":"2026-01-01T00:00:00.123456Z","reportingController":"default-scheduler",
  "reportingInstance":"default-scheduler-host","action":"Scheduling","reason":"FailedScheduling",
  "regarding":{"kind":"Pod","namespace":"default","name":"p2","uid":"pod-uid-2","apiVersion":"v1"},
  "note":"0/3 nodes are available: 3 cannot allocate all claims.","type":"Warning"})";

class EventsTest : public ::testing::Test {
 protected:
  EventsTest() {
    store_ = store::new_memory_store();
    ApiServerOptions o;
    o.clock = clock_;
    o.new_uid = [this] { return "uid-" + std::to_string(++uids_); };
    o.random_suffix = [] { return "xyz12"; };
    api_ = std::make_unique<ApiServer>(*store_, o);
    EXPECT_TRUE(api_->bootstrap().ok());
  }
  Response call(const std::string& method, const std::string& target, const std::string& body = "",
                const std::string& content_type = "application/json", const std::string& accept = "application/json") {
    Request r;
    r.method = method;
    size_t qm = target.find('?');
    r.path = target.substr(0, qm);
    if (qm != std::string::npos) {
      std::string qs = target.substr(qm + 1);
      size_t start = 0;
      while (start < qs.size()) {
        size_t amp = qs.find('&', start);
        std::string kv = qs.substr(start, amp == std::string::npos ? std::string::npos : amp - start);
        size_t eq = kv.find('=');
        r.query[kv.substr(0, eq)] = eq == std::string::npos ? "" : kv.substr(eq + 1);
        if (amp == std::string::npos) break;
        start = amp + 1;
      }
    }
    r.body = body;
    r.content_type = content_type;
    r.accept = accept;
    r.identity = {"admin", true, ""};
    return api_->handle(r).response;
  }
  static Json json(const Response& r) {
    auto j = parse_json(r.body);
    EXPECT_TRUE(j.has_value()) << r.body;
    return j.has_value() ? std::move(j).value() : Json();
  }
  static int64_t int_at(const JsonValue& o, std::initializer_list<std::string_view> path) {
    const JsonValue* v = find(o, path);
    return v && v->IsInt64() ? v->GetInt64() : -1;
  }
  std::vector<std::string> names(const std::string& target) {
    Response r = call("GET", target);
    EXPECT_EQ(r.code, 200) << target << ": " << r.body;
    std::vector<std::string> out;
    Json l = json(r);
    if (const JsonValue* items = find(l, {"items"})) {
      for (const auto& i : items->GetArray()) out.push_back(get_string(i, {"metadata", "name"}));
    }
    return out;
  }

  std::shared_ptr<common::FakeClock> clock_ = std::make_shared<common::FakeClock>();  // 2026-01-01T00:00:00Z
  int uids_ = 0;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<ApiServer> api_;
};

TEST_F(EventsTest, CoreEventIsServedAsEventsV1) {
  ASSERT_EQ(call("POST", kCore, kKubeletEvent).code, 201);
  Response r = call("GET", std::string(kV1) + "/p1.17f0a");
  ASSERT_EQ(r.code, 200) << r.body;
  Json e = json(r);
  EXPECT_EQ(get_string(e, {"apiVersion"}), "events.k8s.io/v1");
  EXPECT_EQ(get_string(e, {"kind"}), "Event");
  EXPECT_EQ(get_string(e, {"regarding", "name"}), "p1");
  EXPECT_EQ(get_string(e, {"regarding", "fieldPath"}), "spec.containers{main}");
  EXPECT_EQ(get_string(e, {"note"}), "Started container main");
  EXPECT_EQ(get_string(e, {"reportingController"}), "kubelet");
  EXPECT_EQ(get_string(e, {"reportingInstance"}), "node-a");
  EXPECT_EQ(get_string(e, {"deprecatedSource", "component"}), "kubelet");
  EXPECT_EQ(get_string(e, {"deprecatedSource", "host"}), "node-a");
  EXPECT_EQ(get_string(e, {"deprecatedFirstTimestamp"}), "2026-01-01T00:00:00Z");
  EXPECT_EQ(get_string(e, {"deprecatedLastTimestamp"}), "2026-01-01T00:00:05Z");
  EXPECT_EQ(int_at(e, {"deprecatedCount"}), 3);
  for (const char* core_only : {"involvedObject", "message", "source", "firstTimestamp", "lastTimestamp", "count",
                                "reportingComponent"}) {
    EXPECT_EQ(find(e, {core_only}), nullptr) << core_only;
  }
  ASSERT_NE(find(e, {"eventTime"}), nullptr);
  EXPECT_TRUE(find(e, {"eventTime"})->IsNull());
  EXPECT_EQ(get_string(e, {"metadata", "uid"}), get_string(json(call("GET", std::string(kCore) + "/p1.17f0a")),
                                                           {"metadata", "uid"}));
  EXPECT_EQ(names(kV1), (std::vector<std::string>{"p1.17f0a"}));
}

TEST_F(EventsTest, EventsV1EventIsServedAsCore) {
  Response c = call("POST", kV1, kSchedulerEvent);
  ASSERT_EQ(c.code, 201) << c.body;
  EXPECT_EQ(get_string(json(c), {"apiVersion"}), "events.k8s.io/v1");
  EXPECT_EQ(get_string(json(c), {"note"}), "0/3 nodes are available: 3 cannot allocate all claims.");
  Response r = call("GET", std::string(kCore) + "/p2.17f0b");
  ASSERT_EQ(r.code, 200) << r.body;
  Json e = json(r);
  EXPECT_EQ(get_string(e, {"apiVersion"}), "v1");
  EXPECT_EQ(get_string(e, {"involvedObject", "uid"}), "pod-uid-2");
  EXPECT_EQ(get_string(e, {"message"}), "0/3 nodes are available: 3 cannot allocate all claims.");
  EXPECT_EQ(get_string(e, {"reportingComponent"}), "default-scheduler");
  EXPECT_EQ(get_string(e, {"reportingInstance"}), "default-scheduler-host");
  EXPECT_EQ(get_string(e, {"action"}), "Scheduling");
  EXPECT_EQ(get_string(e, {"eventTime"}), "2026-01-01T00:00:00.123456Z");
  EXPECT_EQ(find(e, {"count"}), nullptr);
  ASSERT_NE(find(e, {"source"}), nullptr);
  EXPECT_TRUE(find(e, {"source"})->IsObject() && find(e, {"source"})->MemberCount() == 0);
  EXPECT_TRUE(find(e, {"firstTimestamp"}) && find(e, {"firstTimestamp"})->IsNull());
  for (const char* v1_only : {"regarding", "note", "reportingController", "deprecatedSource"}) {
    EXPECT_EQ(find(e, {v1_only}), nullptr) << v1_only;
  }

  // A repeat as tools/events writes it: the series, through a merge patch.
  Response p = call("PATCH", std::string(kV1) + "/p2.17f0b",
                    R"({"series":{"count":2,"lastObservedTime":"2026-01-01T00:01:00.000000Z"}})",
                    "application/merge-patch+json");
  ASSERT_EQ(p.code, 200) << p.body;
  Json after = json(call("GET", std::string(kCore) + "/p2.17f0b"));
  EXPECT_EQ(int_at(after, {"series", "count"}), 2);
  EXPECT_EQ(get_string(after, {"series", "lastObservedTime"}), "2026-01-01T00:01:00.000000Z");
  EXPECT_EQ(get_string(after, {"message"}), "0/3 nodes are available: 3 cannot allocate all claims.");
}

TEST_F(EventsTest, EventsV1ValidatesAsKubeApiserver) {
  struct Case {
    std::string name, edit, want;
  };
  const std::vector<Case> cases = {
      {"no eventTime", R"({"eventTime":null})", "eventTime: Required value"},
      {"no reportingController", R"({"reportingController":null})", "reportingController: Required value"},
      {"no action", R"({"action":null})", "action: Required value"},
      {"bad type", R"({"type":"Bad"})", "type: Invalid value: \"\": has invalid value: Bad"},
      {"deprecated count", R"({"deprecatedCount":2})", "deprecatedCount: Invalid value: \"\": needs to be unset"},
      {"deprecated source", R"({"deprecatedSource":{"component":"x"}})",
       "deprecatedSource: Invalid value: \"\": needs to be unset"},
      {"series of one", R"({"series":{"count":1,"lastObservedTime":"2026-01-01T00:00:00.000000Z"}})",
       "series.count: Invalid value: \"\": should be at least 2"},
  };
  for (const auto& c : cases) {
    auto body = parse_json(kSchedulerEvent);
    ASSERT_TRUE(body.has_value());
    auto edit = parse_json(c.edit);
    ASSERT_TRUE(edit.has_value());
    merge_patch(*body, *edit, body->GetAllocator());
    Response r = call("POST", kV1, to_string(*body));
    EXPECT_EQ(r.code, 422) << c.name << ": " << r.body;
    EXPECT_NE(get_string(json(r), {"message"}).find(c.want), std::string::npos) << c.name << ": " << r.body;
  }
  // The note of an events.k8s.io/v1 event cannot change (only its series);
  // ValidateEventUpdate names it by its core field.
  ASSERT_EQ(call("POST", kV1, kSchedulerEvent).code, 201);
  Response p = call("PATCH", std::string(kV1) + "/p2.17f0b", R"({"note":"other"})", "application/merge-patch+json");
  EXPECT_EQ(p.code, 422) << p.body;
  EXPECT_NE(get_string(json(p), {"message"}).find("message: Invalid value: \"other\": field is immutable"), std::string::npos)
      << p.body;
  // Through core/v1 (legacy validation only) an old-style event must be in its object's namespace.
  auto other = parse_json(kKubeletEvent);
  ASSERT_TRUE(other.has_value());
  set_string(*find(*other, {"involvedObject"}), "namespace", "kube-system", other->GetAllocator());
  Response w = call("POST", kCore, to_string(*other));
  EXPECT_EQ(w.code, 422) << w.body;
  EXPECT_NE(get_string(json(w), {"message"}).find("involvedObject.namespace: Invalid value: \"kube-system\": does "
                                                  "not match event.namespace"),
            std::string::npos)
      << w.body;
}

TEST_F(EventsTest, FieldSelectorsOfBothVersions) {
  ASSERT_EQ(call("POST", kCore, kKubeletEvent).code, 201);
  ASSERT_EQ(call("POST", kV1, kSchedulerEvent).code, 201);
  auto core = [&](const std::string& sel) { return names(std::string(kCore) + "?fieldSelector=" + sel); };
  auto v1 = [&](const std::string& sel) { return names(std::string(kV1) + "?fieldSelector=" + sel); };
  using V = std::vector<std::string>;
  // What kubectl describe pod asks for.
  EXPECT_EQ(core("involvedObject.name=p2,involvedObject.namespace=default,involvedObject.kind=Pod,"
                 "involvedObject.uid=pod-uid-2"),
            V{"p2.17f0b"});
  EXPECT_EQ(core("involvedObject.apiVersion=v1"), (V{"p1.17f0a", "p2.17f0b"}));
  EXPECT_EQ(core("involvedObject.fieldPath=spec.containers{main}"), V{"p1.17f0a"});
  EXPECT_EQ(core("involvedObject.resourceVersion="), (V{"p1.17f0a", "p2.17f0b"}));
  EXPECT_EQ(core("reason=FailedScheduling"), V{"p2.17f0b"});
  EXPECT_EQ(core("type!=Normal"), V{"p2.17f0b"});
  EXPECT_EQ(core("reportingComponent=default-scheduler"), V{"p2.17f0b"});
  EXPECT_EQ(core("source=kubelet"), V{"p1.17f0a"});
  // No source: the reporting controller stands in.
  EXPECT_EQ(core("source=default-scheduler"), V{"p2.17f0b"});
  EXPECT_EQ(core("metadata.name=p1.17f0a"), V{"p1.17f0a"});
  // events.k8s.io/v1 names them after its own fields.
  EXPECT_EQ(v1("regarding.name=p1"), V{"p1.17f0a"});
  EXPECT_EQ(v1("regarding.uid=pod-uid-2,reportingController=default-scheduler"), V{"p2.17f0b"});
  EXPECT_EQ(v1("regarding.fieldPath=spec.containers{main},type=Normal"), V{"p1.17f0a"});
  // Each version refuses the other's names, as kube-apiserver's label conversions do.
  for (auto [target, sel] : std::vector<std::pair<std::string, std::string>>{
           {kCore, "regarding.name"}, {kCore, "involvedObject.foo"}, {kCore, "note"},
           {kV1, "involvedObject.name"}, {kV1, "reportingComponent"}, {kV1, "note"}}) {
    Response r = call("GET", target + "?fieldSelector=" + sel + "=x");
    EXPECT_EQ(r.code, 400) << target << " " << sel;
    EXPECT_EQ(get_string(json(r), {"message"}), "field label not supported: " + sel);
  }
}

TEST_F(EventsTest, TableShowsEitherVersionAsKubectlGetEvents) {
  ASSERT_EQ(call("POST", kCore, kKubeletEvent).code, 201);
  ASSERT_EQ(call("POST", kV1, kSchedulerEvent).code, 201);
  clock_->advance(std::chrono::seconds(120));
  for (const char* target : {kCore, kV1}) {
    Response r = call("GET", target, "", "application/json", "application/json;as=Table;v=v1;g=meta.k8s.io");
    ASSERT_EQ(r.code, 200) << r.body;
    Json t = json(r);
    const JsonValue& rows = *find(t, {"rows"});
    ASSERT_EQ(rows.Size(), 2u) << target;
    std::vector<std::string> row0, row1;
    for (const auto& c : rows[0]["cells"].GetArray()) row0.push_back(c.IsString() ? c.GetString() : std::to_string(c.GetInt64()));
    for (const auto& c : rows[1]["cells"].GetArray()) row1.push_back(c.IsString() ? c.GetString() : std::to_string(c.GetInt64()));
    // Last Seen, Type, Reason, Object, Subobject, Source, Message, First Seen, Count, Name.
    EXPECT_EQ(row0, (std::vector<std::string>{"115s", "Normal", "Started", "pod/p1", "spec.containers{main}",
                                              "kubelet, node-a", "Started container main", "2m", "3", "p1.17f0a"}))
        << target;
    EXPECT_EQ(row1, (std::vector<std::string>{"2m", "Warning", "FailedScheduling", "pod/p2", "",
                                              "default-scheduler, default-scheduler-host",
                                              "0/3 nodes are available: 3 cannot allocate all claims.", "2m", "1",
                                              "p2.17f0b"}))
        << target;
  }
}

// Times with a UTC offset name the same instant as their "Z" form (they were
// read as if in UTC, two hours late, and the table said "<invalid>").
TEST_F(EventsTest, TableAgesReadTimesWithAnOffset) {
  std::string event = kKubeletEvent;
  for (auto [from, to] : {std::pair<std::string, std::string>{"2026-01-01T00:00:00Z", "2026-01-01T02:00:00+02:00"},
                          {"2026-01-01T00:00:05Z", "2026-01-01T02:00:05+02:00"}}) {
    event.replace(event.find(from), from.size(), to);
  }
  ASSERT_EQ(call("POST", kCore, event).code, 201);
  clock_->advance(std::chrono::seconds(120));
  Response r = call("GET", kCore, "", "application/json", "application/json;as=Table;v=v1;g=meta.k8s.io");
  ASSERT_EQ(r.code, 200) << r.body;
  Json t = json(r);
  const JsonValue& cells = (*find(t, {"rows"}))[0]["cells"];
  EXPECT_EQ(std::string(cells[0].GetString()), "115s");  // Last Seen
  EXPECT_EQ(std::string(cells[7].GetString()), "2m");    // First Seen
}

TEST_F(EventsTest, EventsExpireTtlAfterTheirLastWrite) {
  EventTtl ttl(*store_, 3600, clock_);
  ASSERT_EQ(call("POST", kCore, kKubeletEvent).code, 201);
  ASSERT_EQ(call("POST", kV1, kSchedulerEvent).code, 201);
  EXPECT_EQ(ttl.sweep(), 0u);
  clock_->advance(std::chrono::seconds(1800));
  // A repeat (a write) renews p2's lease, as kube-apiserver's per-write lease does.
  ASSERT_EQ(call("PATCH", std::string(kV1) + "/p2.17f0b",
                 R"({"series":{"count":2,"lastObservedTime":"2026-01-01T00:30:00.000000Z"}})",
                 "application/merge-patch+json")
                .code,
            200);
  EXPECT_EQ(ttl.sweep(), 0u);
  clock_->advance(std::chrono::seconds(1799));
  EXPECT_EQ(ttl.sweep(), 0u);
  EXPECT_EQ(names(kCore), (std::vector<std::string>{"p1.17f0a", "p2.17f0b"}));
  clock_->advance(std::chrono::seconds(1));  // p1: an hour since its write
  EXPECT_EQ(ttl.sweep(), 1u);
  EXPECT_EQ(names(kCore), (std::vector<std::string>{"p2.17f0b"}));
  EXPECT_EQ(call("GET", std::string(kV1) + "/p1.17f0a").code, 404);
  clock_->advance(std::chrono::seconds(1800));
  EXPECT_EQ(ttl.sweep(), 1u);
  EXPECT_TRUE(names(kV1).empty());
  // Other resources are untouched.
  EXPECT_EQ(call("GET", "/api/v1/namespaces/default").code, 200);
}

TEST_F(EventsTest, EventsStoredBeforeStartCountFromTheirOwnTime) {
  ASSERT_EQ(call("POST", kCore, kKubeletEvent).code, 201);  // lastTimestamp 00:00:05
  clock_->advance(std::chrono::seconds(3600));
  // A server started now: its first sweep reads the event's own timestamps.
  EventTtl ttl(*store_, 3600, clock_);
  EXPECT_EQ(ttl.sweep(), 0u);
  clock_->advance(std::chrono::seconds(5));
  EXPECT_EQ(ttl.sweep(), 1u);
}

}  // namespace
}  // namespace draplane::server
