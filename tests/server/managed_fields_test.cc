// Server-side apply field management: FieldsV1 sets, Update and Apply
// operations, conflicts, force, pruning, associative and atomic lists.
#include "server/managed_fields.h"

#include <gtest/gtest.h>

#include <thread>

namespace draplane::server::ssa {
namespace {

Json parse(const std::string& text) {
  auto j = parse_json(text);
  EXPECT_TRUE(j.has_value()) << text;
  return j.has_value() ? std::move(j).value() : Json();
}

const Schema& claims() { return schema_for("resource.k8s.io", "ResourceClaim"); }
const Schema& pods() { return schema_for("", "Pod"); }

Writer writer(const std::string& manager) { return Writer{manager, "resource.k8s.io/v1", ""}; }

// The FieldsV1 text of `manager_id`'s entry.
std::string fields_of(const Managers& m, const std::string& manager, const std::string& operation) {
  Manager probe;
  probe.manager = manager;
  probe.operation = operation;
  probe.api_version = operation == "Update" ? "resource.k8s.io/v1" : "";
  auto it = m.find(probe.id());
  return it == m.end() ? "<none>" : it->second.fields.to_fields_v1();
}

const char* kClaim = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",
  "metadata":{"name":"c","namespace":"default","labels":{"a":"1","b":"2"}},
  "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com"}}]}}})";

TEST(FieldSet, FieldsV1RoundTripAndOrder) {
  const std::string text =
      R"({"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},)"
      R"("f:image":{},"f:name":{}}}},"f:status":{"f:reservedFor":{"k:{\"uid\":\"u1\"}":{}}}})";
  auto set = FieldSet::from_fields_v1(parse(text));
  ASSERT_TRUE(set.has_value()) << set.error().message();
  EXPECT_EQ(set->to_fields_v1(), text);
  EXPECT_TRUE(set->has({PathElement::field("metadata"), PathElement::field("labels")}));
  EXPECT_FALSE(set->has({PathElement::field("metadata")}));

  FieldSet s;
  s.insert({PathElement::field("b")});
  s.insert({PathElement::field("a"), PathElement::value_of(parse(R"("x")"))});
  s.insert({PathElement::field("a"), PathElement::index_of(2)});
  s.insert({PathElement::field("a"), PathElement::field("z")});
  s.insert({PathElement::field("a"), PathElement::key_of(parse(R"({"port":80,"name":"n","x":1})"), {"port", "name"})});
  s.insert({PathElement::field("a")});
  // Fields, then keys, then values, then indexes; "." first for a member that is also a parent.
  EXPECT_EQ(s.to_fields_v1(),
            R"({"f:a":{".":{},"f:z":{},"k:{\"name\":\"n\",\"port\":80}":{},"v:\"x\"":{},"i:2":{}},"f:b":{}})");
  std::vector<std::string> paths;
  s.iterate([&](const Path& p) { paths.push_back(path_string(p)); });
  EXPECT_EQ(paths, (std::vector<std::string>{".a", ".b", ".a.z", R"(.a[name="n",port=80])", R"(.a[="x"])", ".a[2]"}));
}

TEST(FieldSet, SetAlgebra) {
  FieldSet a, b;
  Path ab{PathElement::field("a"), PathElement::field("b")};
  Path ac{PathElement::field("a"), PathElement::field("c")};
  Path a_{PathElement::field("a")};
  a.insert(ab);
  a.insert(ac);
  b.insert(ab);
  EXPECT_EQ(a.difference(b).to_fields_v1(), R"({"f:a":{"f:c":{}}})");
  EXPECT_EQ(a.intersection(b).to_fields_v1(), R"({"f:a":{"f:b":{}}})");
  FieldSet parent;
  parent.insert(a_);
  EXPECT_EQ(a.difference(parent).to_fields_v1(), a.to_fields_v1());  // parent - child = parent
  EXPECT_TRUE(a.recursive_difference(parent).empty());
  EXPECT_EQ(a.union_with(parent).to_fields_v1(), R"({"f:a":{".":{},"f:b":{},"f:c":{}}})");
}

