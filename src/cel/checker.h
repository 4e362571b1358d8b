// CEL type checker (after cel-go's checker with the options Kubernetes enables:
// HomogeneousAggregateLiterals, CrossTypeNumericComparisons, optionals).
//
// Annotates every node with its type and every call with the overloads that can
// apply; reports undeclared references, missing overloads, invalid field
// selections and mixed-type aggregate literals as issues with positions.
//
// Thread-safe: check() keeps no state between calls.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cel/ast.h"
#include "cel/issues.h"
#include "cel/types.h"

namespace draplane::cel {

// Declared variables (name -> type). The DRA environment declares `device`.
struct CheckEnv {
  std::map<std::string, Type> variables;
  std::string container;  // for qualified name resolution (conformance tests)
  // HomogeneousAggregateLiterals (on in Kubernetes): list and map literals must
  // not mix element types. Off, mixed literals get dyn element types.
  bool homogeneous_aggregates = true;
};

// The environment of device selectors: `device` of type kubernetes.DRADevice.
const CheckEnv& dra_env();

// Checks `root` in place. Returns true when there are no issues.
bool check(Expr& root, const CheckEnv& env, std::vector<Issue>& issues);

// The type of a field of `device`, or kError when there is no such field.
Type device_field_type(const std::string& field);

}  // namespace draplane::cel
