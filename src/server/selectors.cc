#include "server/selectors.h"

#include <algorithm>

#include "server/internal/event_conversion.h"

namespace draplane::server {
namespace {

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

// Splits on commas outside parentheses.
std::vector<std::string> split_terms(std::string_view text) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : text) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty() || !out.empty()) out.push_back(trim(cur));
  return out;
}

bool satisfies(const Selector::Requirement& r, bool present, const std::string& value) {
  auto in = [&] { return std::find(r.values.begin(), r.values.end(), value) != r.values.end(); };
  switch (r.op) {
    case Selector::Op::kEq: return present && value == r.values[0];
    case Selector::Op::kNotEq: return !present || value != r.values[0];
    case Selector::Op::kIn: return present && in();
    case Selector::Op::kNotIn: return !present || !in();
    case Selector::Op::kExists: return present;
    case Selector::Op::kNotExists: return !present;
  }
  return false;
}

std::string field_value(const JsonValue& obj, const std::string& path, bool* present) {
  *present = true;
  if (path == "metadata.name") return get_string(obj, {"metadata", "name"});
  if (path == "metadata.namespace") return get_string(obj, {"metadata", "namespace"});
  if (path == "spec.nodeName") return get_string(obj, {"spec", "nodeName"});
  if (path == "spec.driver") return get_string(obj, {"spec", "driver"});
  if (path == "status.phase") return get_string(obj, {"status", "phase"});
  if (path == "reason") return get_string(obj, {"reason"});
  if (path == "type") return get_string(obj, {"type"});
  if (path == "reportingComponent") return get_string(obj, {"reportingComponent"});
  if (path == "source") {
    // An event written through events.k8s.io has no source: its reporting
    // controller stands in (ToSelectableFields).
    std::string component = get_string(obj, {"source", "component"});
    return component.empty() ? get_string(obj, {"reportingComponent"}) : component;
  }
  if (path == "spec.unschedulable") {
    const JsonValue* u = find(obj, {"spec", "unschedulable"});
    return u && u->IsBool() && u->GetBool() ? "true" : "false";
  }
  if (path.rfind("involvedObject.", 0) == 0) {
    std::string sub = path.substr(15);
    return get_string(obj, {"involvedObject", sub});
  }
  *present = false;
  return "";
}

bool field_supported(const std::string& path, const ResourceInfo& r) {
  if (path == "metadata.name" || path == "metadata.namespace") return true;
  if (r.resource == "pods") return path == "spec.nodeName" || path == "status.phase";
  if (r.resource == "resourceslices") return path == "spec.nodeName" || path == "spec.driver";
  if (r.resource == "nodes") return path == "spec.unschedulable";
  if (r.resource == "namespaces") return path == "status.phase";
  if (r.resource == "events") {
    // AddFieldLabelConversionsForEvent (core/v1; events.k8s.io maps onto these).
    static const char* kEventFields[] = {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                                         "involvedObject.uid", "involvedObject.apiVersion",
                                         "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason",
                                         "reportingComponent", "source", "type"};
    return std::find(std::begin(kEventFields), std::end(kEventFields), path) != std::end(kEventFields);
  }
  return false;
}

}  // namespace

Result<Selector> Selector::parse_labels(std::string_view text) {
  Selector s;
  for (const std::string& term : split_terms(text)) {
    if (term.empty()) return Status(Code::kBadRequest, "unable to parse requirement: found '', expected: identifier");
    Requirement r;
    size_t pos;
    if (term[0] == '!') {
      r.key = trim(term.substr(1));
      r.op = Op::kNotExists;
    } else if ((pos = term.find(" notin ")) != std::string::npos || (pos = term.find(" in ")) != std::string::npos) {
      bool notin = term.compare(pos, 7, " notin ") == 0;
      r.key = trim(term.substr(0, pos));
      r.op = notin ? Op::kNotIn : Op::kIn;
      std::string rest = trim(term.substr(pos + (notin ? 7 : 4)));
      if (rest.size() < 2 || rest.front() != '(' || rest.back() != ')') {
        return Status(Code::kBadRequest, "unable to parse requirement: found '" + rest + "', expected: '('");
      }
      std::string inner = rest.substr(1, rest.size() - 2);
      size_t start = 0;
      while (start <= inner.size()) {
        size_t comma = inner.find(',', start);
        std::string v = trim(inner.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        r.values.push_back(v);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else if ((pos = term.find("!=")) != std::string::npos) {
      r.key = trim(term.substr(0, pos));
      r.op = Op::kNotEq;
      r.values.push_back(trim(term.substr(pos + 2)));
    } else if ((pos = term.find("==")) != std::string::npos) {
      r.key = trim(term.substr(0, pos));
      r.values.push_back(trim(term.substr(pos + 2)));
    } else if ((pos = term.find('=')) != std::string::npos) {
      r.key = trim(term.substr(0, pos));
      r.values.push_back(trim(term.substr(pos + 1)));
    } else {
      r.key = term;
      r.op = Op::kExists;
    }
    if (r.key.empty() || r.key.find_first_of(" ()!=") != std::string::npos) {
      return Status(Code::kBadRequest, "unable to parse requirement: invalid label key \"" + r.key + "\"");
    }
    s.reqs_.push_back(std::move(r));
  }
  return s;
}

Result<Selector> Selector::parse_fields(std::string_view text, const ResourceInfo& res) {
  Selector s;
  for (const std::string& term : split_terms(text)) {
    if (term.empty()) continue;
    Requirement r;
    size_t pos;
    if ((pos = term.find("!=")) != std::string::npos) {
      r.op = Op::kNotEq;
      r.key = trim(term.substr(0, pos));
      r.values.push_back(trim(term.substr(pos + 2)));
    } else if ((pos = term.find("==")) != std::string::npos) {
      r.key = trim(term.substr(0, pos));
      r.values.push_back(trim(term.substr(pos + 2)));
    } else if ((pos = term.find('=')) != std::string::npos) {
      r.key = trim(term.substr(0, pos));
      r.values.push_back(trim(term.substr(pos + 1)));
    } else {
      return Status(Code::kBadRequest, "invalid selector: '" + std::string(text) + "'; can't understand '" + term + "'");
    }
    if (res.resource == "events") {
      // Selection runs on the stored core/v1 form: events.k8s.io labels are renamed.
      std::string mapped = event_field_label(res, r.key);
      if (mapped.empty()) return Status(Code::kBadRequest, "field label not supported: " + r.key);
      r.key = std::move(mapped);
    }
    if (!field_supported(r.key, res)) {
      return Status(Code::kBadRequest, "field label not supported: " + r.key);
    }
    s.reqs_.push_back(std::move(r));
  }
  return s;
}

bool Selector::matches_labels(const JsonValue& object) const {
  const JsonValue* labels = find(object, {"metadata", "labels"});
  for (const auto& r : reqs_) {
    const JsonValue* v = labels && labels->IsObject() ? find(*labels, {r.key}) : nullptr;
    bool present = v && v->IsString();
    if (!satisfies(r, present, present ? std::string(v->GetString(), v->GetStringLength()) : "")) return false;
  }
  return true;
}

bool Selector::matches_fields(const JsonValue& object) const {
  for (const auto& r : reqs_) {
    bool present;
    std::string v = field_value(object, r.key, &present);
    // Field selectors compare against the field's value, "" when unset.
    if (!satisfies(r, true, v)) return false;
  }
  return true;
}

std::string Selector::pinned_name() const {
  for (const auto& r : reqs_) {
    if (r.key == "metadata.name" && r.op == Op::kEq) return r.values[0];
  }
  return "";
}

}  // namespace draplane::server
