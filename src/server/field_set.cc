#include "server/field_set.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cstdlib>

#include "api/field_error.h"

namespace draplane::server::ssa {
namespace {

// The rank of a JSON value's type in structured-merge-diff's value ordering.
int type_rank(std::string_view json) {
  if (json.empty() || json == "null") return 0;
  char c = json[0];
  if (c == '-' || (c >= '0' && c <= '9')) return 1;
  if (c == '"') return 2;
  if (c == 't' || c == 'f') return 3;
  if (c == '[') return 4;
  return 5;
}

// Orders two JSON texts: numbers numerically, everything else by text.
int compare_json(const std::string& a, const std::string& b) {
  int ra = type_rank(a), rb = type_rank(b);
  if (ra != rb) return ra < rb ? -1 : 1;
  if (ra == 1) {
    double x = std::strtod(a.c_str(), nullptr), y = std::strtod(b.c_str(), nullptr);
    if (x != y) return x < y ? -1 : 1;
    return 0;
  }
  return a.compare(b) < 0 ? -1 : a.compare(b) > 0 ? 1 : 0;
}

// How Go's value.ToString prints a JSON value: strings %q, the rest as JSON.
std::string go_text(const std::string& json) {
  if (!json.empty() && json[0] == '"') {
    auto v = parse_json(json);
    if (v.has_value() && v->IsString()) return api::go_quote(std::string_view(v->GetString(), v->GetStringLength()));
  }
  return json;
}

}  // namespace

PathElement PathElement::field(std::string name) {
  PathElement pe;
  pe.kind = Kind::kField;
  pe.name = std::move(name);
  return pe;
}

PathElement PathElement::value_of(const JsonValue& v) {
  PathElement pe;
  pe.kind = Kind::kValue;
  pe.value = server::to_string(v);
  return pe;
}

PathElement PathElement::key_of(const JsonValue& item, const std::vector<std::string>& keys) {
  PathElement pe;
  pe.kind = Kind::kKey;
  if (item.IsObject()) {
    for (const auto& k : keys) {
      auto it = item.FindMember(rapidjson::StringRef(k.data(), static_cast<rapidjson::SizeType>(k.size())));
      if (it != item.MemberEnd() && !it->value.IsNull()) pe.key.emplace_back(k, server::to_string(it->value));
    }
  }
  std::sort(pe.key.begin(), pe.key.end());
  return pe;
}

PathElement PathElement::index_of(int i) {
  PathElement pe;
  pe.kind = Kind::kIndex;
  pe.index = i;
  return pe;
}

int PathElement::compare(const PathElement& o) const {
  if (kind != o.kind) return static_cast<int>(kind) < static_cast<int>(o.kind) ? -1 : 1;
  switch (kind) {
    case Kind::kField:
      return name.compare(o.name) < 0 ? -1 : name.compare(o.name) > 0 ? 1 : 0;
    case Kind::kKey:
      for (size_t i = 0;; ++i) {
        if (i >= key.size() && i >= o.key.size()) return 0;
        if (i >= key.size()) return -1;
        if (i >= o.key.size()) return 1;
        if (int c = key[i].first.compare(o.key[i].first); c != 0) return c < 0 ? -1 : 1;
        if (int c = compare_json(key[i].second, o.key[i].second); c != 0) return c;
      }
    case Kind::kValue:
      return compare_json(value, o.value);
    case Kind::kIndex:
      return index < o.index ? -1 : index > o.index ? 1 : 0;
  }
  return 0;
}

std::string PathElement::to_string() const {
  switch (kind) {
    case Kind::kField:
      return "." + name;
    case Kind::kKey: {
      std::string out = "[";
      for (size_t i = 0; i < key.size(); ++i) out += (i ? "," : "") + key[i].first + "=" + go_text(key[i].second);
      return out + "]";
    }
    case Kind::kValue:
      return "[=" + go_text(value) + "]";
    case Kind::kIndex:
      return "[" + std::to_string(index) + "]";
  }
  return "";
}

std::string PathElement::serialize() const {
  switch (kind) {
    case Kind::kField:
      return "f:" + name;
    case Kind::kKey: {
      std::string out = "k:{";
      for (size_t i = 0; i < key.size(); ++i) {
        rapidjson::StringBuffer b;
        rapidjson::Writer<rapidjson::StringBuffer> w(b);
        w.String(key[i].first.c_str(), static_cast<rapidjson::SizeType>(key[i].first.size()));
        out += (i ? "," : "") + std::string(b.GetString(), b.GetSize()) + ":" + key[i].second;
      }
      return out + "}";
    }
    case Kind::kValue:
      return "v:" + value;
    case Kind::kIndex:
      return "i:" + std::to_string(index);
  }
  return "";
}

std::optional<PathElement> PathElement::deserialize(std::string_view text) {
  if (text.size() < 2 || text[1] != ':') return std::nullopt;
  std::string_view rest = text.substr(2);
  switch (text[0]) {
    case 'f':
      return field(std::string(rest));
    case 'v': {
      auto v = parse_json(rest);
      if (!v.has_value()) return std::nullopt;
      return value_of(*v);
    }
    case 'k': {
      auto v = parse_json(rest);
      if (!v.has_value() || !v->IsObject()) return std::nullopt;
      PathElement pe;
      pe.kind = Kind::kKey;
      for (const auto& m : v->GetObject()) {
        pe.key.emplace_back(std::string(m.name.GetString(), m.name.GetStringLength()), server::to_string(m.value));
      }
      std::sort(pe.key.begin(), pe.key.end());
      return pe;
    }
    case 'i': {
      std::string s(rest);
      char* end = nullptr;
      long i = std::strtol(s.c_str(), &end, 10);
      if (s.empty() || *end != '\0') return std::nullopt;
      return index_of(static_cast<int>(i));
    }
    default:
      return std::nullopt;
  }
}

std::string path_string(const Path& path) {
  std::string out;
  for (const auto& pe : path) out += pe.to_string();
  return out;
}

void FieldSet::insert(const Path& path) {
  if (path.empty()) return;
  FieldSet* s = this;
  for (size_t i = 0; i + 1 < path.size(); ++i) s = &s->children_[path[i]];
  s->members_.insert(path.back());
}

bool FieldSet::has(const Path& path) const {
  if (path.empty()) return false;  // nobody owns the whole object
  const FieldSet* s = this;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    s = s->child(path[i]);
    if (s == nullptr) return false;
  }
  return s->has_member(path.back());
}

