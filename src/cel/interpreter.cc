#include "cel/interpreter.h"

#include <algorithm>
#include <functional>

#include <re2/re2.h>

#include "cel/binding.h"
#include "cel/functions.h"

namespace draplane::cel {

namespace {

struct Frame {
  const EvalInput& in;
  Value* slots;
  uint64_t cost = 0;
};

Value cost_exceeded() { return Value::error("actual cost limit exceeded"); }

}  // namespace

class Node {
 public:
  virtual ~Node() = default;
  virtual Value eval(Frame& f) const = 0;
};

namespace {

using NodePtr = std::unique_ptr<Node>;

// A constant: keeps the owning value, hands out borrowed copies (no refcount).
class ConstNode : public Node {
 public:
  explicit ConstNode(Value v) : owned_(std::move(v)), view_(owned_) { view_.owner.reset(); }
  Value eval(Frame&) const override { return view_; }
  const Value& value() const { return view_; }

 private:
  Value owned_;
  Value view_;
};

class SlotNode : public Node {
 public:
  explicit SlotNode(size_t slot) : slot_(slot) {}
  Value eval(Frame& f) const override {
    ++f.cost;
    return f.slots[slot_];
  }

 private:
  size_t slot_;
};

class DeviceNode : public Node {
 public:
  Value eval(Frame& f) const override {
    ++f.cost;
    if (!f.in.device) return Value::error("no such attribute(s): device");
    Value v;
    v.kind = ValueKind::kDevice;
    v.p = f.in.device;
    return v;
  }
};

class GlobalNode : public Node {
 public:
  explicit GlobalNode(std::string name) : name_(std::move(name)) {}
  Value eval(Frame& f) const override {
    ++f.cost;
    if (f.in.activation) {
      auto it = f.in.activation->vars.find(name_);
      if (it != f.in.activation->vars.end()) return it->second;
    }
    return Value::error("no such attribute(s): " + name_);
  }

 private:
  std::string name_;
};

Value select_field(const Value& v, std::string_view field, bool test_only) {
  switch (v.kind) {
    case ValueKind::kMap: {
      const MapData& m = v.map_data();
      const Value* found = m.find_string(field);
      if (test_only) return Value::boolean(found != nullptr || m.default_empty);
      if (found) return *found;
      if (m.default_empty) return Value::borrowed_map(&empty_map());
      return no_such_key(Value::borrowed_string(field));
    }
    case ValueKind::kDevice: {
      const auto* d = static_cast<const DeviceBinding::Impl*>(v.p);
      if (test_only) {
        return Value::boolean(field == "driver" || field == "attributes" || field == "capacity" ||
                              field == "allowMultipleAllocations");
      }
      if (field == "driver") return Value::borrowed_string(d->driver);
      if (field == "attributes") return Value::borrowed_map(&d->attributes);
      if (field == "capacity") return Value::borrowed_map(&d->capacity);
      if (field == "allowMultipleAllocations") return Value::boolean(d->allow_multiple_allocations);
      return Value::error("no such field: " + std::string(field));
    }
    case ValueKind::kError: return v;
    default: return no_such_overload();
  }
}

class SelectNode : public Node {
 public:
  SelectNode(NodePtr operand, std::string field, bool test_only)
      : operand_(std::move(operand)), field_(std::move(field)), test_only_(test_only) {}
  Value eval(Frame& f) const override {
    ++f.cost;
    Value v = operand_->eval(f);
    if (v.kind == ValueKind::kOptional) {
      // Optional chaining: selecting on an optional yields an optional.
      if (!v.optional_value()) return test_only_ ? Value::boolean(false) : v;
      Value inner = *v.optional_value();
      if (test_only_) return select_field(inner, field_, true);
      if (inner.kind == ValueKind::kMap && !inner.map_data().find_string(field_)) return Value::optional_none();
      Value r = select_field(inner, field_, false);
      if (r.is_error()) return r;
      return Value::optional_of(std::move(r));
    }
    return select_field(v, field_, test_only_);
  }

 private:
  NodePtr operand_;
  std::string field_;
  bool test_only_;
};

// Unchecked a.b.c: the longest prefix bound in the activation wins, the rest
// are field selections (cel-go's namespace resolution for unchecked ASTs).
class QualifiedNode : public Node {
 public:
  explicit QualifiedNode(std::vector<std::string> parts) : parts_(std::move(parts)) {}
  Value eval(Frame& f) const override {
    ++f.cost;
    if (f.in.activation) {
      for (size_t n = parts_.size(); n > 0; --n) {
        std::string name = parts_[0];
        for (size_t k = 1; k < n; ++k) name += "." + parts_[k];
        auto it = f.in.activation->vars.find(name);
        if (it == f.in.activation->vars.end()) continue;
        Value v = it->second;
        for (size_t k = n; k < parts_.size() && !v.is_error(); ++k) v = select_field(v, parts_[k], false);
        return v;
      }
    }
    return Value::error("no such attribute(s): " + parts_[0]);
  }