TEST(ManagedFields, EncodeDecodeSortsAndValidates) {
  Json obj = parse(R"({"metadata":{"name":"x"}})");
  Managers m;
  Manager upd{"kubectl-label", "Update", "resource.k8s.io/v1", "", "2026-01-01T00:00:05Z", {}};
  upd.fields.insert({PathElement::field("metadata"), PathElement::field("labels"), PathElement::field("a")});
  Manager app{"kubectl", "Apply", "resource.k8s.io/v1", "", "2026-01-01T00:00:09Z", {}};
  app.fields.insert({PathElement::field("spec")});
  Manager st{"draplane", "Update", "resource.k8s.io/v1", "status", "2026-01-01T00:00:01Z", {}};
  st.fields.insert({PathElement::field("status"), PathElement::field("allocation")});
  for (auto* e : {&upd, &app, &st}) m[e->id()] = *e;
  EXPECT_EQ(st.id(), R"({"manager":"draplane","operation":"Update","apiVersion":"resource.k8s.io/v1","subresource":"status"})");
  EXPECT_EQ(app.id(), R"({"manager":"kubectl","operation":"Apply"})");
  encode_managed_fields(m, obj);
  EXPECT_EQ(to_string(*find(obj, {"metadata", "managedFields"})),
            R"([{"manager":"kubectl","operation":"Apply","apiVersion":"resource.k8s.io/v1","time":"2026-01-01T00:00:09Z",)"
            R"("fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}},)"
            R"({"manager":"draplane","operation":"Update","apiVersion":"resource.k8s.io/v1","time":"2026-01-01T00:00:01Z",)"
            R"("fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:allocation":{}}},"subresource":"status"},)"
            R"({"manager":"kubectl-label","operation":"Update","apiVersion":"resource.k8s.io/v1","time":"2026-01-01T00:00:05Z",)"
            R"("fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{"f:a":{}}}}}])");
  auto back = decode_managed_fields(find(obj, {"metadata", "managedFields"}));
  ASSERT_TRUE(back.has_value());
  ASSERT_EQ(back->size(), 3u);
  EXPECT_EQ(back->at(upd.id()).fields, upd.fields);
  EXPECT_EQ(back->at(st.id()).subresource, "status");

  encode_managed_fields({}, obj);
  EXPECT_EQ(find(obj, {"metadata", "managedFields"}), nullptr);
  for (const char* bad : {R"([{"manager":"m","operation":"Patch","apiVersion":"v1","fieldsType":"FieldsV1"}])",
                          R"([{"manager":"m","operation":"Update","fieldsType":"FieldsV1"}])",
                          R"([{"manager":"m","operation":"Update","apiVersion":"v1"}])",
                          R"([{"manager":"m","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"x:y":{}}}])"}) {
    SCOPED_TRACE(bad);
    Json j = parse(bad);
    EXPECT_FALSE(decode_managed_fields(&j).has_value());
  }
  Json reset = parse("[]"), reset1 = parse("[{}]"), keep = parse(R"([{"manager":"m"}])");
  EXPECT_TRUE(is_reset(&reset));
  EXPECT_TRUE(is_reset(&reset1));
  EXPECT_FALSE(is_reset(&keep));
}

