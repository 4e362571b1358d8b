// Codec entry points: stream splitting (JSON or YAML), List expansion, kind
// dispatch with version conversion, and the encoders' text forms.
#include "api/codec.h"

#include <algorithm>
#include <array>
#include <type_traits>
#include <utility>

#include "api/internal/conversion.h"
#include "api/internal/decoder.h"
#include "api/internal/encoder.h"
#include "api/internal/json_value.h"

namespace draplane::api {
namespace {

using internal::Decoder;
using internal::JsonValue;

std::string string_member(const JsonValue& v, std::string_view key) {
  const JsonValue* m = v.is_object() ? v.find(key) : nullptr;
  return m != nullptr && m->is_string() ? m->text : std::string();
}

Status missing(std::string_view what, const JsonValue& root) {
  std::string json = internal::to_json_text(root);
  if (json.size() > 200) json = json.substr(0, 200) + "...";
  return Status(Code::kBadRequest,
                "Object '" + std::string(what) + "' is missing in '" + json + "'");
}

// `dropped` null: strict (unknown/duplicate fields fail); else they are listed there.
template <typename T>
Result<Object> decode_typed(const JsonValue& root, std::string api_version, std::string kind,
                            std::vector<std::string>* dropped) {
  Decoder d;
  T obj{};
  obj.typeMeta.apiVersion = std::move(api_version);
  obj.typeMeta.kind = std::move(kind);
  internal::read_object(d, root, obj);
  if (dropped != nullptr && !d.failed()) {
    dropped->insert(dropped->end(), d.strict_problems().begin(), d.strict_problems().end());
    return Object(std::move(obj));
  }
  Status st = d.status();
  if (!st.ok()) return st;
  return Object(std::move(obj));
}

constexpr std::string_view kResourceGroupPrefix = "resource.k8s.io/";

// The kinds of Object, from their tables' KindName, in variant order: decoding
// dispatches on them, so a kind added to Object and given a table is decoded.
using DecodeFn = Result<Object> (*)(const JsonValue&, std::string, std::string, std::vector<std::string>*);
struct KindEntry {
  std::string_view name;
  std::string_view api_version;
  DecodeFn decode;
  bool resource_group() const { return api_version.starts_with(kResourceGroupPrefix); }
};

template <size_t... I>
constexpr std::array<KindEntry, sizeof...(I)> make_kinds(std::index_sequence<I...>) {
  return {KindEntry{internal::FieldTable<std::variant_alternative_t<I, Object>>::kind.name,
                    internal::FieldTable<std::variant_alternative_t<I, Object>>::kind.api_version,
                    &decode_typed<std::variant_alternative_t<I, Object>>}...};
}
constexpr auto kKinds = make_kinds(std::make_index_sequence<std::variant_size_v<Object>>());

const KindEntry* find_kind(std::string_view kind, bool resource_group) {
  for (const KindEntry& k : kKinds) {
    if (k.name == kind && k.resource_group() == resource_group) return &k;
  }
  return nullptr;
}

// "resource.k8s.io/v1 DeviceClass, ... and v1 Pod, Node, Namespace, ... and apps/v1
// Deployment, ...": the kinds per apiVersion, in variant order.
const std::string& served_kinds() {
  static const std::string kText = [] {
    std::vector<std::pair<std::string_view, std::string>> lists;
    for (const KindEntry& k : kKinds) {
      auto it = std::find_if(lists.begin(), lists.end(), [&](const auto& l) { return l.first == k.api_version; });
      if (it == lists.end()) it = lists.insert(lists.end(), {k.api_version, std::string(k.api_version) + " "});
      else it->second += ", ";
      it->second += k.name;
    }
    std::string out;
    for (const auto& l : lists) out += (out.empty() ? "" : " and ") + l.second;
    return out;
  }();
  return kText;
}

Result<Object> decode_root(JsonValue& root, std::vector<std::string>* dropped) {
  if (!root.is_object()) {
    return Status(Code::kBadRequest, "expected an object, got " +
                                         std::string(internal::type_name(root.type)));
  }
  const JsonValue* kind_v = root.find("kind");
  const JsonValue* av_v = root.find("apiVersion");
  if (kind_v == nullptr || !kind_v->is_string() || kind_v->text.empty()) {
    return missing("Kind", root);
  }
  if (av_v == nullptr || !av_v->is_string() || av_v->text.empty()) {
    return missing("apiVersion", root);
  }
  std::string kind = kind_v->text;
  std::string api_version = av_v->text;
  const KindEntry* resource_kind = find_kind(kind, true);
  if (resource_kind != nullptr || internal::is_removed_resource_kind(kind) ||
      api_version.starts_with(kResourceGroupPrefix)) {
    RETURN_IF_ERROR(internal::convert_to_v1(root, api_version, kind));
    api_version = kResourceV1;
    if (resource_kind != nullptr) return resource_kind->decode(root, api_version, kind, dropped);
    return Status(Code::kBadRequest, "no kind \"" + kind + "\" is registered for version \"" +
                                         api_version + "\"");
  }
  const KindEntry* k = find_kind(kind, false);
  if (k == nullptr) {
    return Status(Code::kBadRequest, "no kind \"" + kind + "\" is registered for version \"" +
                                         api_version + "\" in draplane (it serves " + served_kinds() + ")");
  }
  if (api_version != k->api_version) {
    return Status(Code::kBadRequest, "no kind \"" + kind + "\" is registered for version \"" +
                                         api_version + "\": use apiVersion " + std::string(k->api_version));
  }
  return k->decode(root, api_version, kind, dropped);
}

bool is_list(const JsonValue& root) {
  std::string kind = string_member(root, "kind");
  return kind == "List" ||
         (kind.size() > 4 && kind.compare(kind.size() - 4, 4, "List") == 0 &&
          root.find("items") != nullptr);
}

void add_root(JsonValue root, std::vector<DecodedDocument>& out, std::vector<std::string>* dropped) {
  if (root.is_object() && is_list(root)) {
    JsonValue* items = root.find("items");
    if (items != nullptr && !items->is_null() && !items->is_array()) {
      DecodedDocument doc;
      doc.index = static_cast<int>(out.size());
      doc.kind = string_member(root, "kind");
      doc.object = Status(Code::kBadRequest, "items: expected array, got " +
                                                 std::string(internal::type_name(items->type)));
      out.push_back(std::move(doc));
      return;
    }
    if (items != nullptr) {
      for (JsonValue& item : items->items) add_root(std::move(item), out, dropped);
    }
    return;
  }
  DecodedDocument doc;
  doc.index = static_cast<int>(out.size());
  doc.kind = string_member(root, "kind");
  if (const JsonValue* md = root.is_object() ? root.find("metadata") : nullptr) {
    doc.name = string_member(*md, "name");
  }
  doc.object = decode_root(root, dropped);
  out.push_back(std::move(doc));
}

bool looks_like_json(std::string_view text) {
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    return c == '{' || c == '[';
  }
  return false;
}

std::vector<DecodedDocument> decode_documents(std::string_view text, std::vector<std::string>* dropped) {
  std::vector<DecodedDocument> out;
  if (looks_like_json(text)) {
    Result<std::vector<JsonValue>> values = internal::parse_json_stream(text);
    if (!values.has_value()) {
      DecodedDocument doc;
      doc.index = 0;
      doc.object = values.error();
      out.push_back(std::move(doc));
      return out;
    }
    for (JsonValue& v : *values) {
      if (v.is_array()) {
        for (JsonValue& item : v.items) add_root(std::move(item), out, dropped);
      } else {
        add_root(std::move(v), out, dropped);
      }
    }
    return out;
  }
  for (internal::YamlDocument& doc : internal::parse_yaml_stream(text)) {
    if (!doc.error.ok()) {
      DecodedDocument failed;
      failed.index = static_cast<int>(out.size());
      failed.object = doc.error;
      out.push_back(std::move(failed));
      continue;
    }
    add_root(std::move(doc.value), out, dropped);
  }
  return out;
}

}  // namespace

