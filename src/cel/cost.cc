#include "cel/cost.h"

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "cel/functions.h"

namespace draplane::cel {

namespace {

constexpr uint64_t kUnknown = std::numeric_limits<uint64_t>::max();

uint64_t add(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? kUnknown : r;
}
uint64_t mul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? kUnknown : r;
}
// cel-go's MultiplyByCostFactor: ceil(size * factor), unknown stays unknown.
uint64_t factor(uint64_t size, double f) {
  if (size == kUnknown) return kUnknown;
  double v = std::ceil(static_cast<double>(size) * f);
  return v >= 1.8446744073709552e19 ? kUnknown : static_cast<uint64_t>(v);
}
constexpr double kStringTraversal = 0.1;
constexpr double kRegexLength = 0.25;

// Where an expression sits in the device object (Kubernetes' size estimator
// walks the declared type along this path).
enum class Path {
  kNone,
  kDevice,
  kDriver,
  kAllowMultiple,
  kAttributes,    // map(domain, map(id, attribute))
  kAttrDomain,    // a domain map of attributes
  kAttrValue,     // one attribute value
  kCapacity,      // map(domain, map(id, quantity))
  kCapDomain,
  kCapValue,
  kDomainKey,     // a domain name (iteration variable)
  kIdKey,         // an attribute/capacity id (iteration variable)
};

// Maximum sizes Kubernetes declares (DriverNameMaxLength, DeviceMaxDomainLength,
// DeviceMaxIDLength, DeviceAttributeMaxValueLength,
// ResourceSliceMaxAttributesAndCapacitiesPerDevice).
uint64_t path_size(Path p) {
  switch (p) {
    case Path::kDriver: return 63;
    case Path::kAllowMultiple: return 1;
    case Path::kAttributes:
    case Path::kAttrDomain:
    case Path::kCapacity:
    case Path::kCapDomain: return 32;
    case Path::kAttrValue: return 64;
    case Path::kCapValue: return 0;
    case Path::kDomainKey: return 63;
    case Path::kIdKey: return 32;
    default: return kUnknown;
  }
}

Path member_path(Path p, const std::string& field) {
  switch (p) {
    case Path::kDevice:
      if (field == "driver") return Path::kDriver;
      if (field == "attributes") return Path::kAttributes;
      if (field == "capacity") return Path::kCapacity;
      if (field == "allowMultipleAllocations") return Path::kAllowMultiple;
      return Path::kNone;
    case Path::kAttributes: return Path::kAttrDomain;
    case Path::kAttrDomain: return Path::kAttrValue;
    case Path::kCapacity: return Path::kCapDomain;
    case Path::kCapDomain: return Path::kCapValue;
    default: return Path::kNone;
  }
}

struct Est {
  uint64_t cost = 0;
  uint64_t size = kUnknown;
  Path path = Path::kNone;
};

bool scalar(const Type& t) {
  switch (t.kind) {
    case TypeKind::kBool:
    case TypeKind::kInt:
    case TypeKind::kUint:
    case TypeKind::kDouble:
    case TypeKind::kTimestamp:
    case TypeKind::kDuration: return true;
    case TypeKind::kOptional: return scalar(t.params[0]);
    default: return false;
  }
}

struct Local {
  std::string name;
  uint64_t size;
  Path path;
};

class Coster {
 public:
  Est visit(const Expr& e) {
    Est r = visit_inner(e);
    if (r.size == kUnknown && r.path != Path::kNone) r.size = path_size(r.path);
    if (r.size == kUnknown && scalar(e.type)) r.size = 1;
    return r;
  }

 private:
  Est visit_inner(const Expr& e) {
    switch (e.kind) {
      case ExprKind::kConst: {
        Est r;
        if (e.literal.kind == Literal::Kind::kString) r.size = lib::utf8_length(e.literal.s);
        else if (e.literal.kind == Literal::Kind::kBytes) r.size = e.literal.s.size();
        else r.size = 1;
        return r;
      }
      case ExprKind::kIdent: {
        for (auto it = locals_.rbegin(); it != locals_.rend(); ++it) {
          if (it->name == e.name) return {1, it->size, it->path};
        }
        return {1, kUnknown, e.name == "device" ? Path::kDevice : Path::kNone};
      }
      case ExprKind::kSelect: {
        Est op = visit(*e.operand);
        Est r{add(op.cost, 1), kUnknown, e.test_only ? Path::kNone : member_path(op.path, e.name)};
        return r;
      }
      case ExprKind::kCall: return call(e);
      case ExprKind::kList: {
        Est r{10, e.args.size(), Path::kNone};
        for (const auto& a : e.args) r.cost = add(r.cost, visit(*a).cost);
        return r;
      }
      case ExprKind::kMap:
      case ExprKind::kStruct: {
        Est r{e.kind == ExprKind::kMap ? 30u : 40u, e.entries.size(), Path::kNone};
        for (const auto& en : e.entries) {
          if (en.key) r.cost = add(r.cost, visit(*en.key).cost);
          r.cost = add(r.cost, visit(*en.value).cost);
        }
        return r;
      }
      case ExprKind::kComprehension: return comprehension(e);
    }
    return {};
  }