 private:
  std::vector<std::string> parts_;
};

// device.attributes['domain'].name / device.capacity['domain'].name and the
// has() form, resolved through the binding's index.
class AttrLookupNode : public Node {
 public:
  AttrLookupNode(bool capacity, std::string domain, std::string name, bool test_only)
      : capacity_(capacity),
        name_(std::move(name)),
        key_(attribute_key(domain, name_)),
        hash_(attribute_hash(domain, name_)),
        test_only_(test_only) {}
  Value eval(Frame& f) const override {
    f.cost += 3;
    const DeviceBinding::Impl* d = f.in.device;
    if (!d) return Value::error("no such attribute(s): device");
    const Value* v = d->find(capacity_, hash_, key_);
    if (test_only_) return Value::boolean(v != nullptr);
    if (v) return *v;
    return no_such_key(Value::borrowed_string(name_));
  }

 private:
  bool capacity_;
  std::string name_;
  std::string key_;  // attribute_key(domain, name)
  uint64_t hash_;
  bool test_only_;
};

// A call with N arguments (receiver first), dispatched to its overload. The
// arity is a template parameter so the argument array lives on the stack, and
// each candidate's parameter kinds are precomputed so that dispatch compares
// bytes rather than walking types.
// With `Ctx`, some candidate uses the CallContext (captured when planned);
// without, calls go straight to the plain implementations.
template <size_t N, bool Ctx = false>
class CallNode : public Node {
 public:
  // `exact`: the checker proved the argument types, so the single overload
  // applies without a runtime check.
  CallNode(std::vector<const Overload*> overloads, std::vector<NodePtr> args, bool exact, CallContext ctx = {})
      : ctx_(ctx) {
    for (size_t k = 0; k < N; ++k) {
      args_[k] = std::move(args[k]);
      auto* c = dynamic_cast<const ConstNode*>(args_[k].get());
      const_[k] = c ? &c->value() : nullptr;
    }
    for (const Overload* o : overloads) {
      Candidate c{o, {}};
      for (size_t k = 0; k < N; ++k) c.kinds[k] = static_cast<int8_t>(required_value_kind(o->params[k]));
      candidates_.push_back(c);
    }
    if (exact && overloads.size() == 1 && overloads[0]->callable()) direct_ = overloads[0];
  }
  Value eval(Frame& f) const override {
    ++f.cost;
    Value vals[N == 0 ? 1 : N];
    for (size_t k = 0; k < N; ++k) {
      if (const_[k]) {
        vals[k] = *const_[k];  // borrowed: no reference count
      } else {
        vals[k] = args_[k]->eval(f);
      }
      if (vals[k].is_error()) return vals[k];
    }
    const Overload* o = direct_;
    if (!o) {
      for (const Candidate& c : candidates_) {
        if (c.matches(vals)) {
          o = c.overload;
          break;
        }
      }
      if (!o || !(Ctx ? o->callable() : o->impl != nullptr)) return no_such_overload();
    }
    if (N > 0 && o->size_cost) {
      const Value& a = vals[0];
      size_t sz = a.kind == ValueKind::kString || a.kind == ValueKind::kBytes ? a.n
                  : a.kind == ValueKind::kList                             ? a.list_data().size()
                                                                           : 0;
      f.cost += sz / 10;
    }
    if constexpr (Ctx) {
      return o->invoke(ctx_, vals);
    } else {
      return o->impl(vals);
    }
  }

 private:
  struct Candidate {
    const Overload* overload;
    int8_t kinds[N == 0 ? 1 : N];  // required ValueKind per argument, -1 for any
    bool matches(const Value* vals) const {
      for (size_t k = 0; k < N; ++k) {
        if (kinds[k] >= 0 && static_cast<int8_t>(vals[k].kind) != kinds[k]) return false;
      }
      return true;
    }
  };

  NodePtr args_[N == 0 ? 1 : N];
  const Value* const_[N == 0 ? 1 : N];  // the value of a constant argument, else null
  std::vector<Candidate> candidates_;
  const Overload* direct_ = nullptr;
  CallContext ctx_;
};

// Calls with more arguments than the specialized arities.
class CallNodeN : public Node {
 public:
  CallNodeN(std::vector<const Overload*> overloads, std::vector<NodePtr> args, CallContext ctx)
      : overloads_(std::move(overloads)), args_(std::move(args)), ctx_(ctx) {}
  Value eval(Frame& f) const override {
    ++f.cost;
    std::vector<Value> vals(args_.size());
    for (size_t k = 0; k < args_.size(); ++k) {
      vals[k] = args_[k]->eval(f);
      if (vals[k].is_error()) return vals[k];
    }
    for (const Overload* o : overloads_) {
      bool ok = o->callable();
      for (size_t k = 0; ok && k < vals.size(); ++k) ok = value_matches(o->params[k], vals[k]);
      if (ok) return o->invoke(ctx_, vals.data());
    }
    return no_such_overload();
  }