std::vector<DecodedDocument> decode_stream(std::string_view text) {
  return decode_documents(text, nullptr);
}

namespace {

Result<Object> only_object(std::vector<DecodedDocument> docs) {
  if (docs.size() != 1) {
    return Status(Code::kBadRequest,
                  "expected exactly one object, found " + std::to_string(docs.size()));
  }
  return std::move(docs[0].object);
}

}  // namespace

Result<Object> decode_object(std::string_view text) { return only_object(decode_stream(text)); }

Result<LenientDecode> decode_object_lenient(std::string_view text) {
  LenientDecode out;
  ASSIGN_OR_RETURN(out.object, only_object(decode_documents(text, &out.dropped)));
  return out;
}

namespace internal {

Result<Object> decode_single(JsonValue root, std::vector<std::string>* dropped) {
  std::vector<DecodedDocument> docs;
  add_root(std::move(root), docs, dropped);
  return only_object(std::move(docs));
}

}  // namespace internal

Result<std::string> yaml_to_json(std::string_view text) {
  std::vector<internal::YamlDocument> docs = internal::parse_yaml_stream(text);
  for (const internal::YamlDocument& d : docs) {
    if (!d.error.ok()) return d.error;
  }
  if (docs.size() != 1) {
    return Status(Code::kBadRequest,
                  "expected exactly one YAML document, found " + std::to_string(docs.size()));
  }
  return internal::to_json_text(docs[0].value);
}

