#include "cel/literals.h"

#include <re2/re2.h>

#include "cel/functions.h"
#include "cel/time.h"

namespace draplane::cel {

namespace {

const Expr* string_literal(const Expr& e) {
  return e.kind == ExprKind::kConst && e.literal.kind == Literal::Kind::kString ? &e : nullptr;
}

// cel-go's Type.TypeName(): the base name of parameterized types.
std::string type_name(const Type& t) {
  switch (t.kind) {
    case TypeKind::kList: return "list";
    case TypeKind::kMap: return "map";
    case TypeKind::kOptional: return "optional_type";
    case TypeKind::kType: return "type";
    default: return t.to_string();
  }
}

bool kind_one_of(const Type& t, std::initializer_list<TypeKind> kinds) {
  if (t.kind == TypeKind::kDyn) return true;
  for (TypeKind k : kinds) {
    if (t.kind == k) return true;
  }
  return false;
}

// stringFormatChecker.verifyString: the argument's static type (and, for list
// and map literals, each element's) must be one %s can print; the offending
// expression otherwise.
const Expr* unprintable(const Expr& e) {
  if (!kind_one_of(e.type, {TypeKind::kList, TypeKind::kMap, TypeKind::kInt, TypeKind::kUint, TypeKind::kDouble,
                            TypeKind::kBool, TypeKind::kString, TypeKind::kTimestamp, TypeKind::kBytes,
                            TypeKind::kDuration, TypeKind::kType, TypeKind::kNull})) {
    return &e;
  }
  if (e.kind == ExprKind::kList) {
    for (const auto& a : e.args) {
      if (const Expr* bad = unprintable(*a)) return bad;
    }
  } else if (e.kind == ExprKind::kMap) {
    for (const auto& en : e.entries) {
      if (const Expr* bad = unprintable(*en.key)) return bad;
      if (const Expr* bad = unprintable(*en.value)) return bad;
    }
  }
  return nullptr;
}

// cel-go's message when numeric formatting clause `verb` does not accept an
// argument of type `t`; empty when it does.
std::string verb_mismatch(char verb, const Type& t) {
  using K = TypeKind;
  switch (verb) {
    case 'd': return kind_one_of(t, {K::kInt, K::kUint}) ? "" : "decimal clause can only be used on integers";
    case 'f': return kind_one_of(t, {K::kDouble, K::kString}) ? "" : "fixed-point clause can only be used on doubles";
    case 'e': return kind_one_of(t, {K::kDouble, K::kString}) ? "" : "scientific clause can only be used on doubles";
    case 'b':
      return kind_one_of(t, {K::kInt, K::kUint, K::kBool}) ? "" : "only integers and bools can be formatted as binary";
    case 'o': return kind_one_of(t, {K::kInt, K::kUint}) ? "" : "octal clause can only be used on integers";
    default:  // x, X
      if (kind_one_of(t, {K::kInt, K::kUint, K::kString, K::kBytes})) return "";
      return "only integers, byte buffers, and strings can be formatted as hex";
  }
}

// The strings extension's format validator (ext/formatting.go
// stringFormatValidator, installed with strings version >= 1): a constant
// format string with a list literal of arguments is checked when compiling.
void check_format(const Expr& e, std::vector<Issue>& issues) {
  const std::vector<ExprPtr>& args = e.args[0]->args;
  int32_t where = e.offset;
  auto clause = [&](size_t index, char verb, int) -> std::string {
    const Expr& a = *args[index];
    where = a.offset;
    std::string given = ", was given " + type_name(a.type);
    switch (verb) {
      case 's':
        if (const Expr* bad = unprintable(a)) {
          where = bad->offset;
          return "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, "
                 "durations, and timestamps, was given " + type_name(bad->type);
        }
        break;
      default:
        if (std::string m = verb_mismatch(verb, a.type); !m.empty()) return m + given;
    }
    where = e.offset;
    return "";
  };
  size_t requested = 0;
  std::string err = lib::scan_format(e.operand->literal.s, args.size(), false, nullptr, clause, &requested);
  if (!err.empty()) {
    // Clause errors point at the argument, parse errors at the call.
    issues.push_back({err.rfind("error during formatting: ", 0) == 0 ? where : e.offset, err});
    return;
  }
  if (args.size() > requested) {
    issues.push_back({e.offset, "too many arguments supplied to string.format (expected " + std::to_string(requested) +
                                    ", got " + std::to_string(args.size()) + ")"});
  }
}

void check_call(const Expr& e, std::vector<Issue>& issues) {
  const std::string& fn = e.name;
  if (fn == "format" && e.operand && string_literal(*e.operand) && e.args.size() == 1 &&
      e.args[0]->kind == ExprKind::kList) {
    check_format(e, issues);
    return;
  }
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
