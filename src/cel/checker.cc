#include "cel/checker.h"

#include <algorithm>

#include "cel/functions.h"

namespace draplane::cel {

const CheckEnv& dra_env() {
  static const CheckEnv kEnv = [] {
    CheckEnv env;
    env.variables["device"] = Type(TypeKind::kDevice);
    return env;
  }();
  return kEnv;
}

Type device_field_type(const std::string& field) {
  if (field == "driver") return Type(TypeKind::kString);
  if (field == "attributes") {
    return Type::map(Type(TypeKind::kString), Type::map(Type(TypeKind::kString), Type(TypeKind::kDyn)));
  }
  if (field == "capacity") {
    return Type::map(Type(TypeKind::kString), Type::map(Type(TypeKind::kString), Type(TypeKind::kQuantity)));
  }
  if (field == "allowMultipleAllocations") return Type(TypeKind::kBool);
  return Type(TypeKind::kError);
}

namespace {

Type type_name_type(const std::string& name, bool& found) {
  found = true;
  if (name == "int") return Type::type_of(Type(TypeKind::kInt));
  if (name == "uint") return Type::type_of(Type(TypeKind::kUint));
  if (name == "double") return Type::type_of(Type(TypeKind::kDouble));
  if (name == "bool") return Type::type_of(Type(TypeKind::kBool));
  if (name == "string") return Type::type_of(Type(TypeKind::kString));
  if (name == "bytes") return Type::type_of(Type(TypeKind::kBytes));
  if (name == "null_type") return Type::type_of(Type(TypeKind::kNull));
  if (name == "list") return Type::type_of(Type::list(Type(TypeKind::kDyn)));
  if (name == "map") return Type::type_of(Type::map(Type(TypeKind::kDyn), Type(TypeKind::kDyn)));
  if (name == "type") return Type::type_of(Type::type_of(Type(TypeKind::kDyn)));
  if (name == "dyn") return Type::type_of(Type(TypeKind::kDyn));
  if (name == "optional_type") return Type::type_of(Type::optional(Type(TypeKind::kDyn)));
  if (name == "google.protobuf.Timestamp") return Type::type_of(Type(TypeKind::kTimestamp));
  if (name == "google.protobuf.Duration") return Type::type_of(Type(TypeKind::kDuration));
  if (name == "net.IP") return Type::type_of(Type(TypeKind::kIP));
  if (name == "net.CIDR") return Type::type_of(Type(TypeKind::kCIDR));
  if (name == "kubernetes.URL") return Type::type_of(Type(TypeKind::kURL));
  found = false;
  return Type();
}

class Checker {
 public:
  Checker(const CheckEnv& env, std::vector<Issue>& issues) : env_(env), issues_(issues) {}

  void run(Expr& root) {
    visit(root);
    finalize(root);
  }

 private:
  void error(int32_t off, std::string msg) { issues_.push_back({off, std::move(msg)}); }

  Type fresh() { return Type::param("_var" + std::to_string(next_var_++)); }

  Type resolved(const Type& t) { return substitute(t, subst_, false); }

  const Type* lookup_local(const std::string& name) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (it->first == name) return &it->second;
    }
    return nullptr;
  }

  const Type* lookup_global(const std::string& name) {
    std::string n = name;
    if (!n.empty() && n[0] == '.') n.erase(0, 1);
    // Container-qualified candidates first (cel-go's namespace resolution).
    std::string c = env_.container;
    while (!c.empty()) {
      auto it = env_.variables.find(c + "." + n);
      if (it != env_.variables.end()) return &it->second;
      size_t dot = c.rfind('.');
      c = dot == std::string::npos ? "" : c.substr(0, dot);
    }
    auto it = env_.variables.find(n);
    return it == env_.variables.end() ? nullptr : &it->second;
  }

  // "a.b.c" for a select chain rooted at an identifier, else "".
  static std::string qualified_name(const Expr& e) {
    if (e.kind == ExprKind::kIdent) return e.name;
    if (e.kind == ExprKind::kSelect && !e.test_only && e.operand) {
      std::string q = qualified_name(*e.operand);
      return q.empty() ? q : q + "." + e.name;
    }
    return "";
  }
  static std::string root_name(const Expr& e) {
    const Expr* x = &e;
    while (x->kind == ExprKind::kSelect && x->operand) x = x->operand.get();
    return x->kind == ExprKind::kIdent ? x->name : "";
  }

