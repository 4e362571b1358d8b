#include "server/managed_fields.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <ctime>
#include <set>

#include "api/field_error.h"
#include "common/rfc3339.h"

namespace draplane::server::ssa {
namespace {

constexpr std::string_view kLastApplied = "kubectl.kubernetes.io/last-applied-configuration";

std::string_view sv(const JsonValue& s) { return std::string_view(s.GetString(), s.GetStringLength()); }

// ---------------------------------------------------------------- shapes

enum class Shape { kLeaf, kStruct, kMap, kList };

// How a value at schema path `sp` is walked: granular containers are walked
// into, everything else (scalars, null, atomic maps and lists) is one leaf.
Shape shape_of(const Schema& schema, const std::string& sp, const JsonValue& v, const NodeType** type) {
  const NodeType& t = schema.at(sp);
  if (type) *type = &t;
  if (v.IsObject()) {
    if (t.kind == NodeKind::kAtomic) return Shape::kLeaf;
    return t.kind == NodeKind::kMap ? Shape::kMap : Shape::kStruct;
  }
  if (v.IsArray()) {
    return t.kind == NodeKind::kSet || t.kind == NodeKind::kAssociative ? Shape::kList : Shape::kLeaf;
  }
  return Shape::kLeaf;
}

bool empty_container(const JsonValue* v) {
  return v == nullptr || v->IsNull() || (v->IsObject() && v->ObjectEmpty()) || (v->IsArray() && v->Empty());
}

std::string child_sp(const std::string& sp, Shape shape, std::string_view key) {
  return shape == Shape::kMap ? entry_path(sp) : field_path(sp, key);
}

// metadata.managedFields is never part of the walks.
bool skipped(const std::string& sp, std::string_view key) { return sp == "metadata" && key == "managedFields"; }

PathElement item_element(const NodeType& t, const JsonValue& item) {
  return t.kind == NodeKind::kAssociative ? PathElement::key_of(item, t.keys) : PathElement::value_of(item);
}

// ---------------------------------------------------------------- field sets

void to_set(const Schema& schema, const std::string& sp, Path& path, const JsonValue& v, FieldSet& out,
            Status& error) {
  const NodeType* t = nullptr;
  Shape shape = shape_of(schema, sp, v, &t);
  switch (shape) {
    case Shape::kLeaf:
      out.insert(path);
      return;
    case Shape::kStruct:
    case Shape::kMap:
      for (const auto& m : v.GetObject()) {
        std::string_view key = sv(m.name);
        if (skipped(sp, key)) continue;
        path.push_back(PathElement::field(std::string(key)));
        to_set(schema, child_sp(sp, shape, key), path, m.value, out, error);
        // Entries of maps, and null or empty struct fields, are members themselves.
        if (shape == Shape::kMap || m.value.IsNull() || (m.value.IsObject() && m.value.ObjectEmpty())) out.insert(path);
        path.pop_back();
      }
      return;
    case Shape::kList: {
      std::string isp = item_path(sp);
      std::vector<PathElement> pes;
      for (const auto& item : v.GetArray()) pes.push_back(item_element(*t, item));
      for (size_t i = 0; i < pes.size(); ++i) {
        bool dup = false;
        for (size_t j = 0; j < pes.size() && !dup; ++j) dup = j != i && pes[j] == pes[i];
        path.push_back(pes[i]);
        if (dup) {
          // Duplicated items are owned as a whole (structured-merge-diff does the same).
          out.insert(path);
          if (error.ok()) error = Status(Code::kBadRequest, path_string(path) + ": duplicate entries for key " + pes[i].to_string());
        } else {
          to_set(schema, isp, path, v[static_cast<rapidjson::SizeType>(i)], out, error);
          out.insert(path);
        }
        path.pop_back();
      }
      return;
    }
  }
}

FieldSet field_set(const Schema& schema, const JsonValue& v, Status* duplicates = nullptr) {
  FieldSet out;
  Path path;
  Status error;
  if (v.IsObject()) to_set(schema, "", path, v, out, error);
  if (duplicates) *duplicates = error;
  return out;
}

// ---------------------------------------------------------------- compare

struct Comparison {
  FieldSet added, modified, removed;
};

void compare(const Schema& schema, const std::string& sp, Path& path, const JsonValue* lhs, const JsonValue* rhs,
             Comparison& out);

void compare_leaf(const Path& path, const JsonValue* lhs, const JsonValue* rhs, Comparison& out) {
  if (lhs == nullptr) out.added.insert(path);
  else if (rhs == nullptr) out.removed.insert(path);
  else if (*lhs != *rhs) out.modified.insert(path);
}

void compare_lists(const Schema& schema, const std::string& sp, const NodeType& t, Path& path, const JsonValue* lhs,
                   const JsonValue* rhs, Comparison& out) {
  std::string isp = item_path(sp);
  std::vector<PathElement> order;
  std::map<PathElement, std::vector<const JsonValue*>> lv, rv;
  if (lhs && lhs->IsArray()) {
    for (const auto& item : lhs->GetArray()) {
      PathElement pe = item_element(t, item);
      auto& l = lv[pe];
      if (l.empty()) order.push_back(pe);
      l.push_back(&item);
    }
  }
  if (rhs && rhs->IsArray()) {
    for (const auto& item : rhs->GetArray()) {
      PathElement pe = item_element(t, item);
      auto& r = rv[pe];
      if (r.empty() && !lv.count(pe)) order.push_back(pe);
      r.push_back(&item);
    }
  }
  for (const auto& pe : order) {
    const auto& l = lv[pe];
    const auto& r = rv[pe];
    path.push_back(pe);
    if (l.size() <= 1 && r.size() <= 1) {
      compare(schema, isp, path, l.empty() ? nullptr : l[0], r.empty() ? nullptr : r[0], out);
    } else if (l.size() >= 2 && r.size() >= 2) {
      bool same = l.size() == r.size();
      for (size_t i = 0; same && i < l.size(); ++i) same = *l[i] == *r[i];
      if (!same) out.modified.insert(path);
    } else if (l.size() >= 2) {
      out.removed.insert(path);
    } else {
      out.added.insert(path);
    }
    path.pop_back();
  }
}

void compare(const Schema& schema, const std::string& sp, Path& path, const JsonValue* lhs, const JsonValue* rhs,
             Comparison& out) {
  const NodeType* t = nullptr;
  const JsonValue& any = lhs ? *lhs : *rhs;
  Shape shape = shape_of(schema, sp, any, &t);
  if (lhs && rhs && shape_of(schema, sp, *rhs, nullptr) != shape) shape = Shape::kLeaf;
  // Containers empty on both sides are compared as leaves.
  if (shape != Shape::kLeaf && empty_container(lhs) && empty_container(rhs)) shape = Shape::kLeaf;
  if (shape == Shape::kLeaf) {
    compare_leaf(path, lhs, rhs, out);
    return;
  }
  if (shape == Shape::kList) {
    compare_lists(schema, sp, *t, path, lhs, rhs, out);
  } else {
    auto visit = [&](std::string_view key, const JsonValue* l, const JsonValue* r) {
      if (skipped(sp, key)) return;
      path.push_back(PathElement::field(std::string(key)));
      compare(schema, child_sp(sp, shape, key), path, l, r, out);
      path.pop_back();
    };
    if (lhs && lhs->IsObject()) {
      for (const auto& m : lhs->GetObject()) {
        const JsonValue* r = nullptr;
        if (rhs && rhs->IsObject()) {
          auto it = rhs->FindMember(m.name);
          if (it != rhs->MemberEnd()) r = &it->value;
        }
        visit(sv(m.name), &m.value, r);
      }
    }
    if (rhs && rhs->IsObject()) {
      for (const auto& m : rhs->GetObject()) {
        if (lhs && lhs->IsObject() && lhs->HasMember(m.name)) continue;
        visit(sv(m.name), nullptr, &m.value);
      }
    }
  }
  if (!path.empty()) {
    if (lhs == nullptr) out.added.insert(path);
    else if (rhs == nullptr) out.removed.insert(path);
  }
}

Comparison compare_objects(const Schema& schema, const JsonValue& lhs, const JsonValue& rhs) {
  Comparison out;
  Path path;
  compare(schema, "", path, &lhs, &rhs, out);
  return out;
}

// ---------------------------------------------------------------- merge

JsonValue merge(const Schema& schema, const std::string& sp, const JsonValue* lhs, const JsonValue* rhs, JsonAlloc& a,
                Status& error);

JsonValue merge_lists(const Schema& schema, const std::string& sp, const NodeType& t, const JsonValue* lhs,
                      const JsonValue* rhs, JsonAlloc& a, Status& error) {
  // structured-merge-diff's ordering: items of the live list stay in place;
  // items also in the configuration follow the configuration's order.
  std::string isp = item_path(sp);
  std::vector<PathElement> lpes, rpes;
  std::map<PathElement, const JsonValue*> lobs, robs;  // nullptr: duplicated in lhs
  std::vector<const JsonValue*> litems;
  if (lhs && lhs->IsArray()) {
    for (const auto& item : lhs->GetArray()) {
      PathElement pe = item_element(t, item);
      auto it = lobs.find(pe);
      if (it == lobs.end()) lobs.emplace(pe, &item);
      else it->second = nullptr;
      lpes.push_back(pe);
      litems.push_back(&item);
    }
  }
  if (rhs && rhs->IsArray()) {
    for (const auto& item : rhs->GetArray()) {
      PathElement pe = item_element(t, item);
      if (robs.count(pe)) {
        if (error.ok()) error = Status(Code::kBadRequest, "duplicate entries for key " + pe.to_string());
        continue;
      }
      robs.emplace(pe, &item);
      rpes.push_back(pe);
    }
  }
  std::vector<const PathElement*> shared;
  for (const auto& pe : rpes) {
    if (lobs.count(pe)) shared.push_back(&pe);
  }
  size_t next_shared_i = 0;
  const PathElement* next_shared = shared.empty() ? nullptr : shared[next_shared_i++];
  auto advance_shared = [&] { next_shared = next_shared_i < shared.size() ? shared[next_shared_i++] : nullptr; };
  JsonValue out(rapidjson::kArrayType);
  std::set<PathElement> merged_rhs;
  auto lget = [&](const PathElement& pe) -> const JsonValue* {
    auto it = lobs.find(pe);
    return it == lobs.end() ? nullptr : it->second;
  };
  auto push = [&](const JsonValue* l, const JsonValue* r) {
    if (l == nullptr && r == nullptr) return;
    out.PushBack(merge(schema, isp, l, r, a, error), a);
  };
  size_t li = 0, ri = 0;
  while (li < lpes.size() || ri < rpes.size()) {
    if (li < lpes.size() && ri < rpes.size()) {
      const PathElement& pe = lpes[li];
      if (pe == rpes[ri]) {
        merged_rhs.insert(pe);
        push(lget(pe), robs[pe]);
        ++li;
        ++ri;
        advance_shared();
        continue;
      }
      if (robs.count(pe) && next_shared != nullptr && !(*next_shared == pe)) {
        ++li;
        continue;
      }
    }
    if (li < lpes.size()) {
      const PathElement& pe = lpes[li];
      if (!robs.count(pe)) {
        push(litems[li], nullptr);
        ++li;
        continue;
      } else if (merged_rhs.count(pe)) {
        ++li;
      }
    }
    if (ri < rpes.size()) {
      const PathElement& pe = rpes[ri];
      merged_rhs.insert(pe);
      push(lget(pe), robs[pe]);
      ++ri;
      if (next_shared != nullptr && *next_shared == pe) advance_shared();
    }
  }
  return out;
}

JsonValue merge(const Schema& schema, const std::string& sp, const JsonValue* lhs, const JsonValue* rhs, JsonAlloc& a,
                Status& error) {
  if (rhs == nullptr) return JsonValue(*lhs, a);
  if (lhs == nullptr) return JsonValue(*rhs, a);
  const NodeType* t = nullptr;
  Shape shape = shape_of(schema, sp, *lhs, &t);
  // null applied to a granular container leaves it as it is (a null map is an empty map).
  if (shape != Shape::kLeaf && rhs->IsNull()) return JsonValue(*lhs, a);
  if (shape_of(schema, sp, *rhs, nullptr) != shape) shape = Shape::kLeaf;
  if (shape != Shape::kLeaf && empty_container(lhs) && empty_container(rhs)) shape = Shape::kLeaf;
  switch (shape) {
    case Shape::kLeaf:
      return JsonValue(*rhs, a);
    case Shape::kList:
      return merge_lists(schema, sp, *t, lhs, rhs, a, error);
    case Shape::kStruct:
    case Shape::kMap: {
      JsonValue out(rapidjson::kObjectType);
      for (const auto& m : lhs->GetObject()) {
        auto it = rhs->FindMember(m.name);
        const JsonValue* r = it == rhs->MemberEnd() ? nullptr : &it->value;
        std::string csp = child_sp(sp, shape, sv(m.name));
        out.AddMember(JsonValue(m.name, a), merge(schema, csp, &m.value, r, a, error), a);
      }
      for (const auto& m : rhs->GetObject()) {
        if (lhs->HasMember(m.name)) continue;
        out.AddMember(JsonValue(m.name, a), JsonValue(m.value, a), a);
      }
      return out;
    }
  }
  return JsonValue(*rhs, a);
}

// ---------------------------------------------------------------- removal

// The members of an object and the items of an array, for erase_where.
struct Members {
  JsonValue& v;
  JsonValue::MemberIterator begin() { return v.MemberBegin(); }
  JsonValue::MemberIterator end() { return v.MemberEnd(); }
  JsonValue::MemberIterator erase(JsonValue::MemberIterator it) { return v.EraseMember(it); }  // keeps the order
};
struct Items {
  JsonValue& v;
  JsonValue::ValueIterator begin() { return v.Begin(); }
  JsonValue::ValueIterator end() { return v.End(); }
  JsonValue::ValueIterator erase(JsonValue::ValueIterator it) { return v.Erase(it); }
};

// Erases the elements of `c` that `drop` picks; true when any went.
template <typename Container, typename Drop>
bool erase_where(Container c, Drop drop) {
  bool removed = false;
  for (auto it = c.begin(); it != c.end();) {
    if (drop(*it)) {
      it = c.erase(it);
      removed = true;
    } else {
      ++it;
    }
  }
  return removed;
}

// Removes the members of `set` from `v`; containers emptied by the removal go too.
// A struct field that `owned` still owns something under is kept (its own
// removals inside it still happen), as structured-merge-diff keeps named fields
// with owned children. Returns true when `v` itself became empty that way.
bool remove_items(const Schema& schema, const std::string& sp, JsonValue& v, const FieldSet& set, const FieldSet* owned) {
  const NodeType* t = nullptr;
  Shape shape = shape_of(schema, sp, v, &t);
  if (shape == Shape::kStruct || shape == Shape::kMap) {
    bool removed = erase_where(Members{v}, [&](JsonValue::Member& m) {
      PathElement pe = PathElement::field(std::string(sv(m.name)));
      const FieldSet* owned_sub = owned ? owned->child(pe) : nullptr;
      if (set.has_member(pe) && !(shape == Shape::kStruct && owned_sub != nullptr)) return true;
      const FieldSet* sub = set.child(pe);
      return sub != nullptr && remove_items(schema, child_sp(sp, shape, sv(m.name)), m.value, *sub, owned_sub);
    });
    return removed && v.ObjectEmpty();
  }
  if (shape == Shape::kList) {
    std::string isp = item_path(sp);
    bool removed = erase_where(Items{v}, [&](JsonValue& item) {
      PathElement pe = item_element(*t, item);
      if (set.has_member(pe)) return true;
      const FieldSet* sub = set.child(pe);
      return sub != nullptr && remove_items(schema, isp, item, *sub, owned ? owned->child(pe) : nullptr);
    });
    return removed && v.Empty();
  }
  return false;
}

// ---------------------------------------------------------------- scopes and stripping

FieldSet in_scope(const FieldSet& s, Scope scope) {
  if (scope == Scope::kAll) return s;
  FieldSet status;
  status.insert({PathElement::field("status")});
  if (scope == Scope::kAllButStatus) return s.recursive_difference(status);
  // Only status and what is under it.
  FieldSet out;
  if (s.has_member(PathElement::field("status"))) out.insert({PathElement::field("status")});
  if (const FieldSet* sub = s.child(PathElement::field("status"))) {
    sub->iterate([&](const Path& p) {
      Path full{PathElement::field("status")};
      full.insert(full.end(), p.begin(), p.end());
      out.insert(full);
    });
  }
  return out;
}

void scope_comparison(Comparison& c, Scope scope) {
  c.added = in_scope(c.added, scope);
  c.modified = in_scope(c.modified, scope);
  c.removed = in_scope(c.removed, scope);
}

// The fields no manager owns (kube-apiserver's stripMetaManager).
const FieldSet& strip_set() {
  static const FieldSet kStrip = [] {
    FieldSet s;
    s.insert({PathElement::field("apiVersion")});
    s.insert({PathElement::field("kind")});
    s.insert({PathElement::field("metadata")});
    for (const char* f : {"name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName", "generation",
                          "managedFields", "resourceVersion"}) {
      s.insert({PathElement::field("metadata"), PathElement::field(f)});
    }
    return s;
  }();
  return kStrip;
}

void drop_empty(Managers& managers) {
  for (auto it = managers.begin(); it != managers.end();) {
    if (it->second.fields.empty()) it = managers.erase(it);
    else ++it;
  }
}

Manager make_manager(const Writer& w, const char* operation) {
  Manager m;
  m.manager = w.manager.empty() ? "unknown" : w.manager;
  m.operation = operation;
  m.api_version = w.api_version;
  m.subresource = w.subresource;
  return m;
}

// merge.Updater.update: other managers lose what changed (conflicts unless forced)
// and what was removed.
std::vector<Conflict> take_from_others(Managers& managers, const std::string& self, const Comparison& c, bool force) {
  FieldSet changed = c.modified.union_with(c.added);
  std::vector<Conflict> conflicts;
  for (auto& [id, m] : managers) {
    if (id == self) continue;
    FieldSet lost = m.fields.intersection(changed);
    lost.iterate([&](const Path& p) { conflicts.push_back({id, p}); });
  }
  if (!force && !conflicts.empty()) return conflicts;
  for (auto& [id, m] : managers) {
    if (id == self) continue;
    m.fields = m.fields.difference(changed).difference(c.removed);
  }
  drop_empty(managers);
  return {};
}

// JSON with object keys sorted (Go's encoding of an unstructured object).
void write_sorted(const JsonValue& v, rapidjson::Writer<rapidjson::StringBuffer>& w) {
  if (v.IsObject()) {
    std::vector<const JsonValue::Member*> ms;
    for (const auto& m : v.GetObject()) ms.push_back(&m);
    std::sort(ms.begin(), ms.end(), [](auto* x, auto* y) { return sv(x->name) < sv(y->name); });
    w.StartObject();
    for (const auto* m : ms) {
      w.Key(m->name.GetString(), m->name.GetStringLength());
      write_sorted(m->value, w);
    }
    w.EndObject();
  } else if (v.IsArray()) {
    w.StartArray();
    for (const auto& x : v.GetArray()) write_sorted(x, w);
    w.EndArray();
  } else {
    v.Accept(w);
  }
}

const JsonValue* annotation(const JsonValue& obj, std::string_view name) {
  const JsonValue* a = find(obj, {"metadata", "annotations"});
  if (a == nullptr || !a->IsObject()) return nullptr;
  auto it = a->FindMember(rapidjson::StringRef(name.data(), static_cast<rapidjson::SizeType>(name.size())));
  return it == a->MemberEnd() || !it->value.IsString() || it->value.GetStringLength() == 0 ? nullptr : &it->value;
}

// lastAppliedManager: the fields a client-side `kubectl apply` recorded in the
// last-applied annotation and that still hold their value in the live object.
std::optional<FieldSet> last_applied_fields(const Schema& schema, const JsonValue& live, const std::string& api_version,
                                            const std::function<void(Json&)>& default_object) {
  const JsonValue* text = annotation(live, kLastApplied);
  if (text == nullptr) return std::nullopt;
  auto last = parse_json(sv(*text));
  if (!last.has_value() || !last->IsObject() || get_string(*last, {"apiVersion"}) != api_version) return std::nullopt;
  FieldSet fields = field_set(schema, *last);
  if (default_object) default_object(*last);
  Comparison c = compare_objects(schema, *last, live);
  return fields.difference(c.modified).difference(c.added).difference(c.removed);
}

// Whether `result` changes `live` once the server's defaults are in: a
// configuration that omits defaulted fields of an atomic list (count: 1,
// allocationMode: ExactCount) changes nothing, and must not move the manager's
// time (nor, through it, write a new resourceVersion).
bool changes(const JsonValue& live, const Json& result, const std::function<void(Json&)>& default_object) {
  if (!default_object) return !(live == result);
  Json d;
  d.CopyFrom(result, d.GetAllocator());
  default_object(d);
  return !(live == d);
}

Result<ApplyResult> apply_once(const Schema& schema, const JsonValue& live, const JsonValue& config, Managers& managers,
                               const Writer& writer, Scope scope, bool force, const std::string& now,
                               const std::function<void(Json&)>& default_object) {
  Manager self = make_manager(writer, "Apply");
  std::string id = self.id();
  Status dup;
  FieldSet set = in_scope(field_set(schema, config, &dup), scope).difference(strip_set());
  if (!dup.ok()) return dup;
  FieldSet last;
  if (auto it = managers.find(id); it != managers.end()) {
    last = it->second.fields;
    self.time = it->second.time;
  }
  ApplyResult out;
  Status error;
  JsonValue merged = merge(schema, "", &live, &config, out.object.GetAllocator(), error);
  if (!error.ok()) return error;
  static_cast<JsonValue&>(out.object).Swap(merged);
  self.fields = set;
  managers[id] = self;
  // Prune: what the writer applied last time and no longer applies goes,
  // unless some manager (the writer's new configuration included) owns it.
  if (!last.empty()) {
    FieldSet owned;
    for (const auto& [mid, m] : managers) owned.merge(m.fields);
    FieldSet gone = last.difference(owned);
    if (!gone.empty()) remove_items(schema, "", out.object, gone, &owned);
  }
  Comparison c = compare_objects(schema, live, out.object);
  scope_comparison(c, scope);
  out.conflicts = take_from_others(managers, id, c, force);
  if (!out.conflicts.empty()) return out;
  out.changed = changes(live, out.object, default_object);
  if (out.changed) {
    if (auto it = managers.find(id); it != managers.end()) it->second.time = now;
  }
  return out;
}

}  // namespace

std::string Manager::id() const {
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer> w(b);
  w.StartObject();
  w.Key("manager");
  w.String(manager.c_str(), static_cast<rapidjson::SizeType>(manager.size()));
  w.Key("operation");
  w.String(operation.c_str(), static_cast<rapidjson::SizeType>(operation.size()));
  if (operation != "Apply" && !api_version.empty()) {
    w.Key("apiVersion");
    w.String(api_version.c_str(), static_cast<rapidjson::SizeType>(api_version.size()));
  }
  if (!subresource.empty()) {
    w.Key("subresource");
    w.String(subresource.c_str(), static_cast<rapidjson::SizeType>(subresource.size()));
  }
  w.EndObject();
  return std::string(b.GetString(), b.GetSize());
}

Result<Managers> decode_managed_fields(const JsonValue* mf) {
  Managers out;
  if (mf == nullptr || mf->IsNull()) return out;
  if (!mf->IsArray()) return Status(Code::kBadRequest, "metadata.managedFields must be a list");
  int i = 0;
  for (const auto& e : mf->GetArray()) {
    std::string at = "metadata.managedFields[" + std::to_string(i++) + "]";
    if (!e.IsObject()) return Status(Code::kBadRequest, at + ": must be an object");
    Manager m;
    m.manager = get_string(e, {"manager"});
    m.operation = get_string(e, {"operation"});
    m.api_version = get_string(e, {"apiVersion"});
    m.subresource = get_string(e, {"subresource"});
    m.time = get_string(e, {"time"});
    if (m.operation != "Apply" && m.operation != "Update") {
      return Status(Code::kBadRequest, at + ": operation must be `Apply` or `Update`");
    }
    if (m.api_version.empty()) return Status(Code::kBadRequest, at + ": apiVersion must not be empty");
    std::string type = get_string(e, {"fieldsType"});
    if (type.empty()) return Status(Code::kBadRequest, "missing fieldsType in managed fields entry " + std::to_string(i - 1));
    if (type != "FieldsV1") {
      return Status(Code::kBadRequest, "invalid fieldsType \"" + type + "\" in managed fields entry " + std::to_string(i - 1));
    }
    if (const JsonValue* f = find(e, {"fieldsV1"}); f != nullptr && !f->IsNull()) {
      auto set = FieldSet::from_fields_v1(*f);
      if (!set.has_value()) return Status(Code::kBadRequest, at + ": " + set.error().message());
      m.fields = std::move(set).value();
    }
    std::string id = m.id();
    out[id] = std::move(m);
  }
  return out;
}

bool is_reset(const JsonValue* mf) {
  if (mf == nullptr || !mf->IsArray()) return false;
  if (mf->Empty()) return true;
  return mf->Size() == 1 && (*mf)[0].IsObject() && (*mf)[0].ObjectEmpty();
}

void encode_managed_fields(const Managers& managers, Json& object) {
  auto& a = object.GetAllocator();
  JsonValue& meta = ensure_object(object, "metadata", a);
  if (managers.empty()) {
    remove_member(meta, "managedFields");
    return;
  }
  std::vector<const Manager*> sorted;
  for (const auto& [id, m] : managers) sorted.push_back(&m);
  std::sort(sorted.begin(), sorted.end(), [](const Manager* p, const Manager* q) {
    if (p->operation != q->operation) return p->operation < q->operation;
    int64_t ps = common::parse_rfc3339(p->time).value_or(0);
    int64_t qs = common::parse_rfc3339(q->time).value_or(0);
    if (ps != qs) return ps < qs;
    if (p->manager != q->manager) return p->manager < q->manager;
    if (p->api_version != q->api_version) return p->api_version < q->api_version;
    return p->subresource < q->subresource;
  });
  JsonValue list(rapidjson::kArrayType);
  for (const Manager* m : sorted) {
    JsonValue e(rapidjson::kObjectType);
    e.AddMember("manager", JsonValue(m->manager.c_str(), a), a);
    e.AddMember("operation", JsonValue(m->operation.c_str(), a), a);
    e.AddMember("apiVersion", JsonValue(m->api_version.c_str(), a), a);
    if (!m->time.empty()) e.AddMember("time", JsonValue(m->time.c_str(), a), a);
    e.AddMember("fieldsType", "FieldsV1", a);
    auto fields = parse_json(m->fields.to_fields_v1());
    e.AddMember("fieldsV1", JsonValue(*fields, a), a);
    if (!m->subresource.empty()) e.AddMember("subresource", JsonValue(m->subresource.c_str(), a), a);
    list.PushBack(e, a);
  }
  set_member(meta, "managedFields", std::move(list), a);
}

void record_update(const Schema& schema, const JsonValue& live, const JsonValue& updated, Managers& managers,
                   const Writer& writer, Scope scope, const std::string& now) {
  Comparison c = compare_objects(schema, live, updated);
  scope_comparison(c, scope);
  Manager self = make_manager(writer, "Update");
  std::string id = self.id();
  // The writer's previous entry is treated like any other manager's, then the
  // fields this write changed are added to it (managedFieldsUpdater).
  FieldSet current = c.modified.union_with(c.added).difference(strip_set());
  FieldSet previous;
  std::string previous_time;
  if (auto it = managers.find(id); it != managers.end()) {
    previous = it->second.fields.difference(c.modified.union_with(c.added)).difference(c.removed);
    previous_time = it->second.time;
    managers.erase(it);
  }
  take_from_others(managers, id, c, true);
  self.fields = previous.union_with(current);
  self.time = current.empty() ? previous_time : now;
  if (!self.fields.empty()) managers[id] = std::move(self);
}

Result<ApplyResult> apply(const Schema& schema, const JsonValue& live, const JsonValue& config, Managers& managers,
                          const Writer& writer, Scope scope, bool force, const std::string& now,
                          const std::function<void(Json&)>& default_object) {
  Managers before = managers;
  ASSIGN_OR_RETURN(ApplyResult out, apply_once(schema, live, config, managers, writer, scope, force, now, default_object));
  if (!out.conflicts.empty() && writer.manager == "kubectl") {
    // Upgrading from client-side apply: conflicts over fields that kubectl's
    // last-applied annotation recorded (with the value still live) are taken.
    if (auto allowed = last_applied_fields(schema, live, writer.api_version, default_object)) {
      std::vector<Conflict> remaining;
      for (const auto& c : out.conflicts) {
        if (!allowed->has(c.path)) remaining.push_back(c);
      }
      managers = before;
      if (!remaining.empty()) {
        out.conflicts = std::move(remaining);
        return out;
      }
      ASSIGN_OR_RETURN(out, apply_once(schema, live, config, managers, writer, scope, true, now, default_object));
    }
  }
  if (!out.conflicts.empty()) {
    managers = before;
    return out;
  }
  // lastAppliedUpdater: kubectl's server-side apply keeps an existing
  // last-applied annotation in step with what it applied.
  if (writer.manager == "kubectl" && annotation(live, kLastApplied) != nullptr) {
    Json cfg;
    cfg.CopyFrom(config, cfg.GetAllocator());
    if (JsonValue* ann = find(cfg, {"metadata", "annotations"}); ann && ann->IsObject()) {
      remove_member(*ann, kLastApplied);
      if (ann->ObjectEmpty()) remove_member(*find(cfg, {"metadata"}), "annotations");
    }
    rapidjson::StringBuffer b;
    rapidjson::Writer<rapidjson::StringBuffer> w(b);
    write_sorted(cfg, w);
    std::string text = std::string(b.GetString(), b.GetSize()) + "\n";
    auto& a = out.object.GetAllocator();
    JsonValue& anns = ensure_object(ensure_object(out.object, "metadata", a), "annotations", a);
    set_string(anns, kLastApplied, text, a);
    out.changed = changes(live, out.object, default_object);
  }
  return out;
}

std::string print_manager(const std::string& manager_id) {
  auto m = parse_json(manager_id);
  if (!m.has_value() || !m->IsObject()) return api::go_quote(manager_id);
  std::string out = api::go_quote(get_string(*m, {"manager"}));
  std::string sub = get_string(*m, {"subresource"});
  if (!sub.empty()) out += " with subresource " + api::go_quote(sub);
  if (get_string(*m, {"operation"}) == "Update") out += " using " + get_string(*m, {"apiVersion"});
  return out;
}

std::string conflict_message(const std::vector<Conflict>& conflicts) {
  if (conflicts.size() == 1) {
    return "Apply failed with 1 conflict: conflict with " + print_manager(conflicts[0].manager_id) + ": " +
           path_string(conflicts[0].path);
  }
  std::map<std::string, std::vector<const Path*>> by_manager;
  for (const auto& c : conflicts) by_manager[c.manager_id].push_back(&c.path);
  std::string lines;
  for (const auto& [id, paths] : by_manager) {
    if (!lines.empty()) lines += "\n";
    lines += "conflicts with " + print_manager(id) + ":";
    for (const Path* p : paths) lines += "\n- " + path_string(*p);
  }
  return "Apply failed with " + std::to_string(conflicts.size()) + " conflicts: " + lines;
}

std::string manager_from_user_agent(const std::string& user_agent) {
  std::string out;
  for (char c : user_agent.substr(0, user_agent.find('/'))) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) continue;
    if (out.size() >= 128) break;
    out += c;
  }
  return out;
}

}  // namespace draplane::server::ssa
