#include "server/json_util.h"

#include <rapidjson/error/en.h>
#include <rapidjson/encodedstream.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/pointer.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "api/decode_limits.h"

namespace draplane::server {

namespace {

// Hands the reader's events to the document, refusing nesting deeper than
// api::kMaxNestingDepth (Go's encoding/json bound): the reader recurses once a
// level, and so would every walk over the document.
class DepthLimited {
 public:
  explicit DepthLimited(Json& doc) : doc_(doc) {}
  bool Null() { return doc_.Null(); }
  bool Bool(bool b) { return doc_.Bool(b); }
  bool Int(int i) { return doc_.Int(i); }
  bool Uint(unsigned u) { return doc_.Uint(u); }
  bool Int64(int64_t i) { return doc_.Int64(i); }
  bool Uint64(uint64_t u) { return doc_.Uint64(u); }
  bool Double(double d) { return doc_.Double(d); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool copy) { return doc_.RawNumber(s, n, copy); }
  bool String(const char* s, rapidjson::SizeType n, bool copy) { return doc_.String(s, n, copy); }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) { return doc_.Key(s, n, copy); }
  bool StartObject() { return open('{') && doc_.StartObject(); }
  bool EndObject(rapidjson::SizeType n) { return --depth_, doc_.EndObject(n); }
  bool StartArray() { return open('[') && doc_.StartArray(); }
  bool EndArray(rapidjson::SizeType n) { return --depth_, doc_.EndArray(n); }
  char too_deep() const { return too_deep_; }

 private:
  bool open(char bracket) {
    if (depth_ >= api::kMaxNestingDepth) {
      too_deep_ = bracket;
      return false;
    }
    ++depth_;
    return true;
  }
  Json& doc_;
  int depth_ = 0;
  char too_deep_ = 0;
};

}  // namespace

Result<Json> parse_json(std::string_view text) {
  Json d;
  rapidjson::ParseResult result;
  char too_deep = 0;
  // Populate runs the reader with the document as the final handler; on failure
  // the document stays empty.
  auto generate = [&](Json& doc) {
    rapidjson::MemoryStream ms(text.data(), text.size());
    rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> in(ms);  // as Document::Parse
    DepthLimited handler(doc);
    rapidjson::Reader reader;
    result = reader.Parse<rapidjson::kParseFullPrecisionFlag>(in, handler);
    too_deep = handler.too_deep();
    return !result.IsError();
  };
  d.Populate(generate);
  if (result.IsError()) {
    std::string why = too_deep != 0 ? std::string("invalid character '") + too_deep + "' exceeded max depth"
                                    : rapidjson::GetParseError_En(result.Code());
    return Status(Code::kBadRequest, "invalid JSON at offset " + std::to_string(result.Offset()) + ": " + why);
  }
  return d;
}