 private:
  std::vector<const Overload*> overloads_;
  std::vector<NodePtr> args_;
  CallContext ctx_;
};

// device.driver / device.allowMultipleAllocations / device.attributes / device.capacity.
class DeviceFieldNode : public Node {
 public:
  enum class Field { kDriver, kAttributes, kCapacity, kAllowMultiple };
  explicit DeviceFieldNode(Field field) : field_(field) {}
  Value eval(Frame& f) const override {
    f.cost += 2;
    const DeviceBinding::Impl* d = f.in.device;
    if (!d) return Value::error("no such attribute(s): device");
    switch (field_) {
      case Field::kDriver: return Value::borrowed_string(d->driver);
      case Field::kAttributes: return Value::borrowed_map(&d->attributes);
      case Field::kCapacity: return Value::borrowed_map(&d->capacity);
      case Field::kAllowMultiple: return Value::boolean(d->allow_multiple_allocations);
    }
    return Value();
  }

 private:
  Field field_;
};

// `x == "literal"`: the common selector comparison without dispatch.
class EqStringNode : public Node {
 public:
  EqStringNode(NodePtr operand, std::string lit, bool negate, NodePtr fallback)
      : operand_(std::move(operand)), lit_(std::move(lit)), negate_(negate), fallback_(std::move(fallback)) {}
  Value eval(Frame& f) const override {
    Value v = operand_->eval(f);
    if (v.kind == ValueKind::kString) {
      ++f.cost;
      return Value::boolean(same_bytes(v.str(), lit_) != negate_);
    }
    if (v.is_error()) return v;
    return fallback_->eval(f);
  }

 private:
  NodePtr operand_;
  std::string lit_;
  bool negate_;
  NodePtr fallback_;  // generic == / != for non-string operands
};

// `x <op> c` on ints with an int constant c (`q.compareTo(...) >= 0`, `size() > 0`),
// without dispatch. A non-int x (only possible through dyn) takes the generic call.
class CompareIntConstNode : public Node {
 public:
  CompareIntConstNode(NodePtr operand, int64_t c, int op, NodePtr fallback)
      : operand_(std::move(operand)), c_(c), op_(op), fallback_(std::move(fallback)) {}
  Value eval(Frame& f) const override {
    Value v = operand_->eval(f);
    if (v.kind != ValueKind::kInt) {
      if (v.is_error()) return v;
      return fallback_->eval(f);
    }
    ++f.cost;
    switch (op_) {
      case 0: return Value::boolean(v.i < c_);
      case 1: return Value::boolean(v.i <= c_);
      case 2: return Value::boolean(v.i > c_);
      case 3: return Value::boolean(v.i >= c_);
      case 4: return Value::boolean(v.i == c_);
      default: return Value::boolean(v.i != c_);
    }
  }

 private:
  NodePtr operand_;
  int64_t c_;
  int op_;
  NodePtr fallback_;
};

class LogicNode : public Node {
 public:
  LogicNode(bool is_and, std::vector<NodePtr> terms) : and_(is_and), terms_(std::move(terms)) {}
  Value eval(Frame& f) const override {
    Value err;
    bool have_err = false;
    for (const auto& t : terms_) {
      Value v = t->eval(f);
      if (v.kind == ValueKind::kBool) {
        if (v.b != and_) return v;  // false for &&, true for ||
        continue;
      }
      if (!have_err) {
        err = v.is_error() ? std::move(v) : no_such_overload();
        have_err = true;
      }
    }
    if (have_err) return err;
    return Value::boolean(and_);
  }

 private:
  bool and_;
  std::vector<NodePtr> terms_;
};

class TernaryNode : public Node {
 public:
  TernaryNode(NodePtr c, NodePtr a, NodePtr b) : c_(std::move(c)), a_(std::move(a)), b_(std::move(b)) {}
  Value eval(Frame& f) const override {
    Value c = c_->eval(f);
    if (c.kind == ValueKind::kBool) return c.b ? a_->eval(f) : b_->eval(f);
    if (c.is_error()) return c;
    return no_such_overload();
  }

 private:
  NodePtr c_, a_, b_;
};

class NotStrictlyFalseNode : public Node {
 public:
  explicit NotStrictlyFalseNode(NodePtr e) : e_(std::move(e)) {}
  Value eval(Frame& f) const override {
    Value v = e_->eval(f);
    return Value::boolean(v.kind != ValueKind::kBool || v.b);
  }

 private:
  NodePtr e_;
};

class MatchesNode : public Node {
 public:
  MatchesNode(NodePtr subject, std::unique_ptr<RE2> re) : subject_(std::move(subject)), re_(std::move(re)) {}
  Value eval(Frame& f) const override {
    Value s = subject_->eval(f);
    if (s.is_error()) return s;
    if (s.kind != ValueKind::kString) return no_such_overload();
    f.cost += 1 + s.n / 10;
    return Value::boolean(RE2::PartialMatch(re2::StringPiece(s.str().data(), s.n), *re_));
  }