TEST(ManagedFields, UpdateTakesChangedFields) {
  Json empty = parse(R"({"metadata":{},"spec":{}})");
  Json created = parse(kClaim);
  Managers m;
  record_update(claims(), empty, created, m, writer("kubectl-create"), Scope::kAllButStatus, "2026-01-01T00:00:00Z");
  EXPECT_EQ(fields_of(m, "kubectl-create", "Update"),
            R"({"f:metadata":{"f:labels":{".":{},"f:a":{},"f:b":{}}},"f:spec":{"f:devices":{".":{},"f:requests":{}}}})");
  // Another manager changes one label and adds one: it owns them now, the creator keeps the rest.
  Json labelled = parse(kClaim);
  set_string(*find(labelled, {"metadata", "labels"}), "b", "3", labelled.GetAllocator());
  set_string(*find(labelled, {"metadata", "labels"}), "c", "4", labelled.GetAllocator());
  record_update(claims(), created, labelled, m, writer("kubectl-label"), Scope::kAllButStatus, "2026-01-01T00:00:07Z");
  EXPECT_EQ(fields_of(m, "kubectl-create", "Update"),
            R"({"f:metadata":{"f:labels":{".":{},"f:a":{}}},"f:spec":{"f:devices":{".":{},"f:requests":{}}}})");
  EXPECT_EQ(fields_of(m, "kubectl-label", "Update"), R"({"f:metadata":{"f:labels":{"f:b":{},"f:c":{}}}})");
  EXPECT_EQ(m.begin()->second.time.empty(), false);
  // Removing a label drops it from its owner; a no-op update changes nothing (not even the time).
  Json removed = parse(kClaim);
  set_string(*find(removed, {"metadata", "labels"}), "b", "3", removed.GetAllocator());
  record_update(claims(), labelled, removed, m, writer("kubectl-label"), Scope::kAllButStatus, "2026-01-01T00:00:09Z");
  EXPECT_EQ(fields_of(m, "kubectl-label", "Update"), R"({"f:metadata":{"f:labels":{"f:b":{}}}})");
  Managers before = m;
  record_update(claims(), removed, removed, m, writer("other"), Scope::kAllButStatus, "2026-01-01T00:00:10Z");
  EXPECT_EQ(m.size(), before.size());
  for (const auto& [id, e] : m) EXPECT_EQ(e.time, before.at(id).time);
  // Status changes on the main resource are not owned (reset fields).
  Json with_status = parse(kClaim);
  Json status = parse(R"({"reservedFor":[{"resource":"pods","name":"p","uid":"u1"}]})");
  with_status.AddMember("status", JsonValue(status, with_status.GetAllocator()), with_status.GetAllocator());
  Managers s;
  record_update(claims(), created, with_status, s, writer("x"), Scope::kAllButStatus, "t");
  EXPECT_TRUE(s.empty());
  record_update(claims(), created, with_status, s, Writer{"sched", "resource.k8s.io/v1", "status"}, Scope::kStatusOnly, "t");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s.begin()->second.fields.to_fields_v1(),
            R"({"f:status":{".":{},"f:reservedFor":{".":{},"k:{\"uid\":\"u1\"}":{".":{},"f:name":{},"f:resource":{},"f:uid":{}}}}})");
}

TEST(ManagedFields, ApplyOwnsExactlyTheConfiguration) {
  Json empty(rapidjson::kObjectType);
  Json config = parse(kClaim);
  Managers m;
  auto r = apply(claims(), empty, config, m, writer("kubectl"), Scope::kAllButStatus, false, "2026-01-01T00:00:00Z");
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->conflicts.empty());
  EXPECT_TRUE(r->changed);
  EXPECT_EQ(to_string(r->object), to_string(config));
  // apiVersion, kind, metadata.name and namespace are never owned.
  EXPECT_EQ(fields_of(m, "kubectl", "Apply"),
            R"({"f:metadata":{"f:labels":{"f:a":{},"f:b":{}}},"f:spec":{"f:devices":{"f:requests":{}}}})");
  EXPECT_EQ(m.begin()->second.time, "2026-01-01T00:00:00Z");
  // Applying the same again: no change, the entry (and its time) stays.
  Json live = std::move(r->object);
  auto again = apply(claims(), live, config, m, writer("kubectl"), Scope::kAllButStatus, false, "2026-01-02T00:00:00Z");
  ASSERT_TRUE(again.has_value());
  EXPECT_FALSE(again->changed);
  EXPECT_EQ(m.begin()->second.time, "2026-01-01T00:00:00Z");
}

