#include "alloc/node_selector.h"

#include <algorithm>
#include <string>

#include "common/parse_int.h"

namespace draplane::alloc {
namespace {

std::optional<int64_t> parse_int(std::string_view s) { return common::parse_int64(s); }

// Where a requirement is: its path is written only for an error (matching
// runs per node per pod, and building paths there was most of its cost).
struct Where {
  size_t term;
  const char* list;  // "matchExpressions" or "matchFields"
  size_t index;
  std::string operator+(const char* suffix) const {
    return "nodeSelectorTerms[" + std::to_string(term) + "]." + list + "[" + std::to_string(index) + "]" + suffix;
  }
};

Status req_error(const std::string& path, const std::string& detail) {
  return invalid_error(path + ": " + detail);
}

// Checks one label requirement; error for malformed ones.
Result<bool> label_matches(const api::Node& node, const api::NodeSelectorRequirement& r, const Where& path) {
  const auto& labels = node.metadata.labels;
  auto it = labels.find(r.key);
  bool has = it != labels.end();
  const std::string& op = r.operator_;
  if (op == "In" || op == "NotIn") {
    if (r.values.empty()) return req_error(path + ".values", "Required value: must be specified when `operator` is 'In' or 'NotIn'");
    bool in = false;
    if (has) {
      for (const auto& v : r.values) in = in || v == it->second;
    }
    return op == "In" ? in : !in;
  }
  if (op == "Exists" || op == "DoesNotExist") {
    if (!r.values.empty()) return req_error(path + ".values", "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
    return op == "Exists" ? has : !has;
  }
  if (op == "Gt" || op == "Lt") {
    if (r.values.size() != 1) return req_error(path + ".values", "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'");
    auto want = parse_int(r.values[0]);
    if (!want) return req_error(path + ".values[0]", "Invalid value: \"" + r.values[0] + "\": must be an integer");
    if (!has) return false;
    auto got = parse_int(it->second);
    if (!got) return false;
    return op == "Gt" ? *got > *want : *got < *want;
  }
  return req_error(path + ".operator", "Unsupported value: \"" + op + "\"");
}

Result<bool> field_matches(const api::Node& node, const api::NodeSelectorRequirement& r, const Where& path) {
  if (r.key != "metadata.name") return req_error(path + ".key", "Unsupported value: \"" + r.key + "\": supported values: \"metadata.name\"");
  if (r.operator_ != "In" && r.operator_ != "NotIn") return req_error(path + ".operator", "Unsupported value: \"" + r.operator_ + "\"");
  if (r.values.size() != 1) return req_error(path + ".values", "must have one element");
  bool eq = node.metadata.name == r.values[0];
  return r.operator_ == "In" ? eq : !eq;
}

}  // namespace

Result<bool> node_selector_matches(const api::Node* node, const api::NodeSelector& selector) {
  // Parse everything first (as NewNodeSelector does), then match: a malformed
  // later term is an error even when an earlier term matches.
  bool matched = false;
  static const api::Node kNoNode;
  const api::Node& n = node ? *node : kNoNode;
  for (size_t t = 0; t < selector.nodeSelectorTerms.size(); ++t) {
    const auto& term = selector.nodeSelectorTerms[t];
    bool term_ok = !(term.matchExpressions.empty() && term.matchFields.empty());
    for (size_t i = 0; i < term.matchExpressions.size(); ++i) {
      ASSIGN_OR_RETURN(bool m, label_matches(n, term.matchExpressions[i], Where{t, "matchExpressions", i}));
      term_ok = term_ok && m;
    }
    for (size_t i = 0; i < term.matchFields.size(); ++i) {
      ASSIGN_OR_RETURN(bool m, field_matches(n, term.matchFields[i], Where{t, "matchFields", i}));
      term_ok = term_ok && m;
    }
    matched = matched || term_ok;
  }
  return node != nullptr && matched;
}

Result<bool> node_target_matches(const api::Node* node, std::string_view node_name, bool all_nodes,
                                 const api::NodeSelector* selector) {
  if (!node_name.empty()) return node != nullptr && node->metadata.name == node_name;
  if (all_nodes) return true;
  if (selector != nullptr) return node_selector_matches(node, *selector);
  return false;
}

std::optional<std::vector<std::string>> nodes_named_by(const api::NodeSelector& selector) {
  std::vector<std::string> names;
  for (const auto& term : selector.nodeSelectorTerms) {
    // Requirements of a term are ANDed: one naming requirement bounds it.
    const api::NodeSelectorRequirement* naming = nullptr;
    for (const auto& r : term.matchFields) {
      if (r.key == "metadata.name" && r.operator_ == "In") {
        naming = &r;
        break;
      }
    }
    if (naming == nullptr) return std::nullopt;
    names.insert(names.end(), naming->values.begin(), naming->values.end());
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace draplane::alloc
