// Event (core/v1, and events.k8s.io/v1 served by conversion): untyped, validated
// as ValidateEventCreate / ValidateEventUpdate; the field labels of
// AddFieldLabelConversionsForEvent (events.k8s.io names mapped onto them);
// kubectl's event columns (printEvent).
#include <algorithm>

#include "server/internal/api_impl.h"
#include "server/internal/event_conversion.h"
#include "server/strategies.h"

namespace draplane::server {
namespace {

class EventStrategy final : public Strategy {
 public:
  std::optional<ApiError> validate_create(const StrategyContext& c, Json& object, std::vector<std::string>&) const override {
    api::FieldErrorList errs = validate_event_create(c.resource, object);
    if (!errs.empty()) return invalid(c.resource, get_string(object, {"metadata", "name"}), std::move(errs));
    return std::nullopt;
  }
  std::optional<ApiError> validate_update(const StrategyContext& c, const JsonValue& old, Json& object,
                                          const std::string&, std::vector<std::string>&) const override {
    api::FieldErrorList errs = validate_event_update(c.resource, old, object);
    if (!errs.empty()) return invalid(c.resource, get_string(object, {"metadata", "name"}), std::move(errs));
    return std::nullopt;
  }

  // Selection runs on the stored core/v1 form: events.k8s.io labels are renamed.
  Result<std::string> field_label(const ResourceInfo& r, const std::string& label) const override {
    std::string mapped = event_field_label(r, label);
    if (mapped.empty()) return Status(Code::kBadRequest, core_unsupported_field(label));
    return mapped;
  }
  bool selectable_field(const std::string& path) const override {
    static const char* kEventFields[] = {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                                         "involvedObject.uid", "involvedObject.apiVersion",
                                         "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason",
                                         "reportingComponent", "source", "type"};
    return Strategy::selectable_field(path) ||
           std::find(std::begin(kEventFields), std::end(kEventFields), path) != std::end(kEventFields);
  }
  std::string field_value(const JsonValue& obj, const std::string& path) const override {
    if (path == "source") {
      // An event written through events.k8s.io has no source: its reporting
      // controller stands in (ToSelectableFields).
      std::string component = get_string(obj, {"source", "component"});
      return component.empty() ? get_string(obj, {"reportingComponent"}) : component;
    }
    return Strategy::field_value(obj, path);
  }
  // The core kind's conversion function names it; events.k8s.io has runtime's default.
  std::string unsupported_field(const ResourceInfo& r, const std::string& label) const override {
    return r.group.empty() ? core_unsupported_field(label) : Strategy::unsupported_field(r, label);
  }

  std::vector<TableColumn> table_columns() const override {
    return {{"Last Seen", "string", 0}, {"Type", "string", 0},    {"Reason", "string", 0},
            {"Object", "string", 0},    {"Subobject", "string", 1}, {"Source", "string", 1},
            {"Message", "string", 0},   {"First Seen", "string", 1}, {"Count", "integer", 1},
            {"Name", "string", 1}};
  }
  // printEvent: the core/v1 view of either version.
  std::vector<TableCell> table_cells(const JsonValue& served, int64_t now) const override {
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
    return {last, get_string(o, {"type"}), get_string(o, {"reason"}), object,
            get_string(o, {"involvedObject", "fieldPath"}), source, message, first, count,
            get_string(o, {"metadata", "name"})};
  }
};

}  // namespace

const Strategy& event_strategy() { return the_strategy<EventStrategy>(); }

}  // namespace draplane::server