TEST(ManagedFields, ConflictsForceAndSharedOwnership) {
  Json live = parse(kClaim);
  Managers m;
  Json empty = parse(R"({"metadata":{},"spec":{"devices":{}}})");
  record_update(claims(), empty, live, m, writer("kubectl-create"), Scope::kAllButStatus, "2026-01-01T00:00:00Z");
  // Same values: shared ownership, no conflict.
  Json same = parse(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c","labels":{"a":"1"}}})");
  auto r = apply(claims(), live, same, m, writer("ci"), Scope::kAllButStatus, false, "t1");
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->conflicts.empty());
  EXPECT_FALSE(r->changed);
  EXPECT_EQ(fields_of(m, "ci", "Apply"), R"({"f:metadata":{"f:labels":{"f:a":{}}}})");
  EXPECT_NE(fields_of(m, "kubectl-create", "Update").find("f:a"), std::string::npos);
  Json ops = parse(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c","labels":{"b":"2"}}})");
  r = apply(claims(), live, ops, m, writer("ops"), Scope::kAllButStatus, false, "t1");
  ASSERT_TRUE(r.has_value() && r->conflicts.empty());
  // Different values: conflicts (the applier's own fields are none), nothing changes.
  Json change = parse(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c","labels":{"a":"9","b":"9"}},
    "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"other"}}]}}})");
  Managers before = m;
  r = apply(claims(), live, change, m, writer("ci"), Scope::kAllButStatus, false, "t2");
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->conflicts.size(), 4u);
  EXPECT_EQ(m.size(), before.size());
  EXPECT_EQ(fields_of(m, "ci", "Apply"), fields_of(before, "ci", "Apply"));
  EXPECT_EQ(conflict_message(r->conflicts),
            "Apply failed with 4 conflicts: conflicts with \"kubectl-create\" using resource.k8s.io/v1:\n"
            "- .metadata.labels.a\n- .metadata.labels.b\n- .spec.devices.requests\n"
            "conflicts with \"ops\":\n- .metadata.labels.b");
  std::vector<Conflict> one{r->conflicts[2]};
  EXPECT_EQ(conflict_message(one),
            "Apply failed with 1 conflict: conflict with \"kubectl-create\" using resource.k8s.io/v1: .spec.devices.requests");
  EXPECT_EQ(print_manager(R"({"manager":"sched","operation":"Update","apiVersion":"v1","subresource":"status"})"),
            R"("sched" with subresource "status" using v1)");
  // Force: the applier takes the fields from everyone.
  r = apply(claims(), live, change, m, writer("ci"), Scope::kAllButStatus, true, "t3");
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->conflicts.empty());
  EXPECT_EQ(get_string(r->object, {"metadata", "labels", "a"}), "9");
  // The creator keeps only the labels map itself (it added the map).
  EXPECT_EQ(fields_of(m, "kubectl-create", "Update"), R"({"f:metadata":{"f:labels":{}}})");
  EXPECT_EQ(fields_of(m, "ops", "Apply"), "<none>");
  EXPECT_EQ(fields_of(m, "ci", "Apply"),
            R"({"f:metadata":{"f:labels":{"f:a":{},"f:b":{}}},"f:spec":{"f:devices":{"f:requests":{}}}})");
}