  Est call(const Expr& e) {
    std::vector<Est> a;  // receiver first
    if (e.operand) a.push_back(visit(*e.operand));
    for (const auto& x : e.args) a.push_back(visit(*x));
    uint64_t args_cost = 0;
    for (const auto& x : a) args_cost = add(args_cost, x.cost);
    const std::string& fn = e.name;
    bool member = e.operand != nullptr;
    auto fixed = [&](uint64_t c, uint64_t size = kUnknown) { return Est{add(c, args_cost), size, Path::kNone}; };

    if (fn == "_&&_" || fn == "_||_") return fixed(0);
    if (fn == "_?_:_") {
      Est r{add(a[0].cost, std::max(a[1].cost, a[2].cost)), std::max(a[1].size, a[2].size), Path::kNone};
      return r;
    }
    if ((fn == "_[_]" || fn == "_[?_]") && a.size() == 2) {
      Est r = fixed(1);
      r.path = member_path(a[0].path == Path::kDevice ? Path::kNone : a[0].path, "");
      return r;
    }
    // Kubernetes' library cost estimator.
    if (member && (fn == "isSorted" || fn == "sum" || fn == "max" || fn == "min" || fn == "indexOf" ||
                   fn == "lastIndexOf")) {
      if (e.operand->type.kind == TypeKind::kString) return fixed(factor(a[0].size, kStringTraversal));
      uint64_t el = 1;
      if (e.operand->type.kind == TypeKind::kList) {
        TypeKind k = e.operand->type.params[0].kind;
        if (k == TypeKind::kString || k == TypeKind::kBytes) el = add(1, kUnknown);
      }
      return fixed(mul(a[0].size, el));
    }
    if (member && (fn == "lowerAscii" || fn == "upperAscii" || fn == "substring" || fn == "trim")) {
      return fixed(factor(a[0].size, kStringTraversal), a[0].size);
    }
    if (member && (fn == "replace" || fn == "split")) {
      return fixed(factor(a[0].size, 2 * kStringTraversal), fn == "split" ? a[0].size : kUnknown);
    }
    if (member && fn == "join") return fixed(kUnknown);
    if (member && (fn == "find" || fn == "findAll") && a.size() >= 2) {
      uint64_t str = factor(add(a[0].size, 1), kStringTraversal);
      uint64_t re = factor(a[1].size, kRegexLength);
      return fixed(mul(str, re), a[0].size);
    }
    // quantity(), isQuantity(), semver(), isSemver(), cidr(), isCIDR(), isIP(),
    // ip(string) and ip.isCanonical() are global functions, which Kubernetes'
    // estimator only prices for a receiver: they fall through to cel-go's
    // default of 1 (upstream behaviour, kept).
    if (fn == "url" && !member && a.size() == 1) return fixed(factor(a[0].size, kStringTraversal), a[0].size);
    if (member && fn == "validate" && a.size() == 2) {
      // MaxNameFormatRegexSize (128) x RegexStringLengthCostFactor (0.25).
      return fixed(factor(factor(a[1].size, kStringTraversal), 128 * kRegexLength));
    }
    if (member && (fn == "containsIP" || fn == "containsCIDR") && a.size() == 2) {
      // Byte-list comparison of two addresses of at most 16 bytes: ceil(32 x 0.1);
      // containsCIDR masks first (ceil(16 x 0.1) + 1); a string argument is parsed.
      uint64_t c = factor(32, kStringTraversal);
      if (fn == "containsCIDR") c = add(c, add(factor(16, kStringTraversal), 1));
      if (e.args[0]->type.kind == TypeKind::kString) c = add(c, factor(a[1].size, kStringTraversal));
      return fixed(c);
    }
    // cel-go's estimator.
    if (member && (fn == "startsWith" || fn == "endsWith") && a.size() == 2) {
      return fixed(factor(a[1].size, kStringTraversal));
    }
    if (fn == "@in" && a.size() == 2 && e.args[1]->type.kind == TypeKind::kList) return fixed(a[1].size);
    if (fn == "matches" && a.size() == 2) {
      uint64_t str = factor(add(a[0].size, 1), kStringTraversal);
      uint64_t re = factor(a[1].size, kRegexLength);
      return fixed(mul(str, re));
    }
    if (member && fn == "contains" && a.size() == 2) {
      return fixed(mul(factor(a[0].size, kStringTraversal), factor(a[1].size, kStringTraversal)));
    }
    if (fn == "_+_" && a.size() == 2) {
      TypeKind k = e.type.kind;
      uint64_t sz = add(a[0].size, a[1].size);
      if (k == TypeKind::kList) return fixed(1, sz);
      if (k == TypeKind::kString || k == TypeKind::kBytes) return fixed(factor(sz, kStringTraversal), sz);
    }
    if (fn == "_==_" && a.size() == 2 && types_equivalent(e.args[0]->type, e.args[1]->type)) {
      // Kubernetes' estimator: equality of its object types (only ==; != takes
      // cel-go's size-based default below).
      switch (e.args[0]->type.kind) {
        case TypeKind::kQuantity:
        case TypeKind::kSemver:
        case TypeKind::kIP:
        case TypeKind::kCIDR: return fixed(1);
        case TypeKind::kFormat: return fixed(factor(64, kStringTraversal));  // MaxFormatSize
        case TypeKind::kURL: return fixed(factor(a[1].size, kStringTraversal));
        default: break;
      }
    }
    bool string_order = (fn == "_<_" || fn == "_<=_" || fn == "_>_" || fn == "_>=_") && a.size() == 2 &&
                        (e.args[0]->type.kind == TypeKind::kString || e.args[0]->type.kind == TypeKind::kBytes);
    if ((fn == "_==_" || fn == "_!=_" || string_order) && a.size() == 2) {
      return fixed(factor(std::min(a[0].size, a[1].size), kStringTraversal));
    }
    if (member && fn == "format") return fixed(factor(a[0].size, kStringTraversal));
    if (fn == "bytes" || fn == "string" || fn == "strings.quote") {
      if (a.size() == 1 && (e.args[0]->type.kind == TypeKind::kString || e.args[0]->type.kind == TypeKind::kBytes)) {
        return fixed(factor(a[0].size, kStringTraversal));
      }
    }
    return fixed(1);
  }