 private:
  NodePtr subject_;
  std::unique_ptr<RE2> re_;
};

// s.find(re) / s.findAll(re[, n]) with a constant pattern compiled once.
class FindNode : public Node {
 public:
  FindNode(NodePtr subject, std::unique_ptr<RE2> re, bool all, NodePtr limit)
      : subject_(std::move(subject)), re_(std::move(re)), all_(all), limit_(std::move(limit)) {}
  Value eval(Frame& f) const override {
    ++f.cost;
    Value s = subject_->eval(f);
    if (s.is_error()) return s;
    int64_t limit = all_ ? -1 : 1;
    if (limit_) {
      Value n = limit_->eval(f);
      if (n.is_error()) return n;
      if (n.kind != ValueKind::kInt) return no_such_overload();
      limit = n.i;
    }
    if (s.kind != ValueKind::kString) return no_such_overload();
    Value found = lib::find_all_re(s.str(), *re_, limit);
    if (all_) return found;
    if (found.list_data().empty()) return Value::borrowed_string("");
    return found.list_data()[0];
  }

 private:
  NodePtr subject_;
  std::unique_ptr<RE2> re_;
  bool all_;
  NodePtr limit_;
};

class ListNode : public Node {
 public:
  ListNode(std::vector<NodePtr> elems, std::vector<bool> optional)
      : elems_(std::move(elems)), optional_(std::move(optional)) {}
  Value eval(Frame& f) const override {
    f.cost += 10;  // cel-go's list creation cost
    ListData out;
    out.reserve(elems_.size());
    for (size_t k = 0; k < elems_.size(); ++k) {
      Value v = elems_[k]->eval(f);
      if (v.is_error()) return v;
      if (optional_[k]) {
        if (v.kind != ValueKind::kOptional) return no_such_overload();
        if (!v.optional_value()) continue;
        out.push_back(*v.optional_value());
        continue;
      }
      out.push_back(std::move(v));
    }
    return Value::list(std::move(out));
  }

 private:
  std::vector<NodePtr> elems_;
  std::vector<bool> optional_;
};

class MapNode : public Node {
 public:
  struct Entry {
    NodePtr key, value;
    bool optional;
  };
  explicit MapNode(std::vector<Entry> entries) : entries_(std::move(entries)) {}
  Value eval(Frame& f) const override {
    f.cost += 30;  // cel-go's map creation cost
    MapData out;
    for (const auto& e : entries_) {
      Value k = e.key->eval(f);
      if (k.is_error()) return k;
      Value v = e.value->eval(f);
      if (v.is_error()) return v;
      if (k.kind != ValueKind::kString && k.kind != ValueKind::kInt && k.kind != ValueKind::kUint &&
          k.kind != ValueKind::kBool) {
        return Value::error("unsupported key type");
      }
      if (e.optional) {
        if (v.kind != ValueKind::kOptional) return no_such_overload();
        if (!v.optional_value()) continue;
        Value inner = *v.optional_value();
        v = std::move(inner);
      }
      if (out.find(k)) return Value::error("Failed with repeated key");
      out.entries.emplace_back(std::move(k), std::move(v));
    }
    return Value::map(std::move(out));
  }

 private:
  std::vector<Entry> entries_;
};

class ComprehensionNode : public Node {
 public:
  size_t iter_slot = 0, iter2_slot = 0, accu_slot = 0;
  bool two = false;
  NodePtr range, init, cond, step, result;

  Value eval(Frame& f) const override {
    Value r = range->eval(f);
    if (r.is_error()) return r;
    Value accu = init->eval(f);
    if (accu.is_error() && false) return accu;
    f.slots[accu_slot] = std::move(accu);
    if (r.kind == ValueKind::kList) {
      const ListData& l = r.list_data();
      for (size_t k = 0; k < l.size(); ++k) {
        if (!iterate(f, two ? Value::integer(static_cast<int64_t>(k)) : l[k], l[k])) break;
        if (f.cost > f.in.cost_limit) return cost_exceeded();
      }
    } else if (r.kind == ValueKind::kMap) {
      for (const auto& [k, v] : r.map_data().entries) {
        if (!iterate(f, k, v)) break;
        if (f.cost > f.in.cost_limit) return cost_exceeded();
      }
    } else {
      return no_such_overload();
    }
    if (f.cost > f.in.cost_limit) return cost_exceeded();
    Value out = result->eval(f);
    f.slots[accu_slot] = Value();
    return out;
  }