TEST(ManagedFields, FieldsNoLongerAppliedAreRemovedUnlessOwnedElsewhere) {
  Json empty(rapidjson::kObjectType);
  Json config = parse(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c",
    "labels":{"a":"1","b":"2","c":"3"}}})");
  Managers m;
  auto r = apply(claims(), empty, config, m, writer("kubectl"), Scope::kAll, false, "t0");
  ASSERT_TRUE(r.has_value());
  Json live = std::move(r->object);
  // "other" co-owns b (same value), and an updater adds d.
  Json co = parse(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c","labels":{"b":"2"}}})");
  r = apply(claims(), live, co, m, writer("other"), Scope::kAll, false, "t1");
  ASSERT_TRUE(r.has_value() && r->conflicts.empty());
  Json with_d = parse(to_string(live));
  set_string(*find(with_d, {"metadata", "labels"}), "d", "4", with_d.GetAllocator());
  record_update(claims(), live, with_d, m, writer("kubectl-label"), Scope::kAll, "t2");
  // The applier drops a, b and c from its configuration: a and c go, b stays
  // (other owns it), d stays (never applied by kubectl).
  Json fewer = parse(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c","annotations":{"x":"y"}}})");
  r = apply(claims(), with_d, fewer, m, writer("kubectl"), Scope::kAll, false, "t3");
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->conflicts.empty());
  EXPECT_EQ(to_string(*find(r->object, {"metadata"})), R"({"name":"c","labels":{"b":"2","d":"4"},"annotations":{"x":"y"}})");
  // An applier that applies nothing any more loses its entry; emptied maps go.
  Json none = parse(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c"}})");
  Json live2 = std::move(r->object);
  r = apply(claims(), live2, none, m, writer("kubectl"), Scope::kAll, false, "t4");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(fields_of(m, "kubectl", "Apply"), "<none>");
  EXPECT_EQ(to_string(*find(r->object, {"metadata"})), R"({"name":"c","labels":{"b":"2","d":"4"}})");
}

TEST(ManagedFields, StructFieldsWithOwnedChildrenSurviveRemoval) {
  // kubectl's client-side upgrade leaves kubectl owning the labels map itself
  // (".") and a label; applying only the label keeps the map and the label.
  Json live = parse(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c","labels":{"app":"x"}}})");
  Json mf = parse(R"([{"manager":"kubectl","operation":"Apply","apiVersion":"resource.k8s.io/v1","fieldsType":"FieldsV1",
    "fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}}])");
  auto m = decode_managed_fields(&mf);
  ASSERT_TRUE(m.has_value());
  Json cfg = parse(to_string(live));
  auto r = apply(claims(), live, cfg, *m, writer("kubectl"), Scope::kAll, false, "t");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(get_string(r->object, {"metadata", "labels", "app"}), "x");
  EXPECT_EQ(m->begin()->second.fields.to_fields_v1(), R"({"f:metadata":{"f:labels":{"f:app":{}}}})");
}

TEST(ManagedFields, AssociativeListsMergeByKeyAtomicListsReplace) {
  // status.reservedFor is a map keyed by uid: two appliers own one entry each.
  auto status_writer = [](const std::string& m) { return Writer{m, "resource.k8s.io/v1", "status"}; };
  Json live = parse(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c"},
    "status":{"reservedFor":[{"resource":"pods","name":"p0","uid":"u0"}]}})");
  Managers m;
  auto cfg = [](const std::string& name, const std::string& uid) {
    return parse(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c"},
      "status":{"reservedFor":[{"resource":"pods","name":")" + name + R"(","uid":")" + uid + R"("}]}})");
  };
  auto r = apply(claims(), live, cfg("p1", "u1"), m, status_writer("a"), Scope::kStatusOnly, false, "t");
  ASSERT_TRUE(r.has_value());
  Json l1 = std::move(r->object);
  r = apply(claims(), l1, cfg("p2", "u2"), m, status_writer("b"), Scope::kStatusOnly, false, "t");
  ASSERT_TRUE(r.has_value());
  std::vector<std::string> uids;
  for (const auto& e : find(r->object, {"status", "reservedFor"})->GetArray()) uids.push_back(get_string(e, {"uid"}));
  EXPECT_EQ(uids, (std::vector<std::string>{"u0", "u1", "u2"}));
  Manager probe{"a", "Apply", "", "status", "", {}};
  EXPECT_EQ(m.at(probe.id()).fields.to_fields_v1(),
            R"({"f:status":{"f:reservedFor":{"k:{\"uid\":\"u1\"}":{".":{},"f:name":{},"f:resource":{},"f:uid":{}}}}})");
  // a withdraws its entry: only that one goes.
  Json l2 = std::move(r->object);
  Json none = parse(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c"}})");
  r = apply(claims(), l2, none, m, status_writer("a"), Scope::kStatusOnly, false, "t");
  ASSERT_TRUE(r.has_value());
  uids.clear();
  for (const auto& e : find(r->object, {"status", "reservedFor"})->GetArray()) uids.push_back(get_string(e, {"uid"}));
  EXPECT_EQ(uids, (std::vector<std::string>{"u0", "u2"}));
  // Duplicate keys in a configuration are refused.
  Json dup = parse(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c"},
    "status":{"reservedFor":[{"uid":"u9","name":"x"},{"uid":"u9","name":"y"}]}})");
  auto bad = apply(claims(), l2, dup, m, status_writer("c"), Scope::kStatusOnly, false, "t");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find(R"(duplicate entries for key [uid="u9"])"), std::string::npos);

  // spec.devices.requests is atomic: a configuration replaces the whole list.
  Json claim = parse(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c"},
    "spec":{"devices":{"requests":[{"name":"a","exactly":{"deviceClassName":"x"}},{"name":"b","exactly":{"deviceClassName":"y"}}]}}})");
  Managers m2;
  r = apply(claims(), Json(rapidjson::kObjectType), claim, m2, writer("k"), Scope::kAllButStatus, false, "t");
  ASSERT_TRUE(r.has_value());
  Json one = parse(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c"},
    "spec":{"devices":{"requests":[{"name":"b","exactly":{"deviceClassName":"z"}}]}}})");
  Json lc = std::move(r->object);
  r = apply(claims(), lc, one, m2, writer("k"), Scope::kAllButStatus, false, "t");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(to_string(*find(r->object, {"spec"})), R"({"devices":{"requests":[{"name":"b","exactly":{"deviceClassName":"z"}}]}})");
}