  Est comprehension(const Expr& e) {
    Est range = visit(*e.iter_range);
    Est init = visit(*e.accu_init);
    bool bind = e.iter_range->kind == ExprKind::kList && e.iter_range->args.empty() &&
                e.loop_cond->kind == ExprKind::kConst && e.loop_cond->literal.kind == Literal::Kind::kBool &&
                !e.loop_cond->literal.b && e.accu_var != "@result";
    if (bind) {
      locals_.push_back({e.accu_var, init.size, init.path});
      Est result = visit(*e.result);
      locals_.pop_back();
      return {add(add(range.cost, init.cost), result.cost), result.size, result.path};
    }
    locals_.push_back({e.accu_var, kUnknown, Path::kNone});
    // Iteration variables: keys (or indices) and values of the range.
    Path key_path = Path::kNone, value_path = Path::kNone;
    if (range.path == Path::kAttributes || range.path == Path::kCapacity) {
      key_path = Path::kDomainKey;
      value_path = range.path == Path::kAttributes ? Path::kAttrDomain : Path::kCapDomain;
    } else if (range.path == Path::kAttrDomain || range.path == Path::kCapDomain) {
      key_path = Path::kIdKey;
      value_path = range.path == Path::kAttrDomain ? Path::kAttrValue : Path::kCapValue;
    }
    bool list_range = e.iter_range->type.kind == TypeKind::kList;
    if (e.iter_var2.empty()) {
      locals_.push_back({e.iter_var, kUnknown, list_range ? value_path : key_path});
    } else {
      locals_.push_back({e.iter_var, list_range ? 1 : kUnknown, list_range ? Path::kNone : key_path});
      locals_.push_back({e.iter_var2, kUnknown, value_path});
    }
    Est cond = visit(*e.loop_cond);
    Est step = visit(*e.loop_step);
    locals_.pop_back();
    if (!e.iter_var2.empty()) locals_.pop_back();
    Est result = visit(*e.result);
    locals_.pop_back();
    uint64_t loop = mul(range.size, add(step.cost, cond.cost));
    Est r{add(add(add(range.cost, init.cost), result.cost), loop), kUnknown, Path::kNone};
    if (e.accu_init->kind == ExprKind::kConst) r.size = init.size;
    else if (e.accu_init->kind == ExprKind::kList || e.accu_init->kind == ExprKind::kMap) r.size = range.size;
    return r;
  }

  std::vector<Local> locals_;
};

}  // namespace

uint64_t estimate_cost(const Expr& root) { return Coster().visit(root).cost; }

}  // namespace draplane::cel