  void visit(Expr& e) {
    switch (e.kind) {
      case ExprKind::kConst: e.type = literal_type(e.literal); return;
      case ExprKind::kIdent: visit_ident(e); return;
      case ExprKind::kSelect: visit_select(e); return;
      case ExprKind::kCall: visit_call(e); return;
      case ExprKind::kList: visit_list(e); return;
      case ExprKind::kMap: visit_map(e); return;
      case ExprKind::kStruct:
        error(e.offset, "undeclared reference to '" + e.name + "' (in container '" + env_.container + "')");
        for (auto& en : e.entries) visit(*en.value);
        e.type = Type(TypeKind::kError);
        return;
      case ExprKind::kComprehension: visit_comprehension(e); return;
    }
  }

  static Type literal_type(const Literal& l) {
    switch (l.kind) {
      case Literal::Kind::kNull: return Type(TypeKind::kNull);
      case Literal::Kind::kBool: return Type(TypeKind::kBool);
      case Literal::Kind::kInt: return Type(TypeKind::kInt);
      case Literal::Kind::kUint: return Type(TypeKind::kUint);
      case Literal::Kind::kDouble: return Type(TypeKind::kDouble);
      case Literal::Kind::kString: return Type(TypeKind::kString);
      case Literal::Kind::kBytes: return Type(TypeKind::kBytes);
    }
    return Type();
  }

  void visit_ident(Expr& e) {
    bool leading_dot = !e.name.empty() && e.name[0] == '.';
    if (!leading_dot) {
      if (const Type* t = lookup_local(e.name)) {
        e.type = *t;
        return;
      }
    }
    if (const Type* t = lookup_global(e.name)) {
      if (leading_dot) e.name.erase(0, 1);
      e.type = *t;
      return;
    }
    bool found;
    Type tt = type_name_type(leading_dot ? e.name.substr(1) : e.name, found);
    if (found) {
      if (leading_dot) e.name.erase(0, 1);
      e.is_type_name = true;
      e.type = tt;
      return;
    }
    error(e.offset, "undeclared reference to '" + e.name + "' (in container '" + env_.container + "')");
    e.type = Type(TypeKind::kError);
  }

  // Field selection on `operand_type`; returns the field's type or reports.
  Type select_type(const Expr& e, const Type& operand_type) {
    Type t = resolved(operand_type);
    switch (t.kind) {
      case TypeKind::kDyn:
      case TypeKind::kError:
      case TypeKind::kTypeParam: return Type(TypeKind::kDyn);
      case TypeKind::kMap: return t.params[1];
      case TypeKind::kDevice: {
        Type f = device_field_type(e.name);
        if (f.kind == TypeKind::kError) error(e.offset, "undefined field '" + e.name + "'");
        return f;
      }
      default:
        error(e.offset, "type '" + t.to_string() + "' does not support field selection");
        return Type(TypeKind::kError);
    }
  }

  void visit_select(Expr& e) {
    // Qualified variable names such as `a.b.c`.
    std::string q = qualified_name(e);
    if (!q.empty() && (q[0] == '.' || !lookup_local(root_name(e)))) {
      if (const Type* t = lookup_global(q)) {
        e.kind = ExprKind::kIdent;
        e.name = q[0] == '.' ? q.substr(1) : q;
        e.operand.reset();
        e.type = *t;
        return;
      }
      // Qualified type names: google.protobuf.Timestamp, net.IP, ...
      bool found;
      Type tt = type_name_type(q[0] == '.' ? q.substr(1) : q, found);
      if (found && q.find('.', 1) != std::string::npos) {
        e.kind = ExprKind::kIdent;
        e.name = q[0] == '.' ? q.substr(1) : q;
        e.operand.reset();
        e.is_type_name = true;
        e.type = tt;
        return;
      }
    }
    visit(*e.operand);
    Type ot = resolved(e.operand->type);
    if (ot.kind == TypeKind::kOptional) {
      Expr tmp;
      tmp.name = e.name;
      tmp.offset = e.offset;
      Type f = select_type(tmp, ot.params[0]);
      e.type = e.test_only ? Type(TypeKind::kBool) : Type::optional(f);
      return;
    }
    Type f = select_type(e, ot);
    e.type = e.test_only ? Type(TypeKind::kBool) : f;
  }

