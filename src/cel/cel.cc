// compile(), ProgramCache, check_selector() and eval_to_string(): the public
// entry points joining parser, checker, cost estimator and interpreter.
#include "cel/cel.h"

#include "cel/binding.h"
#include "cel/checker.h"
#include "cel/cost.h"
#include "cel/interpreter.h"
#include "cel/literals.h"
#include "cel/parser.h"

namespace draplane::cel {

namespace {

std::shared_ptr<const TimeZoneDatabase> time_zones_or_default(const CompileOptions& options) {
  return options.time_zones ? options.time_zones : std::make_shared<const TimeZoneDatabase>();
}

class CompiledProgram : public Program {
 public:
  CompiledProgram(std::string expression, ExprPtr ast, uint64_t cost, const CompileOptions& options)
      : expression_(std::move(expression)), ast_(std::move(ast)), cost_(cost) {
    plan_ = Plan::build(*ast_, true, [&] {
      time_zones_ = time_zones_or_default(options);
      return CallContext{time_zones_.get()};
    });
  }

  EvalResult eval(const DeviceBinding& device) const override {
    const DeviceBinding::Impl& impl = device.impl();
    EvalResult r;
    if (!impl.bind_error.empty()) {
      r.error = impl.bind_error;
      return r;
    }
    EvalInput in;
    in.device = &impl;
    Value v = plan_->eval(in);
    if (v.kind == ValueKind::kBool) {
      r.value = v.b;
    } else if (v.is_error()) {
      r.error = v.error_message();
    } else {
      r.error = "CEL result of type " + std::string(type_name_of(v)) + " could not be converted to bool";
    }
    return r;
  }
  const std::string& expression() const override { return expression_; }
  uint64_t estimated_cost() const override { return cost_; }
  const Plan& plan() const { return *plan_; }
  const Expr& ast() const { return *ast_; }

 private:
  std::string expression_;
  ExprPtr ast_;
  std::shared_ptr<const TimeZoneDatabase> time_zones_;  // only when the plan names zones
  std::unique_ptr<Plan> plan_;
  uint64_t cost_;
};

// Parses and checks in the DRA environment; the root type is returned in the AST.
Result<ExprPtr> parse_and_check(std::string_view expression) {
  std::vector<Issue> issues;
  ExprPtr ast = parse(expression, issues);
  if (!ast) return invalid_error(format_issues(expression, issues));
  if (!check(*ast, dra_env(), issues)) return invalid_error(format_issues(expression, issues));
  if (!validate_literals(*ast, issues)) return invalid_error(format_issues(expression, issues));
  return ast;
}

}  // namespace

Result<std::shared_ptr<const Program>> compile(std::string_view expression,
                                               const CompileOptions& options) {
  ASSIGN_OR_RETURN(ExprPtr ast, parse_and_check(expression));
  TypeKind k = ast->type.kind;
  if (k != TypeKind::kBool && k != TypeKind::kDyn) {
    return invalid_error("must evaluate to bool or the unknown type, not " + ast->type.to_string());
  }
  uint64_t cost = estimate_cost(*ast);
  return std::shared_ptr<const Program>(
      std::make_shared<CompiledProgram>(std::string(expression), std::move(ast), cost, options));
}

Status check_selector(std::string_view expression, ProgramCache* cache) {
  if (expression.size() > kMaxExpressionLength) {
    return {Code::kInvalid, "must have at most " + std::to_string(kMaxExpressionLength) + " bytes"};
  }
  auto p = cache ? cache->get(expression) : compile(expression);
  if (!p) {
    const std::string& m = p.error().message();
    if (m.rfind("ERROR:", 0) == 0) return {Code::kInvalid, "compilation failed: " + m};
    return p.error();
  }
  if ((*p)->estimated_cost() > kCostLimit) return {Code::kForbidden, "too complex, exceeds cost limit"};
  return {};
}

ProgramCache::ProgramCache(std::shared_ptr<const TimeZoneDatabase> time_zones)
    : options_{time_zones ? std::move(time_zones) : std::make_shared<const TimeZoneDatabase>()} {}

Result<std::shared_ptr<const Program>> ProgramCache::get(std::string_view expression) {
  std::string key(expression);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
  }
  auto compiled = compile(expression, options_);  // compile outside the lock
  std::lock_guard<std::mutex> lock(mu_);
  if (cache_.size() >= kMaxPrograms && cache_.count(key) == 0) cache_.clear();  // held programs live on
  auto [it, inserted] = cache_.emplace(std::move(key), compiled);
  return it->second;
}

Result<std::string> eval_to_string(std::string_view expression, const api::Device* device, std::string_view driver,
                                   const CompileOptions& options) {
  ASSIGN_OR_RETURN(ExprPtr ast, parse_and_check(expression));
  std::shared_ptr<const TimeZoneDatabase> time_zones;
  auto plan = Plan::build(*ast, true, [&] {
    time_zones = time_zones_or_default(options);
    return CallContext{time_zones.get()};
  });
  std::unique_ptr<DeviceBinding> binding;
  EvalInput in;
  if (device) {
    binding = std::make_unique<DeviceBinding>(driver, *device);
    if (!binding->impl().bind_error.empty()) return invalid_error(binding->impl().bind_error);
    in.device = &binding->impl();
  }
  Value v = plan->eval(in);
  if (v.is_error()) return invalid_error(v.error_message());
  return to_literal(v);
}

}  // namespace draplane::cel