std::string to_string(const JsonValue& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

namespace {
rapidjson::Value key_value(std::string_view k, JsonAlloc& a) {
  return rapidjson::Value(k.data(), static_cast<rapidjson::SizeType>(k.size()), a);
}
// The last member named k (a repeated key's value, as Go's decoder and so
// kube-apiserver take it; the typed codec agrees), or MemberEnd().
JsonValue::ConstMemberIterator member(const JsonValue& v, std::string_view k) {
  for (auto it = v.MemberEnd(); it != v.MemberBegin();) {
    --it;
    if (std::string_view(it->name.GetString(), it->name.GetStringLength()) == k) return it;
  }
  return v.MemberEnd();
}
}  // namespace

const JsonValue* find(const JsonValue& v, std::initializer_list<std::string_view> path) {
  const JsonValue* cur = &v;
  for (std::string_view k : path) {
    if (!cur->IsObject()) return nullptr;
    auto it = member(*cur, k);
    if (it == cur->MemberEnd()) return nullptr;
    cur = &it->value;
  }
  return cur;
}

JsonValue* find(JsonValue& v, std::initializer_list<std::string_view> path) {
  return const_cast<JsonValue*>(find(static_cast<const JsonValue&>(v), path));
}

std::string get_string(const JsonValue& v, std::initializer_list<std::string_view> path) {
  const JsonValue* f = find(v, path);
  return f && f->IsString() ? std::string(f->GetString(), f->GetStringLength()) : std::string();
}

JsonValue& ensure_object(JsonValue& obj, std::string_view key, JsonAlloc& a) {
  JsonValue* f = find(obj, {key});
  if (f && f->IsObject()) return *f;
  set_member(obj, key, JsonValue(rapidjson::kObjectType), a);
  return *find(obj, {key});
}

void set_member(JsonValue& obj, std::string_view key, JsonValue value, JsonAlloc& a) {
  if (JsonValue* f = find(obj, {key})) {
    *f = std::move(value);
    return;
  }
  obj.AddMember(key_value(key, a), value, a);
}

void set_string(JsonValue& obj, std::string_view key, std::string_view s, JsonAlloc& a) {
  set_member(obj, key, key_value(s, a), a);
}

void remove_member(JsonValue& obj, std::string_view key) {
  if (!obj.IsObject()) return;
  // Every member of that name (a body may repeat a key).
  for (auto it = member(obj, key); it != obj.MemberEnd(); it = member(obj, key)) {
    obj.EraseMember(obj.MemberBegin() + (it - obj.MemberBegin()));
  }
}

void merge_patch(JsonValue& target, const JsonValue& patch, JsonAlloc& a) {
  if (!patch.IsObject()) {
    target.CopyFrom(patch, a);
    return;
  }
  if (!target.IsObject()) target.SetObject();
  for (auto& m : patch.GetObject()) {
    std::string_view k(m.name.GetString(), m.name.GetStringLength());
    if (m.value.IsNull()) {
      remove_member(target, k);
      continue;
    }
    JsonValue* cur = find(target, {k});
    if (cur == nullptr) {
      JsonValue fresh(rapidjson::kNullType);
      merge_patch(fresh, m.value, a);
      target.AddMember(key_value(k, a), fresh, a);
    } else {
      merge_patch(*cur, m.value, a);
    }
  }
}

namespace {

// JSON pointer helpers for RFC 6902 (RapidJSON implements RFC 6901 pointers).
Status pointer_error(const std::string& op, const std::string& path, const std::string& why) {
  return Status(Code::kInvalid, "json patch " + op + " operation at \"" + path + "\": " + why);
}

Status add_at(JsonValue& root, const std::string& path, JsonValue value, JsonAlloc& a, const std::string& op) {
  if (path.empty()) {
    root = std::move(value);
    return Status();
  }
  size_t slash = path.rfind('/');
  std::string parent_path = path.substr(0, slash);
  std::string last = path.substr(slash + 1);
  JsonValue* parent = rapidjson::Pointer(parent_path.c_str()).Get(root);
  if (parent == nullptr) return pointer_error(op, path, "parent does not exist");
  if (parent->IsArray()) {
    if (last == "-") {
      parent->PushBack(value, a);
      return Status();
    }
    size_t idx = static_cast<size_t>(std::strtoull(last.c_str(), nullptr, 10));
    if (idx > parent->Size()) return pointer_error(op, path, "index out of range");
    parent->PushBack(JsonValue(), a);
    for (size_t i = parent->Size() - 1; i > idx; --i) (*parent)[static_cast<rapidjson::SizeType>(i)].Swap((*parent)[static_cast<rapidjson::SizeType>(i - 1)]);
    (*parent)[static_cast<rapidjson::SizeType>(idx)] = std::move(value);
    return Status();
  }
  if (!parent->IsObject()) return pointer_error(op, path, "parent is not an object or array");
  // Unescape ~1 and ~0 in the last token.
  std::string key;
  for (size_t i = 0; i < last.size(); ++i) {
    if (last[i] == '~' && i + 1 < last.size()) {
      key += last[i + 1] == '1' ? '/' : '~';
      ++i;
    } else {
      key += last[i];
    }
  }
  set_member(*parent, key, std::move(value), a);
  return Status();
}

}  // namespace

Status json_patch(JsonValue& target, const JsonValue& ops, JsonAlloc& a) {
  if (!ops.IsArray()) return Status(Code::kBadRequest, "json patch must be an array of operations");
  for (const auto& o : ops.GetArray()) {
    std::string op = get_string(o, {"op"});
    std::string path = get_string(o, {"path"});
    const JsonValue* value = find(o, {"value"});
    rapidjson::Pointer ptr(path.c_str());
    if (!ptr.IsValid()) return pointer_error(op, path, "invalid pointer");
    if (op == "add" || op == "replace") {
      if (!value) return pointer_error(op, path, "missing value");
      if (op == "replace" && ptr.Get(target) == nullptr) return pointer_error(op, path, "path does not exist");
      if (op == "replace") {
        ptr.Get(target)->CopyFrom(*value, a);
        continue;
      }
      JsonValue copy;
      copy.CopyFrom(*value, a);
      if (Status st = add_at(target, path, std::move(copy), a, op); !st.ok()) return st;
    } else if (op == "remove") {
      if (!ptr.Erase(target)) return pointer_error(op, path, "path does not exist");
    } else if (op == "move" || op == "copy") {
      std::string from = get_string(o, {"from"});
      JsonValue* src = rapidjson::Pointer(from.c_str()).Get(target);
      if (src == nullptr) return pointer_error(op, path, "from path does not exist");
      JsonValue copy;
      copy.CopyFrom(*src, a);
      if (op == "move") rapidjson::Pointer(from.c_str()).Erase(target);
      if (Status st = add_at(target, path, std::move(copy), a, op); !st.ok()) return st;
    } else if (op == "test") {
      JsonValue* cur = ptr.Get(target);
      if (cur == nullptr || !value || *cur != *value) return pointer_error(op, path, "test failed");
    } else {
      return Status(Code::kBadRequest, "json patch: unsupported operation \"" + op + "\"");
    }
  }
  return Status();
}

namespace {

const char* merge_key_of(const JsonValue& list) {
  // Kubernetes' merge keys for the core lists draplane's kinds carry.
  for (const char* key : {"name", "uid", "type", "containerPort", "devicePath", "mountPath"}) {
    bool all = list.Size() > 0;
    for (const auto& e : list.GetArray()) {
      if (!e.IsObject() || !find(e, {key})) {
        all = false;
        break;
      }
    }
    if (all) return key;
  }
  return nullptr;
}

}  // namespace

void strategic_merge_patch(JsonValue& target, const JsonValue& patch, JsonAlloc& a, bool atomic_lists) {
  if (!patch.IsObject() || !target.IsObject()) {
    target.CopyFrom(patch, a);
    return;
  }
  if (get_string(patch, {"$patch"}) == "replace") {
    target.CopyFrom(patch, a);
    remove_member(target, "$patch");
    return;
  }
  for (auto& m : patch.GetObject()) {
    std::string_view k(m.name.GetString(), m.name.GetStringLength());
    if (!k.empty() && k[0] == '$') continue;  // $setElementOrder/..., $retainKeys, ...
    if (m.value.IsNull()) {
      remove_member(target, k);
      continue;
    }
    JsonValue* cur = find(target, {k});
    if (cur == nullptr) {
      JsonValue fresh;
      fresh.CopyFrom(m.value, a);
      target.AddMember(key_value(k, a), fresh, a);
      continue;
    }
    if (m.value.IsObject() && cur->IsObject()) {
      strategic_merge_patch(*cur, m.value, a, atomic_lists && k != "metadata");
    } else if (!atomic_lists && m.value.IsArray() && cur->IsArray() && merge_key_of(*cur) != nullptr &&
               m.value.Size() > 0) {
      const char* key = merge_key_of(*cur);
      for (const auto& pe : m.value.GetArray()) {
        const JsonValue* pk = pe.IsObject() ? find(pe, {key}) : nullptr;
        if (pk == nullptr) continue;
        bool del = get_string(pe, {"$patch"}) == "delete";
        bool found = false;
        for (rapidjson::SizeType i = 0; i < cur->Size(); ++i) {
          JsonValue& te = (*cur)[i];
          if (*find(te, {key}) != *pk) continue;
          found = true;
          if (del) {
            cur->Erase(cur->Begin() + i);
          } else {
            strategic_merge_patch(te, pe, a);
          }
          break;
        }
        if (!found && !del) {
          JsonValue fresh;
          fresh.CopyFrom(pe, a);
          cur->PushBack(fresh, a);
        }
      }
    } else {
      cur->CopyFrom(m.value, a);
    }
  }
}

}  // namespace draplane::server
