#include "server/protobuf_body.h"

#include <functional>

#include "common/base64.h"
#include "common/utf8.h"
#include "server/internal/api_impl.h"
#include "server/protobuf_wire.h"

namespace draplane::server {
namespace {

constexpr std::string_view kMagic("k8s\0", 4);

using FieldFn = std::function<Result<void>(const pb::Field&)>;

// Calls `on_field` for each field of `msg`; `what` names the message in errors.
Result<void> each_field(std::string_view msg, const std::string& what, const FieldFn& on_field) {
  pb::Reader r(msg);
  pb::Field f;
  for (;;) {
    auto more = r.next(f);
    if (!more.has_value()) return Status(Code::kBadRequest, what + ": " + more.error().message());
    if (!*more) return {};
    RETURN_IF_ERROR(on_field(f));
  }
}

// The JSON of a decoded body: its strings and keys made valid UTF-8 first.
// gogo-protobuf's decoder (Kubernetes') takes string fields unchecked and Go's
// encoding/json then writes each invalid byte as U+FFFD; unchecked bytes here
// made invalid JSON (a lead byte swallowed the next control character).
void coerce_strings(JsonValue& v, JsonAlloc& a) {
  auto fix = [&a](JsonValue& s) {
    std::string_view text(s.GetString(), s.GetStringLength());
    if (valid_utf8(text)) return;
    const std::string valid = coerce_utf8(text);
    s.SetString(valid.data(), static_cast<rapidjson::SizeType>(valid.size()), a);
  };
  if (v.IsString()) {
    fix(v);
  } else if (v.IsArray()) {
    for (auto& e : v.GetArray()) coerce_strings(e, a);
  } else if (v.IsObject()) {
    for (auto& m : v.GetObject()) {
      fix(m.name);
      coerce_strings(m.value, a);
    }
  }
}

std::string body_json(Json& obj) {
  coerce_strings(obj, obj.GetAllocator());
  return to_string(obj);
}

Status wrong_type(const std::string& field, uint32_t number) {
  return Status(Code::kBadRequest, "protobuf: " + field + " (field " + std::to_string(number) + ") has the wrong wire type");
}

Status want(const pb::Field& f, pb::WireType type, const std::string& field) {
  return f.type == type ? Status() : wrong_type(field, f.number);
}

// A map<string,string> entry {key = 1, value = 2} into obj[key].
// A map<string, string> entry {key = 1, value = 2}; a map<string, bytes> one's
// value (`bytes`) is written base64, as JSON carries []byte.
Result<void> read_map_entry(const pb::Field& f, const std::string& field, JsonValue& map, JsonAlloc& a,
                            bool bytes = false) {
  RETURN_IF_ERROR(want(f, pb::kLengthDelimited, field));
  std::string key, value;
  RETURN_IF_ERROR(each_field(f.bytes, "protobuf: " + field, [&](const pb::Field& e) -> Result<void> {
    if (e.number != 1 && e.number != 2) return Status();
    RETURN_IF_ERROR(want(e, pb::kLengthDelimited, field));
    (e.number == 1 ? key : value) = std::string(e.bytes);
    return Status();
  }));
  if (!map.IsObject()) map.SetObject();
  set_string(map, key, bytes ? common::base64_encode(value) : value, a);
  return Status();
}

// metav1.Time {seconds = 1, nanos = 2} as RFC 3339; "" for the zero time.
Result<std::string> read_time(const pb::Field& f, const std::string& field) {
  RETURN_IF_ERROR(want(f, pb::kLengthDelimited, field));
  int64_t seconds = 0;
  RETURN_IF_ERROR(each_field(f.bytes, "protobuf: " + field, [&](const pb::Field& e) -> Result<void> {
    if (e.number == 1) {
      RETURN_IF_ERROR(want(e, pb::kVarint, field + ".seconds"));
      seconds = static_cast<int64_t>(e.value);
    }
    return Status();
  }));
  return seconds == 0 ? std::string() : common::format_rfc3339(seconds);
}

Result<void> read_owner_reference(const pb::Field& f, JsonValue& refs, JsonAlloc& a) {
  const std::string field = "metadata.ownerReferences";
  RETURN_IF_ERROR(want(f, pb::kLengthDelimited, field));
  JsonValue ref(rapidjson::kObjectType);
  // OwnerReference: kind 1, name 3, uid 4, apiVersion 5, controller 6, blockOwnerDeletion 7.
  RETURN_IF_ERROR(each_field(f.bytes, "protobuf: " + field, [&](const pb::Field& e) -> Result<void> {
    static const char* kStrings[] = {nullptr, "kind", nullptr, "name", "uid", "apiVersion"};
    if (e.number == 1 || (e.number >= 3 && e.number <= 5)) {
      RETURN_IF_ERROR(want(e, pb::kLengthDelimited, field + "." + kStrings[e.number]));
      set_string(ref, kStrings[e.number], e.bytes, a);
    } else if (e.number == 6 || e.number == 7) {
      const char* name = e.number == 6 ? "controller" : "blockOwnerDeletion";
      RETURN_IF_ERROR(want(e, pb::kVarint, field + "." + name));
      set_member(ref, name, JsonValue(e.value != 0), a);
    }
    return Status();
  }));
  refs.PushBack(ref, a);
  return Status();
}

Result<void> read_object_meta(std::string_view msg, JsonValue& meta, JsonAlloc& a) {
  JsonValue labels, annotations, refs(rapidjson::kArrayType), finalizers(rapidjson::kArrayType);
  RETURN_IF_ERROR(each_field(msg, "protobuf: metadata", [&](const pb::Field& f) -> Result<void> {
    static const char* kStrings[] = {nullptr, "name", "generateName", "namespace", "selfLink", "uid",
                                     "resourceVersion"};
    switch (f.number) {
      case 1: case 2: case 3: case 5: case 6: {
        std::string field = std::string("metadata.") + kStrings[f.number];
        RETURN_IF_ERROR(want(f, pb::kLengthDelimited, field));
        if (!f.bytes.empty()) set_string(meta, kStrings[f.number], f.bytes, a);
        return Status();
      }
      case 4:  // selfLink: not kept by the API server
      case 9:  // deletionTimestamp and
      case 10:  // deletionGracePeriodSeconds: set by the server only
      case 15:  // clusterName (removed from the API)
      case 17:  // managedFields
        return Status();
      case 7:
        RETURN_IF_ERROR(want(f, pb::kVarint, "metadata.generation"));
        if (f.value != 0) set_member(meta, "generation", JsonValue(static_cast<int64_t>(f.value)), a);
        return Status();
      case 8: {
        ASSIGN_OR_RETURN(std::string t, read_time(f, "metadata.creationTimestamp"));
        if (!t.empty()) set_string(meta, "creationTimestamp", t, a);
        return Status();
      }
      case 11: return read_map_entry(f, "metadata.labels", labels, a);
      case 12: return read_map_entry(f, "metadata.annotations", annotations, a);
      case 13: return read_owner_reference(f, refs, a);
      case 14:
        RETURN_IF_ERROR(want(f, pb::kLengthDelimited, "metadata.finalizers"));
        finalizers.PushBack(JsonValue(f.bytes.data(), static_cast<rapidjson::SizeType>(f.bytes.size()), a), a);
        return Status();
      default:
        return Status(Code::kBadRequest, "protobuf: metadata field " + std::to_string(f.number) +
                                             " is not read by draplane; send the object as JSON");
    }
  }));
  if (labels.IsObject()) set_member(meta, "labels", std::move(labels), a);
  if (annotations.IsObject()) set_member(meta, "annotations", std::move(annotations), a);
  if (!refs.Empty()) set_member(meta, "ownerReferences", std::move(refs), a);
  if (!finalizers.Empty()) set_member(meta, "finalizers", std::move(finalizers), a);
  return Status();
}

// Repeated string field `number` of `msg` into obj[key] (absent when none).
Result<void> read_strings(std::string_view msg, uint32_t number, const std::string& field, JsonValue& obj,
                    const char* key, JsonAlloc& a) {
  JsonValue list(rapidjson::kArrayType);
  RETURN_IF_ERROR(each_field(msg, "protobuf: " + field, [&](const pb::Field& f) -> Result<void> {
    if (f.number != number) return Status();
    RETURN_IF_ERROR(want(f, pb::kLengthDelimited, field + "." + key));
    list.PushBack(JsonValue(f.bytes.data(), static_cast<rapidjson::SizeType>(f.bytes.size()), a), a);
    return Status();
  }));
  if (!list.Empty()) set_member(obj, key, std::move(list), a);
  return Status();
}

// v1.Namespace {metadata = 1, spec = 2 {finalizers = 1}, status = 3 {phase = 1}}.
Result<std::string> namespace_json(std::string_view raw, const std::string& api_version) {
  Json obj(rapidjson::kObjectType);
  auto& a = obj.GetAllocator();
  set_string(obj, "apiVersion", api_version, a);
  set_string(obj, "kind", "Namespace", a);
  JsonValue meta(rapidjson::kObjectType), spec(rapidjson::kObjectType), status(rapidjson::kObjectType);
  RETURN_IF_ERROR(each_field(raw, "protobuf: Namespace", [&](const pb::Field& f) -> Result<void> {
    if (f.number == 1) {
      RETURN_IF_ERROR(want(f, pb::kLengthDelimited, "metadata"));
      return read_object_meta(f.bytes, meta, a);
    }
    if (f.number == 2) {
      RETURN_IF_ERROR(want(f, pb::kLengthDelimited, "spec"));
      return read_strings(f.bytes, 1, "spec", spec, "finalizers", a);
    }
    if (f.number == 3) {
      RETURN_IF_ERROR(want(f, pb::kLengthDelimited, "status"));
      return each_field(f.bytes, "protobuf: status", [&](const pb::Field& s) -> Result<void> {
        if (s.number != 1) return Status();  // conditions are the server's
        RETURN_IF_ERROR(want(s, pb::kLengthDelimited, "status.phase"));
        if (!s.bytes.empty()) set_string(status, "phase", s.bytes, a);
        return Status();
      });
    }
    return Status();
  }));
  set_member(obj, "metadata", std::move(meta), a);
  if (spec.MemberCount() > 0) set_member(obj, "spec", std::move(spec), a);
  if (status.MemberCount() > 0) set_member(obj, "status", std::move(status), a);
  return body_json(obj);
}

// v1.ConfigMap {metadata = 1, data = 2, binaryData = 3 (bytes), immutable = 4} and
// v1.Secret {metadata = 1, data = 2 (bytes), type = 3, stringData = 4, immutable = 5}
// (kubectl create configmap / secret).
Result<std::string> config_json(std::string_view raw, const std::string& api_version, const std::string& kind) {
  bool secret = kind == "Secret";
  Json obj(rapidjson::kObjectType);
  auto& a = obj.GetAllocator();
  set_string(obj, "apiVersion", api_version, a);
  set_string(obj, "kind", kind, a);
  JsonValue meta(rapidjson::kObjectType), data, binary_data, string_data;
  std::string type;
  std::optional<bool> immutable;
  auto read_immutable = [&](const pb::Field& f) -> Result<void> {
    RETURN_IF_ERROR(want(f, pb::kVarint, "immutable"));
    immutable = f.value != 0;
    return Status();
  };
  RETURN_IF_ERROR(each_field(raw, "protobuf: " + kind, [&](const pb::Field& f) -> Result<void> {
    switch (f.number) {
      case 1:
        RETURN_IF_ERROR(want(f, pb::kLengthDelimited, "metadata"));
        return read_object_meta(f.bytes, meta, a);
      case 2: return read_map_entry(f, "data", data, a, secret);
      case 3:
        if (!secret) return read_map_entry(f, "binaryData", binary_data, a, true);
        RETURN_IF_ERROR(want(f, pb::kLengthDelimited, "type"));
        type = std::string(f.bytes);
        return Status();
      case 4:
        return secret ? read_map_entry(f, "stringData", string_data, a) : read_immutable(f);
      case 5:
        return secret ? read_immutable(f) : Status();
      default:
        return Status();
    }
  }));
  set_member(obj, "metadata", std::move(meta), a);
  if (immutable) set_member(obj, "immutable", JsonValue(*immutable), a);
  if (data.IsObject()) set_member(obj, "data", std::move(data), a);
  if (binary_data.IsObject()) set_member(obj, "binaryData", std::move(binary_data), a);
  if (string_data.IsObject()) set_member(obj, "stringData", std::move(string_data), a);
  if (!type.empty()) set_string(obj, "type", type, a);
  return body_json(obj);
}

// ---- apps/v1 Deployment and batch/v1 Job: the subset kubectl create deployment
// and kubectl create job send (generated.proto numbers). A field outside it is a
// 400 that asks for JSON rather than a silently dropped member.

enum class PbKind { kString, kStrings, kPtrInt, kInt, kPtrBool, kBool, kStringMap, kQuantityMap, kMessage, kMessages,
                    kMeta, kSkip };
struct PbMessage;
struct PbField {
  uint32_t number;
  const char* name;
  PbKind kind;
  const PbMessage* message = nullptr;
};
struct PbMessage {
  const char* name;
  std::vector<PbField> fields;
};

const PbMessage kQuantityRequirements{"resources", {{1, "limits", PbKind::kQuantityMap},
                                                    {2, "requests", PbKind::kQuantityMap}}};
const PbMessage kContainer{"container",
                           {{1, "name", PbKind::kString}, {2, "image", PbKind::kString},
                            {3, "command", PbKind::kStrings}, {4, "args", PbKind::kStrings},
                            {5, "workingDir", PbKind::kString}, {8, "resources", PbKind::kMessage, &kQuantityRequirements},
                            {13, "terminationMessagePath", PbKind::kString}, {14, "imagePullPolicy", PbKind::kString},
                            {20, "terminationMessagePolicy", PbKind::kString}, {16, "stdin", PbKind::kBool},
                            {17, "stdinOnce", PbKind::kBool}, {18, "tty", PbKind::kBool}}};
const PbMessage kEmpty{"securityContext", {}};
const PbMessage kPodSpec{"spec", {{2, "containers", PbKind::kMessages, &kContainer},
                                  {3, "restartPolicy", PbKind::kString},
                                  {4, "terminationGracePeriodSeconds", PbKind::kPtrInt},
                                  {6, "dnsPolicy", PbKind::kString},
                                  {8, "serviceAccountName", PbKind::kString},
                                  {10, "nodeName", PbKind::kString},
                                  {14, "securityContext", PbKind::kMessage, &kEmpty},
                                  {19, "schedulerName", PbKind::kString},
                                  {20, "initContainers", PbKind::kMessages, &kContainer}}};
const PbMessage kTemplate{"template", {{1, "metadata", PbKind::kMeta}, {2, "spec", PbKind::kMessage, &kPodSpec}}};
const PbMessage kRequirement{"matchExpressions", {{1, "key", PbKind::kString}, {2, "operator", PbKind::kString},
                                                  {3, "values", PbKind::kStrings}}};
const PbMessage kSelector{"selector", {{1, "matchLabels", PbKind::kStringMap},
                                       {2, "matchExpressions", PbKind::kMessages, &kRequirement}}};
const PbMessage kStrategy{"strategy", {{1, "type", PbKind::kString}}};
const PbMessage kDeploymentSpec{"spec", {{1, "replicas", PbKind::kPtrInt}, {2, "selector", PbKind::kMessage, &kSelector},
                                         {3, "template", PbKind::kMessage, &kTemplate},
                                         {4, "strategy", PbKind::kMessage, &kStrategy},
                                         {5, "minReadySeconds", PbKind::kInt},
                                         {6, "revisionHistoryLimit", PbKind::kPtrInt}, {7, "paused", PbKind::kBool},
                                         {9, "progressDeadlineSeconds", PbKind::kPtrInt}}};
const PbMessage kJobSpec{"spec", {{1, "parallelism", PbKind::kPtrInt}, {2, "completions", PbKind::kPtrInt},
                                  {3, "activeDeadlineSeconds", PbKind::kPtrInt},
                                  {4, "selector", PbKind::kMessage, &kSelector}, {5, "manualSelector", PbKind::kPtrBool},
                                  {6, "template", PbKind::kMessage, &kTemplate}, {7, "backoffLimit", PbKind::kPtrInt},
                                  {8, "ttlSecondsAfterFinished", PbKind::kPtrInt},
                                  {9, "completionMode", PbKind::kString}, {10, "suspend", PbKind::kPtrBool},
                                  {12, "backoffLimitPerIndex", PbKind::kPtrInt}}};
const PbMessage kDeployment{"Deployment", {{1, "metadata", PbKind::kMeta},
                                           {2, "spec", PbKind::kMessage, &kDeploymentSpec},
                                           {3, "status", PbKind::kSkip}}};
const PbMessage kJob{"Job", {{1, "metadata", PbKind::kMeta}, {2, "spec", PbKind::kMessage, &kJobSpec},
                             {3, "status", PbKind::kSkip}}};

JsonValue json_string(std::string_view s, JsonAlloc& a) {
  return JsonValue(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
}

// A map<string, Quantity> entry {key = 1, value = 2 {string = 1}}.
Result<void> read_quantity_entry(const pb::Field& f, const std::string& field, JsonValue& map, JsonAlloc& a) {
  RETURN_IF_ERROR(want(f, pb::kLengthDelimited, field));
  std::string key, value;
  RETURN_IF_ERROR(each_field(f.bytes, "protobuf: " + field, [&](const pb::Field& e) -> Result<void> {
    RETURN_IF_ERROR(want(e, pb::kLengthDelimited, field));
    if (e.number == 1) key = std::string(e.bytes);
    if (e.number != 2) return Status();
    return each_field(e.bytes, "protobuf: " + field, [&](const pb::Field& q) -> Result<void> {
      if (q.number == 1) value = std::string(q.bytes);
      return Status();
    });
  }));
  if (!map.IsObject()) map.SetObject();
  set_string(map, key, value, a);
  return Status();
}

Result<void> read_message(std::string_view bytes, const PbMessage& m, const std::string& path, JsonValue& out,
                          JsonAlloc& a);

// One field of `m` into `out`: scalars as JSON values, the zero values of
// non-pointer fields (which gogo-protobuf always writes) left out.
Result<void> read_pb_field(const pb::Field& f, const PbField& d, const std::string& path, JsonValue& out,
                           JsonAlloc& a) {
  std::string field = path + d.name;
  bool varint = d.kind == PbKind::kPtrInt || d.kind == PbKind::kInt || d.kind == PbKind::kPtrBool ||
                d.kind == PbKind::kBool;
  if (d.kind == PbKind::kSkip) return Status();
  if (d.kind != PbKind::kStringMap && d.kind != PbKind::kQuantityMap) {
    RETURN_IF_ERROR(want(f, varint ? pb::kVarint : pb::kLengthDelimited, field));
  }
  auto member = [&]() -> JsonValue& {
    if (find(out, {d.name}) == nullptr) set_member(out, d.name, JsonValue(), a);
    return *find(out, {d.name});
  };
  switch (d.kind) {
    case PbKind::kString:
      if (!f.bytes.empty()) set_string(out, d.name, f.bytes, a);
      return Status();
    case PbKind::kStrings: {
      JsonValue& list = member();
      if (!list.IsArray()) list.SetArray();
      list.PushBack(json_string(f.bytes, a), a);
      return Status();
    }
    case PbKind::kPtrInt:
    case PbKind::kInt: {
      // int32 fields carry negative values sign-extended to 64 bits.
      auto v = static_cast<int64_t>(f.value);
      if (d.kind == PbKind::kPtrInt || v != 0) set_member(out, d.name, JsonValue(v), a);
      return Status();
    }
    case PbKind::kPtrBool:
    case PbKind::kBool:
      if (d.kind == PbKind::kPtrBool || f.value != 0) set_member(out, d.name, JsonValue(f.value != 0), a);
      return Status();
    case PbKind::kStringMap: return read_map_entry(f, field, member(), a);
    case PbKind::kQuantityMap: return read_quantity_entry(f, field, member(), a);
    case PbKind::kMeta: {
      JsonValue& meta = member();
      if (!meta.IsObject()) meta.SetObject();
      return read_object_meta(f.bytes, meta, a);
    }
    case PbKind::kMessage: {
      JsonValue& obj = member();
      if (!obj.IsObject()) obj.SetObject();
      return read_message(f.bytes, *d.message, field + ".", obj, a);
    }
    case PbKind::kMessages: {
      JsonValue& list = member();
      if (!list.IsArray()) list.SetArray();
      JsonValue item(rapidjson::kObjectType);
      RETURN_IF_ERROR(read_message(f.bytes, *d.message, field + ".", item, a));
      list.PushBack(item, a);
      return Status();
    }
    case PbKind::kSkip: return Status();
  }
  return Status();
}

Result<void> read_message(std::string_view bytes, const PbMessage& m, const std::string& path, JsonValue& out,
                          JsonAlloc& a) {
  return each_field(bytes, "protobuf: " + std::string(m.name), [&](const pb::Field& f) -> Result<void> {
    for (const PbField& d : m.fields) {
      if (d.number == f.number) return read_pb_field(f, d, path, out, a);
    }
    // gogo-protobuf writes the non-pointer fields it was not given as zeros.
    bool zero = (f.type == pb::kVarint && f.value == 0) || (f.type == pb::kLengthDelimited && f.bytes.empty());
    if (zero) return Status();
    return Status(Code::kBadRequest, "protobuf: " + path + " field " + std::to_string(f.number) +
                                         " is not read by draplane; send the object as JSON");
  });
}

Result<std::string> workload_json(std::string_view raw, const std::string& api_version, const std::string& kind) {
  Json obj(rapidjson::kObjectType);
  auto& a = obj.GetAllocator();
  set_string(obj, "apiVersion", api_version, a);
  set_string(obj, "kind", kind, a);
  RETURN_IF_ERROR(read_message(raw, kind == "Job" ? kJob : kDeployment, "", obj, a));
  return body_json(obj);
}

}  // namespace

Result<ProtobufBody> decode_protobuf_body(std::string_view body) {
  if (body.substr(0, kMagic.size()) != kMagic) {
    return Status(Code::kBadRequest, "protobuf: the body does not start with the Kubernetes protobuf magic \"k8s\\x00\"");
  }
  ProtobufBody out;
  std::string_view raw;
  std::string encoding;
  RETURN_IF_ERROR(each_field(body.substr(kMagic.size()), "protobuf: envelope", [&](const pb::Field& f) -> Result<void> {
    switch (f.number) {
      case 1:  // typeMeta
        RETURN_IF_ERROR(want(f, pb::kLengthDelimited, "typeMeta"));
        return each_field(f.bytes, "protobuf: typeMeta", [&](const pb::Field& t) -> Result<void> {
          if (t.number != 1 && t.number != 2) return Status();
          RETURN_IF_ERROR(want(t, pb::kLengthDelimited, t.number == 1 ? "typeMeta.apiVersion" : "typeMeta.kind"));
          (t.number == 1 ? out.api_version : out.kind) = std::string(t.bytes);
          return Status();
        });
      case 2:
        RETURN_IF_ERROR(want(f, pb::kLengthDelimited, "raw"));
        raw = f.bytes;
        return Status();
      case 3:
        RETURN_IF_ERROR(want(f, pb::kLengthDelimited, "contentEncoding"));
        encoding = std::string(f.bytes);
        return Status();
      default:
        return Status();  // contentType (4): the envelope's own type
    }
  }));
  if (!encoding.empty()) {
    return Status(Code::kBadRequest, "protobuf: contentEncoding \"" + encoding + "\" is not supported");
  }
  if (out.kind.empty()) return Status(Code::kBadRequest, "protobuf: the envelope has no typeMeta.kind");
  if (out.api_version == "v1" && out.kind == "Namespace") {
    ASSIGN_OR_RETURN(out.json, namespace_json(raw, out.api_version));
    out.supported = true;
  } else if (out.api_version == "v1" && (out.kind == "ConfigMap" || out.kind == "Secret")) {
    ASSIGN_OR_RETURN(out.json, config_json(raw, out.api_version, out.kind));
    out.supported = true;
  } else if ((out.api_version == "apps/v1" && out.kind == "Deployment") ||
             (out.api_version == "batch/v1" && out.kind == "Job")) {
    ASSIGN_OR_RETURN(out.json, workload_json(raw, out.api_version, out.kind));
    out.supported = true;
  }
  return out;
}

}  // namespace draplane::server
