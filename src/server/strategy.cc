// The default strategy (untyped kinds) and what every strategy inherits.
#include "server/strategy.h"

#include "server/internal/api_impl.h"

namespace draplane::server {

std::optional<ApiError> Strategy::prepare_for_create(const StrategyContext&, Json&, std::vector<std::string>&) const {
  return std::nullopt;
}

std::optional<ApiError> Strategy::validate_create(const StrategyContext&, Json&, std::vector<std::string>&) const {
  return std::nullopt;
}

bool Strategy::main_resource_resets_status(const ResourceInfo& r) const { return r.has_subresource("status"); }

void Strategy::prepare_for_update(const ResourceInfo& r, const JsonValue& old, Json& object) const {
  if (!main_resource_resets_status(r)) return;
  const JsonValue* st = find(old, {"status"});
  if (st) set_member(object, "status", JsonValue(*st, object.GetAllocator()), object.GetAllocator());
  else remove_member(object, "status");
}

std::optional<ApiError> Strategy::validate_update(const StrategyContext&, const JsonValue&, Json&, const std::string&,
                                                  std::vector<std::string>&) const {
  return std::nullopt;
}

void Strategy::apply_defaults(const StrategyContext&, Json&) const {}

void Strategy::before_remove(RegistryHooks&, const std::string&) const {}

void Strategy::after_delete(RegistryHooks&, const std::string&, int64_t) const {}

Result<std::string> Strategy::field_label(const ResourceInfo&, const std::string& label) const { return label; }

bool Strategy::selectable_field(const std::string& path) const {
  return path == "metadata.name" || path == "metadata.namespace";
}

std::string Strategy::field_value(const JsonValue& object, const std::string& path) const {
  // A dotted path of object members; the string there, "" when unset or not a string.
  const JsonValue* at = &object;
  size_t begin = 0;
  for (;;) {
    size_t dot = path.find('.', begin);
    std::string_view key = std::string_view(path).substr(begin, dot == std::string::npos ? std::string::npos : dot - begin);
    if (!at->IsObject()) return "";
    auto m = at->FindMember(JsonValue(rapidjson::StringRef(key.data(), key.size())));
    if (m == at->MemberEnd()) return "";
    at = &m->value;
    if (dot == std::string::npos) break;
    begin = dot + 1;
  }
  return at->IsString() ? std::string(at->GetString(), at->GetStringLength()) : "";
}

std::string Strategy::unsupported_field(const ResourceInfo&, const std::string& label) const {
  // runtime's DefaultMetaV1FieldSelectorConversion.
  return "\"" + label + "\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"";
}

std::vector<TableColumn> Strategy::table_columns() const { return {{"Name", "string", 0, "name"}, {"Age", "string", 0}}; }

std::vector<TableCell> Strategy::table_cells(const JsonValue& object, int64_t now) const {
  return {get_string(object, {"metadata", "name"}), table_age(object, now)};
}

const Strategy& default_strategy() { return the_strategy<Strategy>(); }

const Strategy& strategy_of(const ResourceInfo& r) { return r.strategy ? *r.strategy : default_strategy(); }

std::string table_age(const JsonValue& o, int64_t now) {
  int64_t t = common::parse_rfc3339(get_string(o, {"metadata", "creationTimestamp"})).value_or(-1);
  return t < 0 ? "<unknown>" : human_duration(now - t);
}

std::string or_none(std::string s) { return s.empty() ? "<none>" : s; }

int64_t array_size(const JsonValue& o, std::initializer_list<std::string_view> path) {
  const JsonValue* v = find(o, path);
  return v && v->IsArray() ? static_cast<int64_t>(v->Size()) : 0;
}

}  // namespace draplane::server