TEST(ManagedFields, ListMergeOrderAndContainers) {
  // Pod containers are keyed by name: items merge field by field, live order kept.
  Json live = parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[
    {"name":"a","image":"a:1"},{"name":"b","image":"b:1"},{"name":"c","image":"c:1"}]}})");
  Json cfg = parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[
    {"name":"b","image":"b:2","env":[{"name":"X","value":"1"}]},{"name":"x","image":"x:1"}]}})");
  Managers m;
  auto r = apply(pods(), live, cfg, m, Writer{"k", "v1", ""}, Scope::kAllButStatus, true, "t");
  ASSERT_TRUE(r.has_value());
  std::vector<std::string> names;
  for (const auto& c : find(r->object, {"spec", "containers"})->GetArray()) {
    names.push_back(get_string(c, {"name"}) + "=" + get_string(c, {"image"}));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"a=a:1", "b=b:2", "c=c:1", "x=x:1"}));
  EXPECT_EQ(m.begin()->second.fields.to_fields_v1(),
            R"({"f:spec":{"f:containers":{"k:{\"name\":\"b\"}":{".":{},"f:env":{"k:{\"name\":\"X\"}":{".":{},"f:name":{},)"
            R"("f:value":{}}},"f:image":{},"f:name":{}},"k:{\"name\":\"x\"}":{".":{},"f:image":{},"f:name":{}}}}})");
}

TEST(ManagedFields, KubectlUpgradesFromClientSideApply) {
  // Created by client-side apply: kubectl-client-side-apply owns everything and
  // the last-applied annotation records the configuration.
  const std::string last = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"labels":{"a":"1"},"name":"c"}})";
  Json live = parse(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c","labels":{"a":"1","z":"0"},
    "annotations":{}}})");
  set_string(*find(live, {"metadata", "annotations"}), "kubectl.kubernetes.io/last-applied-configuration", last,
             live.GetAllocator());
  Managers m;
  record_update(claims(), Json(rapidjson::kObjectType), live, m, writer("kubectl-client-side-apply"), Scope::kAll, "t0");
  Json cfg = parse(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c","labels":{"a":"2"}}})");
  // Another manager than kubectl gets the conflict.
  Managers copy = m;
  auto r = apply(claims(), live, cfg, copy, writer("ci"), Scope::kAll, false, "t1");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->conflicts.size(), 1u);
  // kubectl takes fields the annotation recorded; the annotation follows what it applied.
  r = apply(claims(), live, cfg, m, writer("kubectl"), Scope::kAll, false, "t1");
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->conflicts.empty());
  EXPECT_EQ(get_string(r->object, {"metadata", "labels", "a"}), "2");
  EXPECT_EQ(get_string(r->object, {"metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"}),
            R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"labels":{"a":"2"},"name":"c"}})"
            "\n");
  // A field the annotation does not record stays a conflict.
  Json cfg2 = parse(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c","labels":{"z":"9"}}})");
  r = apply(claims(), live, cfg2, m, writer("kubectl"), Scope::kAll, false, "t2");
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->conflicts.size(), 1u);
  EXPECT_EQ(path_string(r->conflicts[0].path), ".metadata.labels.z");
}