 private:
  // One loop iteration; false when the loop condition stops the loop.
  bool iterate(Frame& f, const Value& v1, const Value& v2) const {
    ++f.cost;
    f.slots[iter_slot] = v1;
    if (two) f.slots[iter2_slot] = v2;
    Value c = cond->eval(f);
    if (c.kind == ValueKind::kBool && !c.b) return false;
    f.slots[accu_slot] = step->eval(f);
    return true;
  }
};

// Binding of a constant name whose loop never runs (cel.bind): evaluates init
// into the slot, then the result.
class BindNode : public Node {
 public:
  size_t slot = 0;
  NodePtr init, result;
  Value eval(Frame& f) const override {
    Value saved = std::move(f.slots[slot]);
    f.slots[slot] = init->eval(f);
    Value out = result->eval(f);
    f.slots[slot] = std::move(saved);
    return out;
  }
};

// `v` with an optional's value in place of the optional; false when it is
// optional.none() (then `v` stays as it was).
bool unwrap_optional(Value& v) {
  if (v.kind != ValueKind::kOptional) return true;
  if (!v.optional_value()) return false;
  Value inner = *v.optional_value();
  v = std::move(inner);
  return true;
}

// optional.of(*found), or optional.none() when nothing was found.
Value optional_of_found(const Value* found) { return found ? Value::optional_of(*found) : Value::optional_none(); }

class OptSelectNode : public Node {
 public:
  OptSelectNode(NodePtr operand, std::string field) : operand_(std::move(operand)), field_(std::move(field)) {}
  Value eval(Frame& f) const override {
    ++f.cost;
    Value v = operand_->eval(f);
    if (v.is_error()) return v;
    if (!unwrap_optional(v)) return v;  // optional.none()
    if (v.kind == ValueKind::kMap) {
      const Value* found = v.map_data().find_string(field_);
      if (!found && v.map_data().default_empty) return Value::optional_of(Value::borrowed_map(&empty_map()));
      return optional_of_found(found);
    }
    Value r = select_field(v, field_, false);
    if (r.is_error()) return r;
    return Value::optional_of(std::move(r));
  }

 private:
  NodePtr operand_;
  std::string field_;
};

class OptIndexNode : public Node {
 public:
  OptIndexNode(NodePtr operand, NodePtr index) : operand_(std::move(operand)), index_(std::move(index)) {}
  Value eval(Frame& f) const override {
    ++f.cost;
    Value v = operand_->eval(f);
    if (v.is_error()) return v;
    Value k = index_->eval(f);
    if (k.is_error()) return k;
    if (!unwrap_optional(v)) return v;  // optional.none()
    if (v.kind == ValueKind::kMap) return optional_of_found(v.map_data().find(k));
    if (v.kind == ValueKind::kList) {
      if (k.kind != ValueKind::kInt) return no_such_overload();
      if (k.i < 0 || static_cast<size_t>(k.i) >= v.list_data().size()) return Value::optional_none();
      return Value::optional_of(v.list_data()[static_cast<size_t>(k.i)]);
    }
    return no_such_overload();
  }

 private:
  NodePtr operand_, index_;
};

}  // namespace

// ---------------------------------------------------------------- planner

class Planner {
 public:
  Planner(bool checked, const std::function<CallContext()>& context) : checked_(checked), context_source_(context) {}

  NodePtr plan(const Expr& e) {
    switch (e.kind) {
      case ExprKind::kConst: return std::make_unique<ConstNode>(literal_value(e.literal));
      case ExprKind::kIdent: return plan_ident(e);
      case ExprKind::kSelect: return plan_select(e);
      case ExprKind::kCall: return plan_call(e);
      case ExprKind::kList: {
        std::vector<NodePtr> elems;
        std::vector<bool> opt;
        for (size_t k = 0; k < e.args.size(); ++k) {
          elems.push_back(plan(*e.args[k]));
          opt.push_back(std::find(e.optional_indices.begin(), e.optional_indices.end(), static_cast<int32_t>(k)) !=
                        e.optional_indices.end());
        }
        return std::make_unique<ListNode>(std::move(elems), std::move(opt));
      }
      case ExprKind::kMap: {
        std::vector<MapNode::Entry> entries;
        for (const auto& en : e.entries) entries.push_back({plan(*en.key), plan(*en.value), en.optional});
        return std::make_unique<MapNode>(std::move(entries));
      }
      case ExprKind::kStruct:
        return std::make_unique<ConstNode>(Value::error("unknown type: " + e.name));
      case ExprKind::kComprehension: return plan_comprehension(e);
    }
    return std::make_unique<ConstNode>(Value::error("internal: unknown node"));
  }

  size_t max_slots() const { return max_slots_; }
  bool uses_context() const { return uses_context_; }

 private:
  static Value literal_value(const Literal& l) {
    switch (l.kind) {
      case Literal::Kind::kNull: return Value::null();
      case Literal::Kind::kBool: return Value::boolean(l.b);
      case Literal::Kind::kInt: return Value::integer(l.i);
      case Literal::Kind::kUint: return Value::uinteger(l.u);
      case Literal::Kind::kDouble: return Value::dbl(l.d);
      case Literal::Kind::kString: return Value::string(l.s);
      case Literal::Kind::kBytes: return Value::bytes(l.s);
    }
    return Value();
  }

