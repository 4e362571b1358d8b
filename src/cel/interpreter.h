// The evaluator: turns a checked AST into a tree of evaluation nodes (a "plan")
// once, then evaluates it many times.
//
// Planning resolves identifiers to comprehension slots, binds calls to their
// overloads, folds constant quantity()/semver() calls, precompiles constant
// regular expressions and turns `device.attributes['d'].name` /
// `device.capacity['d'].name` into a direct indexed lookup. Evaluation follows
// CEL semantics (strict calls, commutative error absorption of && and ||) and
// charges a runtime cost; it stops with "actual cost limit exceeded" when the
// budget is spent.
//
// A Plan is immutable after build() and may be evaluated from several threads.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "cel/ast.h"
#include "cel/cel.h"
#include "cel/functions.h"
#include "cel/value.h"

namespace draplane::cel {

// Values of variables other than `device` (tests and the conformance runner).
struct Activation {
  std::map<std::string, Value> vars;
};

struct EvalInput {
  const DeviceBinding::Impl* device = nullptr;  // null: `device` is unbound
  const Activation* activation = nullptr;
  uint64_t cost_limit = kCostLimit;
};

class Node;

class Plan {
 public:
  // Builds the plan for a checked (or, with `checked` false, unchecked) AST.
  // `root` must outlive the plan. Never fails: problems surface at run time.
  // `context` is called once, and only when some call uses the CallContext (a
  // timestamp accessor with a time zone): the plan keeps what it returns (the
  // time zone database must outlive the plan). Without it, such calls know no
  // named zones.
  static std::unique_ptr<Plan> build(const Expr& root, bool checked,
                                     const std::function<CallContext()>& context = nullptr);
  ~Plan();

  // Evaluates; returns the value or an error value. `cost` receives the
  // runtime cost charged.
  Value eval(const EvalInput& in, uint64_t* cost = nullptr) const;

  // Whether some call uses the CallContext (the `context` of build() was asked).
  bool uses_context() const { return uses_context_; }

 private:
  Plan() = default;
  std::unique_ptr<Node> root_;
  size_t slots_ = 0;
  bool uses_context_ = false;
  friend class Planner;
};

}  // namespace draplane::cel