// The apply schema is the OpenAPI definitions' markers (k8s.io/api release-1.36),
// including those the former hand-written tables missed.
TEST(FieldSchema, FollowsTheUpstreamMarkers) {
  auto keys = [](const Schema& s, const std::string& path) {
    const NodeType& t = s.at(path);
    return t.kind == NodeKind::kAssociative ? t.keys : std::vector<std::string>{"<not associative>"};
  };
  EXPECT_EQ(keys(pods(), "spec.topologySpreadConstraints"),
            (std::vector<std::string>{"topologyKey", "whenUnsatisfiable"}));   // +listType=map
  EXPECT_EQ(pods().at("spec.nodeSelector").kind, NodeKind::kAtomic);           // +mapType=atomic
  EXPECT_EQ(pods().at("status.hostIPs").kind, NodeKind::kAtomic);              // +listType=atomic
  EXPECT_EQ(pods().at("spec.imagePullSecrets[]").kind, NodeKind::kAtomic);     // LocalObjectReference
  EXPECT_EQ(pods().at("status.resources.limits").kind, NodeKind::kMap);        // map[string]Quantity
  EXPECT_EQ(claims().at("metadata.ownerReferences[]").kind, NodeKind::kAtomic);  // +structType=atomic
  EXPECT_EQ(claims().at("status.allocation.nodeSelector").kind, NodeKind::kAtomic);
  EXPECT_EQ(claims().at("status.devices[].data").kind, NodeKind::kAtomic);  // RawExtension: untyped
  EXPECT_EQ(keys(claims(), "status.devices"), (std::vector<std::string>{"driver", "device", "pool", "shareID"}));
  EXPECT_EQ(claims().at("spec.devices.requests").kind, NodeKind::kAtomic);
  EXPECT_EQ(schema_for("events.k8s.io", "Event").at("regarding").kind, NodeKind::kAtomic);
  // A kind without a definition: its metadata's schema.
  EXPECT_EQ(schema_for("example.com", "Widget").at("metadata.labels").kind, NodeKind::kMap);
  EXPECT_EQ(schema_for("example.com", "Widget").at("spec.x").kind, NodeKind::kDefault);
}

TEST(FieldSchema, DerivedOncePerKindUnderConcurrentUse) {
  std::vector<const Schema*> seen(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&seen, i] { seen[i] = &schema_for("coordination.k8s.io", "Lease"); });
  }
  for (auto& t : threads) t.join();
  for (const Schema* s : seen) EXPECT_EQ(s, seen[0]);
  EXPECT_EQ(seen[0]->at("metadata.finalizers").kind, NodeKind::kSet);
}

TEST(ManagedFields, ManagerFromUserAgent) {
  EXPECT_EQ(manager_from_user_agent("kubectl/v1.32.4 (linux/amd64) kubernetes/abc"), "kubectl");
  EXPECT_EQ(manager_from_user_agent("OpenAPI-Generator/31.0.0/python"), "OpenAPI-Generator");
  EXPECT_EQ(manager_from_user_agent(""), "");
  EXPECT_EQ(manager_from_user_agent(std::string(200, 'x')).size(), 128u);
}

}  // namespace
}  // namespace draplane::server::ssa