  void visit_list(Expr& e) {
    Type elem;
    bool have = false;
    bool exempt = format_depth_ > 0;
    for (size_t k = 0; k < e.args.size(); ++k) {
      visit(*e.args[k]);
      Type t = resolved(e.args[k]->type);
      bool optional = std::find(e.optional_indices.begin(), e.optional_indices.end(), static_cast<int32_t>(k)) !=
                      e.optional_indices.end();
      if (optional) {
        if (t.kind == TypeKind::kOptional) t = Type(t.params[0]);  // copy first: t owns params
        else if (!t.is_dyn_or_error()) {
          error(e.args[k]->offset, "found no matching overload for 'optional list element' applied to '(" +
                                       t.to_string() + ")'");
        }
      }
      if (exempt) {
        if (have && !types_equivalent(resolved(elem), t)) elem = Type(TypeKind::kDyn);
        else if (!have) elem = t;
        have = true;
      } else {
        join_aggregate(elem, have, t, e.args[k]->offset);
      }
    }
    e.type = Type::list(have ? elem : fresh());
  }

  // HomogeneousAggregateLiterals: every element has the same type, unless it is
  // explicitly dyn.
  void join_aggregate(Type& acc, bool& have, const Type& t, int32_t off) {
    if (!have) {
      acc = t;
      have = true;
      return;
    }
    if (!env_.homogeneous_aggregates || format_depth_ > 0) {
      if (!types_equivalent(resolved(acc), t)) acc = Type(TypeKind::kDyn);
      return;
    }
    if (acc.is_dyn_or_error() || t.is_dyn_or_error()) {
      if (t.kind == TypeKind::kDyn) acc = t;
      return;
    }
    TypeBindings b = subst_;
    if (types_equivalent(resolved(acc), t) ||
        (is_assignable(acc, t, b) && is_assignable(t, acc, b))) {
      subst_ = b;
      return;
    }
    error(off, "expected type '" + resolved(acc).to_string() + "' but found '" + t.to_string() + "'");
  }

  void visit_map(Expr& e) {
    Type kt, vt;
    bool hk = false, hv = false;
    for (auto& en : e.entries) {
      visit(*en.key);
      visit(*en.value);
      Type k = resolved(en.key->type);
      Type v = resolved(en.value->type);
      if (en.optional) {
        if (v.kind == TypeKind::kOptional) v = Type(v.params[0]);  // copy first: v owns params
        else if (!v.is_dyn_or_error()) {
          error(en.value->offset, "found no matching overload for 'optional map entry' applied to '(" +
                                      v.to_string() + ")'");
        }
      }
      join_aggregate(kt, hk, k, en.key->offset);
      join_aggregate(vt, hv, v, en.value->offset);
    }
    e.type = Type::map(hk ? kt : fresh(), hv ? vt : fresh());
  }

  void visit_comprehension(Expr& e) {
    visit(*e.iter_range);
    Type rt = resolved(e.iter_range->type);
    Type v1, v2;
    bool two = !e.iter_var2.empty();
    switch (rt.kind) {
      case TypeKind::kList:
        v1 = two ? Type(TypeKind::kInt) : rt.params[0];
        v2 = rt.params[0];
        break;
      case TypeKind::kMap:
        v1 = rt.params[0];
        v2 = rt.params[1];
        break;
      case TypeKind::kDyn:
      case TypeKind::kError:
      case TypeKind::kTypeParam:
        v1 = Type(TypeKind::kDyn);
        v2 = Type(TypeKind::kDyn);
        break;
      default:
        error(e.iter_range->offset, "expression of type '" + rt.to_string() +
                                        "' cannot be range of a comprehension (must be list, map, or dynamic)");
        v1 = Type(TypeKind::kDyn);
        v2 = Type(TypeKind::kDyn);
    }
    visit(*e.accu_init);
    Type accu = resolved(e.accu_init->type);
    scopes_.emplace_back(e.accu_var, accu);
    scopes_.emplace_back(e.iter_var, v1);
    if (two) scopes_.emplace_back(e.iter_var2, v2);
    visit(*e.loop_cond);
    visit(*e.loop_step);
    TypeBindings b = subst_;
    if (!is_assignable(accu, resolved(e.loop_step->type), b)) {
      error(e.loop_step->offset, "found no matching overload for 'comprehension step' applied to '(" +
                                     resolved(e.loop_step->type).to_string() + ")'");
    } else {
      subst_ = b;
    }
    scopes_.pop_back();
    if (two) scopes_.pop_back();
    visit(*e.result);
    scopes_.pop_back();
    e.type = e.result->type;
  }