  int find_slot(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (it->first == name) return static_cast<int>(it->second);
    }
    return -1;
  }
  size_t push_scope(const std::string& name) {
    size_t slot = scopes_.size();
    scopes_.emplace_back(name, slot);
    max_slots_ = std::max(max_slots_, scopes_.size());
    return slot;
  }

  NodePtr plan_ident(const Expr& e) {
    if (e.name.empty() || e.name[0] != '.') {
      int slot = find_slot(e.name);
      if (slot >= 0) return std::make_unique<SlotNode>(static_cast<size_t>(slot));
    }
    std::string name = e.name[0] == '.' ? e.name.substr(1) : e.name;
    if (e.is_type_name || (!checked_ && is_type_name(name) && name != "dyn")) {
      return std::make_unique<ConstNode>(Value::type_name(type_value_name(name)));
    }
    if (name == "device") return std::make_unique<DeviceNode>();
    return std::make_unique<GlobalNode>(name);
  }

  static bool is_type_name(const std::string& n) {
    return n == "int" || n == "uint" || n == "double" || n == "bool" || n == "string" || n == "bytes" ||
           n == "null_type" || n == "list" || n == "map" || n == "type" || n == "dyn" || n == "optional_type";
  }
  static std::string_view type_value_name(const std::string& n) {
    static const char* kNames[] = {"int", "uint", "double", "bool", "string", "bytes", "null_type",
                                   "list", "map", "type", "dyn", "optional_type",
                                   "google.protobuf.Timestamp", "google.protobuf.Duration", "net.IP", "net.CIDR",
                                   "kubernetes.URL"};
    for (const char* k : kNames) {
      if (n == k) return k;
    }
    return "dyn";
  }

  bool is_device_ident(const Expr& e) const {
    return e.kind == ExprKind::kIdent && e.name == "device" && find_slot("device") < 0;
  }

  // Matches device.attributes['d'] / device.capacity['d'] with a constant domain.
  bool domain_lookup(const Expr& e, bool& capacity, std::string& domain) const {
    if (e.kind != ExprKind::kCall || e.name != "_[_]" || e.operand || e.args.size() != 2) return false;
    const Expr& m = *e.args[0];
    const Expr& k = *e.args[1];
    if (m.kind != ExprKind::kSelect || m.test_only || !is_device_ident(*m.operand)) return false;
    if (m.name != "attributes" && m.name != "capacity") return false;
    if (k.kind != ExprKind::kConst || k.literal.kind != Literal::Kind::kString) return false;
    capacity = m.name == "capacity";
    domain = k.literal.s;
    return true;
  }

  NodePtr plan_select(const Expr& e) {
    bool capacity;
    std::string domain;
    if (domain_lookup(*e.operand, capacity, domain)) {
      return std::make_unique<AttrLookupNode>(capacity, domain, e.name, e.test_only);
    }
    if (!e.test_only && is_device_ident(*e.operand)) {
      using F = DeviceFieldNode::Field;
      if (e.name == "driver") return std::make_unique<DeviceFieldNode>(F::kDriver);
      if (e.name == "attributes") return std::make_unique<DeviceFieldNode>(F::kAttributes);
      if (e.name == "capacity") return std::make_unique<DeviceFieldNode>(F::kCapacity);
      if (e.name == "allowMultipleAllocations") return std::make_unique<DeviceFieldNode>(F::kAllowMultiple);
    }
    if (!checked_ && !e.test_only) {
      std::vector<std::string> parts{e.name};
      const Expr* x = e.operand.get();
      while (x->kind == ExprKind::kSelect && !x->test_only) {
        parts.push_back(x->name);
        x = x->operand.get();
      }
      if (x->kind == ExprKind::kIdent && find_slot(x->name) < 0 && x->name != "device") {
        parts.push_back(x->name);
        std::reverse(parts.begin(), parts.end());
        return std::make_unique<QualifiedNode>(std::move(parts));
      }
    }
    return std::make_unique<SelectNode>(plan(*e.operand), e.name, e.test_only);
  }

  void flatten_logic(const Expr& e, const std::string& fn, std::vector<NodePtr>& out) {
    if (e.kind == ExprKind::kCall && e.name == fn && !e.operand && e.args.size() == 2) {
      flatten_logic(*e.args[0], fn, out);
      flatten_logic(*e.args[1], fn, out);
      return;
    }
    out.push_back(plan(e));
  }

  std::vector<const Overload*> overloads_for(const Expr& e) {
    if (checked_ && !e.overloads.empty()) return e.overloads;
    return find_overloads(e.name, e.operand != nullptr, e.args.size() + (e.operand ? 1 : 0));
  }