const FieldSet* FieldSet::child(const PathElement& pe) const {
  auto it = children_.find(pe);
  return it == children_.end() ? nullptr : &it->second;
}

void FieldSet::merge(const FieldSet& other) {
  members_.insert(other.members_.begin(), other.members_.end());
  for (const auto& [pe, sub] : other.children_) children_[pe].merge(sub);
}

FieldSet FieldSet::union_with(const FieldSet& other) const {
  FieldSet out = *this;
  out.merge(other);
  return out;
}

FieldSet FieldSet::intersection(const FieldSet& other) const {
  FieldSet out;
  for (const auto& m : members_) {
    if (other.members_.count(m)) out.members_.insert(m);
  }
  for (const auto& [pe, sub] : children_) {
    if (const FieldSet* o = other.child(pe)) {
      FieldSet i = sub.intersection(*o);
      if (!i.empty()) out.children_.emplace(pe, std::move(i));
    }
  }
  return out;
}

FieldSet FieldSet::subtract(const FieldSet& other, bool recursive) const {
  FieldSet out;
  for (const auto& m : members_) {
    if (!other.members_.count(m)) out.members_.insert(m);
  }
  for (const auto& [pe, sub] : children_) {
    if (recursive && other.members_.count(pe)) continue;
    const FieldSet* o = other.child(pe);
    if (o == nullptr) {
      out.children_.emplace(pe, sub);
      continue;
    }
    FieldSet d = sub.subtract(*o, recursive);
    if (!d.empty()) out.children_.emplace(pe, std::move(d));
  }
  return out;
}

FieldSet FieldSet::difference(const FieldSet& other) const { return subtract(other, false); }

FieldSet FieldSet::recursive_difference(const FieldSet& other) const { return subtract(other, true); }

void FieldSet::iterate_prefix(Path& prefix, const std::function<void(const Path&)>& f) const {
  for (const auto& m : members_) {
    prefix.push_back(m);
    f(prefix);
    prefix.pop_back();
  }
  for (const auto& [pe, sub] : children_) {
    prefix.push_back(pe);
    sub.iterate_prefix(prefix, f);
    prefix.pop_back();
  }
}

void FieldSet::iterate(const std::function<void(const Path&)>& f) const {
  Path prefix;
  iterate_prefix(prefix, f);
}

std::string FieldSet::to_fields_v1() const {
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer> w(b);
  // Members and children merged in path-element order; a node that is both gets ".": {} first.
  std::function<void(const FieldSet&, bool)> contents = [&](const FieldSet& s, bool include_self) {
    if (include_self && !s.empty()) {
      w.Key(".");
      w.StartObject();
      w.EndObject();
    }
    auto mi = s.members_.begin();
    auto ci = s.children_.begin();
    auto key = [&](const PathElement& pe) {
      std::string k = pe.serialize();
      w.Key(k.c_str(), static_cast<rapidjson::SizeType>(k.size()));
    };
    while (mi != s.members_.end() || ci != s.children_.end()) {
      int c = mi == s.members_.end() ? 1 : ci == s.children_.end() ? -1 : mi->compare(ci->first);
      if (c < 0) {
        key(*mi);
        w.StartObject();
        w.EndObject();
        ++mi;
      } else {
        key(ci->first);
        w.StartObject();
        contents(ci->second, c == 0);
        w.EndObject();
        if (c == 0) ++mi;
        ++ci;
      }
    }
  };
  w.StartObject();
  contents(*this, false);
  w.EndObject();
  return std::string(b.GetString(), b.GetSize());
}

Result<FieldSet> FieldSet::from_fields_v1(const JsonValue& fields) {
  if (!fields.IsObject()) return Status(Code::kBadRequest, "FieldsV1 must be an object");
  FieldSet out;
  for (const auto& m : fields.GetObject()) {
    std::string_view k(m.name.GetString(), m.name.GetStringLength());
    if (k == ".") continue;  // handled by the parent
    auto pe = PathElement::deserialize(k);
    if (!pe) return Status(Code::kBadRequest, "invalid path element \"" + std::string(k) + "\" in FieldsV1");
    if (!m.value.IsObject()) return Status(Code::kBadRequest, "FieldsV1 values must be objects");
    if (m.value.ObjectEmpty()) {
      out.members_.insert(*pe);
      continue;
    }
    if (m.value.HasMember(".")) out.members_.insert(*pe);
    ASSIGN_OR_RETURN(FieldSet sub, from_fields_v1(m.value));
    if (!sub.empty()) out.children_.emplace(*pe, std::move(sub));
  }
  return out;
}

}  // namespace draplane::server::ssa
