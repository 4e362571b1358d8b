// Label and field selectors, as `?labelSelector=` and `?fieldSelector=` take them.
//
// Label syntax (k8s.io/apimachinery/pkg/labels Parse, its lexer and error texts):
// `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, `a>1`, `a<1`,
// comma-separated (AND); keys and values are validated as label keys and values.
// Field syntax (pkg/fields ParseSelector): `path=value`, `path==value`,
// `path!=value`, comma-separated, `\,` `\=` `\\` escapes in values; the
// paths a resource supports, their conversion from the served version's labels
// and how their values are read are its kind's strategy's (strategy.h).
//
// Thread-safety: immutable after parsing.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "server/json_util.h"
#include "server/resources.h"

namespace draplane::server {

class Strategy;

class Selector {
 public:
  enum class Op { kEq, kNotEq, kIn, kNotIn, kExists, kNotExists, kGt, kLt };
  struct Requirement {
    std::string key;
    Op op = Op::kEq;
    std::vector<std::string> values;
  };

  bool empty() const { return reqs_.empty(); }
  const std::vector<Requirement>& requirements() const { return reqs_; }

  // kBadRequest with the reason when the text does not parse.
  static Result<Selector> parse_labels(std::string_view text);
  // kBadRequest with the field label conversion's message for an unsupported path
  // (`field label not supported: <path>` for Pod, ...).
  static Result<Selector> parse_fields(std::string_view text, const ResourceInfo& r);

  bool matches_labels(const JsonValue& object) const;
  bool matches_fields(const JsonValue& object) const;
  // The value of `metadata.name` when the selector pins it (single-object watch).
  std::string pinned_name() const;

 private:
  std::vector<Requirement> reqs_;
  const Strategy* strategy_ = nullptr;  // reads the values of field selectors
};

}  // namespace draplane::server
