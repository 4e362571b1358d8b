// events.k8s.io/v1 Event served by conversion from the stored core/v1 Event,
// as kube-apiserver keeps one Event and serves it in both groups
// (k8s.io/kubernetes pkg/apis/events/v1/conversion.go): regarding is
// involvedObject, note is message, reportingController is reportingComponent,
// and the core fields without a new name (source, firstTimestamp,
// lastTimestamp, count) are the deprecated* fields. The field selectors of the
// new group map onto the core ones (AddFieldLabelConversionsForEvent), and the
// validation is pkg/apis/core/validation/events.go.
#include "server/internal/event_conversion.h"

#include <utility>

namespace draplane::server {
namespace {

// How a field appears when the source has no value, as Go's encoding/json
// writes the target type: omitted (omitempty scalars and pointers), null
// (metav1.Time and MicroTime), {} (structs, which omitempty keeps).
enum class Absent { kOmit, kNull, kEmptyObject, kEmptyString };

struct FieldMap {
  const char* core;
  const char* events;
  Absent in_core;    // when converting to core/v1
  Absent in_events;  // when converting to events.k8s.io/v1
};

// In the target type's field order (events.k8s.io/v1 Event), which is also
// how the core form is written (its order differs; clients do not care).
constexpr FieldMap kFields[] = {
    {"eventTime", "eventTime", Absent::kNull, Absent::kNull},
    {"series", "series", Absent::kOmit, Absent::kOmit},
    {"reportingComponent", "reportingController", Absent::kEmptyString, Absent::kOmit},
    {"reportingInstance", "reportingInstance", Absent::kEmptyString, Absent::kOmit},
    {"action", "action", Absent::kOmit, Absent::kOmit},
    {"reason", "reason", Absent::kOmit, Absent::kOmit},
    {"involvedObject", "regarding", Absent::kEmptyObject, Absent::kEmptyObject},
    {"related", "related", Absent::kOmit, Absent::kOmit},
    {"message", "note", Absent::kOmit, Absent::kOmit},
    {"type", "type", Absent::kOmit, Absent::kOmit},
    {"source", "deprecatedSource", Absent::kEmptyObject, Absent::kEmptyObject},
    {"firstTimestamp", "deprecatedFirstTimestamp", Absent::kNull, Absent::kNull},
    {"lastTimestamp", "deprecatedLastTimestamp", Absent::kNull, Absent::kNull},
    {"count", "deprecatedCount", Absent::kOmit, Absent::kOmit},
};

bool empty_value(const JsonValue& v) {
  if (v.IsNull()) return true;
  if (v.IsString()) return v.GetStringLength() == 0;
  if (v.IsInt64()) return v.GetInt64() == 0;
  return false;
}

void convert(Json& object, bool to_events) {
  if (!object.IsObject()) return;
  auto& a = object.GetAllocator();
  JsonValue out(rapidjson::kObjectType);
  auto move_member = [&](const char* name) {
    auto it = object.FindMember(name);
    if (it != object.MemberEnd()) out.AddMember(JsonValue(name, a), JsonValue(it->value, a), a);
  };
  out.AddMember("kind", "Event", a);
  out.AddMember("apiVersion", JsonValue(to_events ? "events.k8s.io/v1" : "v1", a), a);
  move_member("metadata");
  for (const FieldMap& f : kFields) {
    const char* from = to_events ? f.core : f.events;
    const char* to = to_events ? f.events : f.core;
    Absent absent = to_events ? f.in_events : f.in_core;
    auto it = object.FindMember(from);
    if (it != object.MemberEnd() && !(absent == Absent::kOmit && empty_value(it->value))) {
      out.AddMember(JsonValue(to, a), JsonValue(it->value, a), a);
      continue;
    }
    switch (absent) {
      case Absent::kOmit: break;
      case Absent::kNull: out.AddMember(JsonValue(to, a), JsonValue(), a); break;
      case Absent::kEmptyObject: out.AddMember(JsonValue(to, a), JsonValue(rapidjson::kObjectType), a); break;
      case Absent::kEmptyString: out.AddMember(JsonValue(to, a), JsonValue("", a), a); break;
    }
  }
  object.SetObject();
  for (auto& m : out.GetObject()) object.AddMember(m.name, m.value, a);
}

std::string str(const JsonValue& o, const char* key) { return get_string(o, {key}); }
bool has_time(const JsonValue& o, const char* key) { return !get_string(o, {key}).empty(); }
int64_t int_of(const JsonValue& o, std::initializer_list<std::string_view> path) {
  const JsonValue* v = find(o, path);
  return v && v->IsInt64() ? v->GetInt64() : 0;
}

// Go's IsDNS1123Subdomain, the namespace check of every Event.
bool dns_subdomain(const std::string& s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (start <= s.size()) {
    size_t dot = s.find('.', start);
    std::string label = s.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (label.empty()) return false;
    for (size_t i = 0; i < label.size(); ++i) {
      char c = label[i];
      bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
      if (!alnum && !(c == '-' && i > 0 && i + 1 < label.size())) return false;
    }
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return true;
}

// legacyValidateEvent, on the stored (core/v1) form; `events_v1` names the
// fields as that version does.
api::FieldErrorList legacy_validate(const JsonValue& e, bool events_v1) {
  api::FieldErrorList errs;
  using api::FieldPath;
  std::string ns = get_string(e, {"metadata", "namespace"});
  std::string involved_ns = get_string(e, {"involvedObject", "namespace"});
  FieldPath involved_ns_path = FieldPath("involvedObject").child("namespace");
  if (!has_time(e, "eventTime")) {
    // Old-style events: the namespace follows the object's ("default" or none for cluster objects).
    if (involved_ns.empty() ? (!ns.empty() && ns != "default") : ns != involved_ns) {
      errs.push_back(api::field_invalid(involved_ns_path, involved_ns, "does not match event.namespace"));
    }
  } else {
    if (involved_ns.empty() && ns != "default" && ns != "kube-system") {
      errs.push_back(api::field_invalid(involved_ns_path, involved_ns, "does not match event.namespace"));
    }
    const char* controller = events_v1 ? "reportingController" : "reportingComponent";
    std::string rc = str(e, "reportingComponent");
    if (rc.empty()) errs.push_back(api::field_required(FieldPath(controller)));
    auto limit = [&](const char* field, const std::string& v, size_t max) {
      if (v.size() > max) {
        errs.push_back(api::field_invalid(FieldPath(field), "", "can have at most " + std::to_string(max) + " characters"));
      }
    };
    std::string ri = str(e, "reportingInstance"), action = str(e, "action"), reason = str(e, "reason");
    if (ri.empty()) errs.push_back(api::field_required(FieldPath("reportingInstance")));
    limit("reportingInstance", ri, 128);
    if (action.empty()) errs.push_back(api::field_required(FieldPath("action")));
    limit("action", action, 128);
    if (reason.empty()) errs.push_back(api::field_required(FieldPath("reason")));
    limit("reason", reason, 128);
    limit("message", str(e, "message"), 1024);
  }
  if (!dns_subdomain(ns)) {
    errs.push_back(api::field_invalid(FieldPath("namespace"), ns,
                                      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                                      "characters, '-' or '.', and must start and end with an alphanumeric character "
                                      "(e.g. 'example.com', regex used for validation is "
                                      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"));
  }
  return errs;
}

api::FieldErrorList validate_series(const JsonValue& e) {
  api::FieldErrorList errs;
  const JsonValue* series = find(e, {"series"});
  if (series == nullptr || series->IsNull()) return errs;
  if (int_of(e, {"series", "count"}) < 2) {
    errs.push_back(api::field_invalid(api::FieldPath("series.count"), "", "should be at least 2"));
  }
  if (get_string(*series, {"lastObservedTime"}).empty()) {
    errs.push_back(api::field_required(api::FieldPath("series.lastObservedTime")));
  }
  return errs;
}

}  // namespace

bool is_events_v1(const ResourceInfo& r) { return r.group == "events.k8s.io"; }

void event_to_core(Json& object) { convert(object, false); }
void event_to_events_v1(Json& object) { convert(object, true); }

std::string event_field_label(const ResourceInfo& r, const std::string& label) {
  if (!is_events_v1(r)) return label;
  static const std::pair<const char*, const char*> kMap[] = {
      {"reason", "reason"},
      {"regarding.kind", "involvedObject.kind"},
      {"regarding.namespace", "involvedObject.namespace"},
      {"regarding.name", "involvedObject.name"},
      {"regarding.uid", "involvedObject.uid"},
      {"regarding.apiVersion", "involvedObject.apiVersion"},
      {"regarding.resourceVersion", "involvedObject.resourceVersion"},
      {"regarding.fieldPath", "involvedObject.fieldPath"},
      {"reportingController", "reportingComponent"},
      {"source", "source"},
      {"type", "type"},
      {"metadata.namespace", "metadata.namespace"},
      {"metadata.name", "metadata.name"},
  };
  for (const auto& [from, to] : kMap) {
    if (label == from) return to;
  }
  return "";
}

api::FieldErrorList validate_event_create(const ResourceInfo& r, const JsonValue& stored_form) {
  api::FieldErrorList errs = legacy_validate(stored_form, is_events_v1(r));
  if (!is_events_v1(r)) return errs;
  // Strict validation of events created through events.k8s.io/v1.
  api::append_errors(errs, validate_series(stored_form));
  using api::FieldPath;
  if (!has_time(stored_form, "eventTime")) errs.push_back(api::field_required(FieldPath("eventTime")));
  std::string type = str(stored_form, "type");
  if (type != "Normal" && type != "Warning") {
    errs.push_back(api::field_invalid(FieldPath("type"), "", "has invalid value: " + type));
  }
  if (has_time(stored_form, "firstTimestamp")) {
    errs.push_back(api::field_invalid(FieldPath("deprecatedFirstTimestamp"), "", "needs to be unset"));
  }
  if (has_time(stored_form, "lastTimestamp")) {
    errs.push_back(api::field_invalid(FieldPath("deprecatedLastTimestamp"), "", "needs to be unset"));
  }
  if (int_of(stored_form, {"count"}) != 0) {
    errs.push_back(api::field_invalid(FieldPath("deprecatedCount"), "", "needs to be unset"));
  }
  if (!get_string(stored_form, {"source", "component"}).empty() || !get_string(stored_form, {"source", "host"}).empty()) {
    errs.push_back(api::field_invalid(FieldPath("deprecatedSource"), "", "needs to be unset"));
  }
  return errs;
}

api::FieldErrorList validate_event_update(const ResourceInfo& r, const JsonValue& old_form, const JsonValue& stored_form) {
  api::FieldErrorList errs = legacy_validate(stored_form, is_events_v1(r));
  if (!is_events_v1(r)) return errs;
  const JsonValue* s_new = find(stored_form, {"series"});
  const JsonValue* s_old = find(old_form, {"series"});
  bool same = (s_new == nullptr || s_new->IsNull()) ? (s_old == nullptr || s_old->IsNull())
                                                    : (s_old != nullptr && *s_new == *s_old);
  if (!same) api::append_errors(errs, validate_series(stored_form));
  // What an events.k8s.io/v1 update may not change (ValidateEventUpdate).
  static const std::pair<const char*, const char*> kImmutable[] = {
      {"involvedObject", "involvedObject"}, {"reason", "reason"},       {"message", "message"},
      {"source", "source"},                 {"firstTimestamp", "firstTimestamp"},
      {"lastTimestamp", "lastTimestamp"},   {"count", "count"},         {"type", "type"},
      {"action", "action"},                 {"related", "related"},     {"eventTime", "eventTime"},
      {"reportingComponent", "reportingController"}, {"reportingInstance", "reportingInstance"},
  };
  for (const auto& [field, name] : kImmutable) {
    const JsonValue* a = find(old_form, {field});
    const JsonValue* b = find(stored_form, {field});
    bool a_empty = a == nullptr || empty_value(*a) || (a->IsObject() && a->MemberCount() == 0);
    bool b_empty = b == nullptr || empty_value(*b) || (b->IsObject() && b->MemberCount() == 0);
    if (a_empty && b_empty) continue;
    if (a != nullptr && b != nullptr && *a == *b) continue;
    errs.push_back(api::field_invalid(api::FieldPath(name), api::BadValue::raw(b ? to_string(*b) : "null"),
                                      "field is immutable"));
  }
  return errs;
}

}  // namespace draplane::server
