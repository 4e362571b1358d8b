#include "cel/literals.h"

#include <re2/re2.h>

#include "cel/functions.h"
#include "cel/time.h"

namespace draplane::cel {

namespace {

const Expr* string_literal(const Expr& e) {
  return e.kind == ExprKind::kConst && e.literal.kind == Literal::Kind::kString ? &e : nullptr;
}

void check_call(const Expr& e, std::vector<Issue>& issues) {
  const std::string& fn = e.name;
  if (!e.operand && e.args.size() == 1 && (fn == "timestamp" || fn == "duration")) {
    const Expr& arg = *e.args[0];
    if (fn == "timestamp" && arg.kind == ExprKind::kConst && arg.literal.kind == Literal::Kind::kInt) {
      // cel-go evaluates any literal argument: timestamp(<int>) out of range too.
      if (!timeutil::in_range(arg.literal.i)) {
        issues.push_back({arg.offset, "invalid timestamp argument: timestamp overflow"});
      }
      return;
    }
    const Expr* lit = string_literal(arg);
    if (!lit) return;
    std::string err;
    if (fn == "timestamp") {
      timeutil::Timestamp t;
      if (timeutil::parse_rfc3339(lit->literal.s, t, err) && !timeutil::in_range(t.seconds)) {
        err = "timestamp overflow";
      }
    } else {
      int64_t d;
      timeutil::parse_duration(lit->literal.s, d, err);
    }
    if (!err.empty()) issues.push_back({lit->offset, "invalid " + fn + " argument: " + err});
    return;
  }
  const Expr* pattern = nullptr;
  if (fn == "matches") {
    if (e.operand && e.args.size() == 1) pattern = string_literal(*e.args[0]);
    if (!e.operand && e.args.size() == 2) pattern = string_literal(*e.args[1]);
  } else if ((fn == "find" || fn == "findAll") && e.operand && !e.args.empty()) {
    pattern = string_literal(*e.args[0]);
  }
  if (!pattern) return;
  RE2::Options opts;
  opts.set_log_errors(false);
  RE2 re(pattern->literal.s, opts);
  if (!re.ok()) {
    issues.push_back({pattern->offset, "invalid " + fn + " argument: pattern " + lib::quote_string(pattern->literal.s) +
                                           " does not compile: " + re.error()});
  }
}

void walk(const Expr& e, std::vector<Issue>& issues) {
  if (e.kind == ExprKind::kCall) check_call(e, issues);
  if (e.operand) walk(*e.operand, issues);
  for (const auto& a : e.args) walk(*a, issues);
  for (const auto& en : e.entries) {
    if (en.key) walk(*en.key, issues);
    walk(*en.value, issues);
  }
  for (const ExprPtr* p : {&e.iter_range, &e.accu_init, &e.loop_cond, &e.loop_step, &e.result}) {
    if (*p) walk(**p, issues);
  }
}

}  // namespace

bool validate_literals(const Expr& root, std::vector<Issue>& issues) {
  size_t before = issues.size();
  walk(root, issues);
  return issues.size() == before;
}

}  // namespace draplane::cel