  NodePtr plan_call(const Expr& e) {
    const std::string& fn = e.name;
    if (!e.operand) {
      if ((fn == "_&&_" || fn == "_||_") && e.args.size() == 2) {
        std::vector<NodePtr> terms;
        flatten_logic(e, fn, terms);
        return std::make_unique<LogicNode>(fn == "_&&_", std::move(terms));
      }
      if (fn == "_?_:_" && e.args.size() == 3) {
        return std::make_unique<TernaryNode>(plan(*e.args[0]), plan(*e.args[1]), plan(*e.args[2]));
      }
      if (fn == "@not_strictly_false" && e.args.size() == 1) {
        return std::make_unique<NotStrictlyFalseNode>(plan(*e.args[0]));
      }
      if (fn == "_?._" && e.args.size() == 2 && e.args[1]->kind == ExprKind::kConst) {
        return std::make_unique<OptSelectNode>(plan(*e.args[0]), e.args[1]->literal.s);
      }
      if (fn == "_[?_]" && e.args.size() == 2) {
        return std::make_unique<OptIndexNode>(plan(*e.args[0]), plan(*e.args[1]));
      }
      if (fn == "_[_]" && e.args.size() == 2) {
        // device.attributes['d']['name'] through the index.
        bool capacity;
        std::string domain;
        const Expr& k = *e.args[1];
        if (domain_lookup(*e.args[0], capacity, domain) && k.kind == ExprKind::kConst &&
            k.literal.kind == Literal::Kind::kString) {
          return std::make_unique<AttrLookupNode>(capacity, domain, k.literal.s, false);
        }
      }
      if (checked_ && e.args.size() == 2 && e.args[0]->type.kind == TypeKind::kInt &&
          e.args[1]->kind == ExprKind::kConst && e.args[1]->literal.kind == Literal::Kind::kInt) {
        static const char* kOps[] = {"_<_", "_<=_", "_>_", "_>=_", "_==_", "_!=_"};
        for (int op = 0; op < 6; ++op) {
          if (fn == kOps[op]) {
            // The fallback is the generic call, evaluated only for a non-int operand.
            return std::make_unique<CompareIntConstNode>(plan(*e.args[0]), e.args[1]->literal.i, op,
                                                         generic_call(e));
          }
        }
      }
      if ((fn == "_==_" || fn == "_!=_") && e.args.size() == 2) {
        for (int side = 0; side < 2; ++side) {
          const Expr& lit = *e.args[side];
          if (lit.kind == ExprKind::kConst && lit.literal.kind == Literal::Kind::kString) {
            // "lit" == x is plain string equality for every x; x == "lit" is
            // too except for Quantity/Semver x, which the fallback handles.
            auto fallback = generic_call(e);
            return std::make_unique<EqStringNode>(plan(*e.args[1 - side]), lit.literal.s, fn == "_!=_",
                                                  std::move(fallback));
          }
        }
      }
      // Constant folding of the value constructors with constant arguments
      // (quantity('...'), semver('...'), timestamp('...'), duration('...'),
      // ip('...'), cidr('...'), url('...'), format.named('...'), format.x()),
      // as cel-go's OptOptimize does. Errors stay run-time errors.
      if (foldable(fn) && e.args.size() <= 2) {
        bool all_const = true;
        for (const auto& a : e.args) all_const = all_const && a->kind == ExprKind::kConst;
        if (all_const) {
          auto node = generic_call(e);
          Activation none;
          EvalInput in;
          in.activation = &none;
          Value dummy;
          Frame f{in, &dummy};
          Value v = node->eval(f);
          if (!v.is_error()) return std::make_unique<ConstNode>(std::move(v));
          return node;
        }
      }
    }
    if ((fn == "find" || fn == "findAll") && e.operand && !e.args.empty() && e.args.size() <= 2 &&
        e.args[0]->kind == ExprKind::kConst && e.args[0]->literal.kind == Literal::Kind::kString &&
        e.overloads.size() == 1) {
      RE2::Options opts;
      opts.set_log_errors(false);
      auto re = std::make_unique<RE2>(e.args[0]->literal.s, opts);
      if (re->ok()) {
        NodePtr limit = e.args.size() == 2 ? plan(*e.args[1]) : nullptr;
        return std::make_unique<FindNode>(plan(*e.operand), std::move(re), fn == "findAll", std::move(limit));
      }
    }
    if (fn == "matches" && e.args.size() == (e.operand ? 1u : 2u)) {
      const Expr& pat = *e.args.back();
      if (pat.kind == ExprKind::kConst && pat.literal.kind == Literal::Kind::kString) {
        RE2::Options opts;
        opts.set_log_errors(false);
        auto re = std::make_unique<RE2>(pat.literal.s, opts);
        if (re->ok()) {
          return std::make_unique<MatchesNode>(plan(e.operand ? *e.operand : *e.args[0]), std::move(re));
        }
      }
    }
    return generic_call(e);
  }

  static bool foldable(const std::string& fn) {
    return fn == "quantity" || fn == "semver" || fn == "timestamp" || fn == "duration" || fn == "ip" ||
           fn == "cidr" || fn == "url" || fn.starts_with("format.");
  }