  void visit_call(Expr& e) {
    // a.b.fn(...) where "a.b.fn" is a global function (optional.of, sets.contains).
    if (e.operand) {
      std::string q = qualified_name(*e.operand);
      if (!q.empty() && !lookup_local(root_name(*e.operand)) && !lookup_global(q) &&
          function_declared(q + "." + e.name)) {
        e.name = q + "." + e.name;
        e.operand.reset();
      }
    }
    bool member = e.operand != nullptr;
    std::vector<Type> arg_types;
    // cel-go exempts every aggregate literal inside a format() call from the
    // homogeneous aggregate literal check (inExemptFunction walks all parents).
    const bool format_call = e.name == "format";
    if (format_call) ++format_depth_;
    if (member) {
      visit(*e.operand);
      arg_types.push_back(resolved(e.operand->type));
    }
    for (auto& a : e.args) {
      visit(*a);
      arg_types.push_back(resolved(a->type));
    }
    if (format_call) --format_depth_;
    if (!function_declared(e.name)) {
      error(e.offset, "undeclared reference to '" + e.name + "' (in container '" + env_.container + "')");
      e.type = Type(TypeKind::kError);
      return;
    }
    auto candidates = find_overloads(e.name, member, arg_types.size());
    std::vector<const Overload*> matched;
    Type result;
    bool have_result = false;
    TypeBindings committed = subst_;
    for (const Overload* o : candidates) {
      TypeBindings b = committed;
      // Fresh names for the overload's type parameters at this call site.
      std::string suffix = "#" + std::to_string(next_var_);
      bool ok = true;
      for (size_t k = 0; k < arg_types.size() && ok; ++k) {
        ok = is_assignable(rename(o->params[k], suffix), arg_types[k], b);
      }
      if (!ok) continue;
      ++next_var_;
      matched.push_back(o);
      Type r = substitute(rename(o->result, suffix), b, false);
      if (!have_result) {
        result = r;
        have_result = true;
        subst_ = b;
      } else if (!types_equivalent(result, r)) {
        result = Type(TypeKind::kDyn);
      }
    }
    if (matched.empty()) {
      bool any_error = std::any_of(arg_types.begin(), arg_types.end(),
                                   [](const Type& t) { return t.kind == TypeKind::kError; });
      if (!any_error) {
        std::string sig;
        size_t start = 0;
        if (member) {
          sig = arg_types[0].to_string() + ".";
          start = 1;
        }
        sig += "(";
        for (size_t k = start; k < arg_types.size(); ++k) {
          if (k > start) sig += ", ";
          sig += arg_types[k].to_string();
        }
        sig += ")";
        error(e.offset, "found no matching overload for '" + e.name + "' applied to '" + sig + "'");
      }
      e.type = Type(TypeKind::kError);
      return;
    }
    e.overloads = std::move(matched);
    e.type = result;
  }

  static Type rename(const Type& t, const std::string& suffix) {
    if (t.kind == TypeKind::kTypeParam) return Type::param(t.param_name + suffix);
    if (t.params.empty()) return t;
    Type out = t;
    for (auto& p : out.params) p = rename(p, suffix);
    return out;
  }

  void finalize(Expr& e) {
    e.type = substitute(e.type, subst_, true);
    if (e.operand) finalize(*e.operand);
    for (auto& a : e.args) finalize(*a);
    for (auto& en : e.entries) {
      if (en.key) finalize(*en.key);
      finalize(*en.value);
    }
    for (ExprPtr* p : {&e.iter_range, &e.accu_init, &e.loop_cond, &e.loop_step, &e.result}) {
      if (*p) finalize(**p);
    }
  }

  const CheckEnv& env_;
  std::vector<Issue>& issues_;
  std::vector<std::pair<std::string, Type>> scopes_;
  TypeBindings subst_;
  int next_var_ = 0;
  int format_depth_ = 0;  // format() calls enclosing the expression being checked
};

}  // namespace

bool check(Expr& root, const CheckEnv& env, std::vector<Issue>& issues) {
  size_t before = issues.size();
  Checker(env, issues).run(root);
  return issues.size() == before;
}

}  // namespace draplane::cel