template <typename T>
Result<T> decode_as(std::string_view text) {
  return object_as<T>(decode_object(text));
}

template Result<DeviceClass> decode_as<DeviceClass>(std::string_view);
template Result<ResourceSlice> decode_as<ResourceSlice>(std::string_view);
template Result<ResourceClaim> decode_as<ResourceClaim>(std::string_view);
template Result<ResourceClaimTemplate> decode_as<ResourceClaimTemplate>(std::string_view);
template Result<Pod> decode_as<Pod>(std::string_view);
template Result<Job> decode_as<Job>(std::string_view);
template Result<ConfigMap> decode_as<ConfigMap>(std::string_view);
template Result<Secret> decode_as<Secret>(std::string_view);
template Result<Node> decode_as<Node>(std::string_view);
template Result<Namespace> decode_as<Namespace>(std::string_view);
template Result<Workload> decode_as<Workload>(std::string_view);
template Result<PodGroup> decode_as<PodGroup>(std::string_view);
template Result<DeviceTaintRule> decode_as<DeviceTaintRule>(std::string_view);
template Result<Deployment> decode_as<Deployment>(std::string_view);
template Result<ReplicaSet> decode_as<ReplicaSet>(std::string_view);

std::string to_json(const Object& object, bool pretty) {
  return internal::to_json_text(internal::encode_object(object), pretty ? 4 : 0);
}

std::string to_yaml(const Object& object) {
  return internal::to_yaml_text(internal::encode_object(object));
}

std::string to_json_list(const std::vector<Object>& objects, bool pretty) {
  JsonValue list = JsonValue::object();
  list.add("kind", JsonValue::string("List"));
  list.add("apiVersion", JsonValue::string("v1"));
  JsonValue items = JsonValue::array();
  for (const Object& o : objects) items.items.push_back(internal::encode_object(o));
  list.add("items", std::move(items));
  return internal::to_json_text(list, pretty ? 4 : 0);
}

std::string to_yaml_stream(const std::vector<Object>& objects) {
  std::string out;
  for (size_t i = 0; i < objects.size(); ++i) {
    if (i > 0) out += "---\n";
    out += to_yaml(objects[i]);
  }
  return out;
}

std::string_view kind_of(const Object& object) { return kKinds[object.index()].name; }

const ObjectMeta& meta_of(const Object& object) {
  return std::visit([](const auto& o) -> const ObjectMeta& { return o.metadata; }, object);
}

ObjectMeta& meta_of(Object& object) {
  return std::visit([](auto& o) -> ObjectMeta& { return o.metadata; }, object);
}

}  // namespace draplane::api