  NodePtr generic_call(const Expr& e) {
    std::vector<NodePtr> args;
    if (e.operand) args.push_back(plan(*e.operand));
    for (const auto& a : e.args) args.push_back(plan(*a));
    auto overloads = overloads_for(e);
    if (overloads.empty()) {
      return std::make_unique<ConstNode>(Value::error("no matching overload for " + e.name));
    }
    bool ctx = std::any_of(overloads.begin(), overloads.end(), [](const Overload* o) { return o->ctx_impl; });
    if (ctx) return context_call(std::move(overloads), std::move(args));
    bool exact = checked_ && overloads.size() == 1;
    auto concrete = [](const Type& t) {
      return t.kind != TypeKind::kDyn && t.kind != TypeKind::kTypeParam && t.kind != TypeKind::kError;
    };
    if (e.operand) exact = exact && concrete(e.operand->type);
    for (const auto& a : e.args) exact = exact && concrete(a->type);
    switch (args.size()) {
      case 0: return std::make_unique<CallNode<0>>(std::move(overloads), std::move(args), exact);
      case 1: return std::make_unique<CallNode<1>>(std::move(overloads), std::move(args), exact);
      case 2: return std::make_unique<CallNode<2>>(std::move(overloads), std::move(args), exact);
      case 3: return std::make_unique<CallNode<3>>(std::move(overloads), std::move(args), exact);
      case 4: return std::make_unique<CallNode<4>>(std::move(overloads), std::move(args), exact);
      default: return std::make_unique<CallNodeN>(std::move(overloads), std::move(args), CallContext{});
    }
  }

  // A call one of whose overloads uses the CallContext (a timestamp accessor with a
  // time zone): the context is asked for once, when the first such call is planned.
  NodePtr context_call(std::vector<const Overload*> overloads, std::vector<NodePtr> args) {
    if (!uses_context_) {
      uses_context_ = true;
      if (context_source_) context_ = context_source_();
    }
    if (args.size() == 2) return std::make_unique<CallNode<2, true>>(std::move(overloads), std::move(args), false, context_);
    return std::make_unique<CallNodeN>(std::move(overloads), std::move(args), context_);
  }

  NodePtr plan_comprehension(const Expr& e) {
    // cel.bind: the loop never runs; evaluate as a scoped binding.
    if (e.iter_range->kind == ExprKind::kList && e.iter_range->args.empty() && e.loop_cond->kind == ExprKind::kConst &&
        e.loop_cond->literal.kind == Literal::Kind::kBool && !e.loop_cond->literal.b) {
      auto b = std::make_unique<BindNode>();
      b->init = plan(*e.accu_init);
      b->slot = push_scope(e.accu_var);
      b->result = plan(*e.result);
      scopes_.pop_back();
      return b;
    }
    auto c = std::make_unique<ComprehensionNode>();
    c->range = plan(*e.iter_range);
    c->init = plan(*e.accu_init);
    c->accu_slot = push_scope(e.accu_var);
    c->iter_slot = push_scope(e.iter_var);
    c->two = !e.iter_var2.empty();
    if (c->two) c->iter2_slot = push_scope(e.iter_var2);
    c->cond = plan(*e.loop_cond);
    c->step = plan(*e.loop_step);
    scopes_.pop_back();
    if (c->two) scopes_.pop_back();
    c->result = plan(*e.result);
    scopes_.pop_back();
    return c;
  }

  bool checked_;
  std::vector<std::pair<std::string, size_t>> scopes_;
  size_t max_slots_ = 0;
  bool uses_context_ = false;
  const std::function<CallContext()>& context_source_;
  CallContext context_;
};

Plan::~Plan() = default;

std::unique_ptr<Plan> Plan::build(const Expr& root, bool checked, const std::function<CallContext()>& context) {
  Planner planner(checked, context);
  std::unique_ptr<Plan> p(new Plan());
  p->root_ = planner.plan(root);
  p->slots_ = planner.max_slots();
  p->uses_context_ = planner.uses_context();
  return p;
}

Value Plan::eval(const EvalInput& in, uint64_t* cost) const {
  if (slots_ == 0) {
    // Selectors without comprehensions or bindings: no slot storage at all.
    Frame f{in, nullptr};
    Value v = root_->eval(f);
    if (cost) *cost = f.cost;
    if (f.cost > in.cost_limit) return cost_exceeded();
    return v;
  }
  constexpr size_t kInlineSlots = 8;
  Value inline_slots[kInlineSlots];
  std::vector<Value> heap_slots;
  Value* slots = inline_slots;
  if (slots_ > kInlineSlots) {
    heap_slots.resize(slots_);
    slots = heap_slots.data();
  }
  Frame f{in, slots};
  Value v = root_->eval(f);
  if (cost) *cost = f.cost;
  if (f.cost > in.cost_limit) return cost_exceeded();
  return v;
}

}  // namespace draplane::cel
