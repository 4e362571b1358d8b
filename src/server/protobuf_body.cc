#include "server/protobuf_body.h"

#include <functional>

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

Status wrong_type(const std::string& field, uint32_t number) {
  return Status(Code::kBadRequest, "protobuf: " + field + " (field " + std::to_string(number) + ") has the wrong wire type");
}

Status want(const pb::Field& f, pb::WireType type, const std::string& field) {
  return f.type == type ? Status() : wrong_type(field, f.number);
}

// A map<string,string> entry {key = 1, value = 2} into obj[key].
Result<void> read_map_entry(const pb::Field& f, const std::string& field, JsonValue& map, JsonAlloc& a) {
  RETURN_IF_ERROR(want(f, pb::kLengthDelimited, field));
  std::string key, value;
  RETURN_IF_ERROR(each_field(f.bytes, "protobuf: " + field, [&](const pb::Field& e) -> Result<void> {
    if (e.number != 1 && e.number != 2) return Status();
    RETURN_IF_ERROR(want(e, pb::kLengthDelimited, field));
    (e.number == 1 ? key : value) = std::string(e.bytes);
    return Status();
  }));
  if (!map.IsObject()) map.SetObject();
  set_string(map, key, value, a);
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
  return to_string(obj);
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
  }
  return out;
}

}  // namespace draplane::server
