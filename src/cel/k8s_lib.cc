// Kubernetes CEL libraries used by DRA selectors (k8s.io/apiserver/pkg/cel/library):
// quantity (quantity, isQuantity and the Quantity methods), semver (semver,
// isSemver with the normalize flag, and the Semver methods) and regex (find,
// findAll).
#include <limits>

#include <re2/re2.h>

#include "cel/big_quantity.h"
#include "cel/functions.h"
#include "cel/overload_adder.h"

namespace draplane::cel::lib {

Value find_all_re(std::string_view s, const RE2& re, int64_t limit) {
  ListData out;
  re2::StringPiece input(s.data(), s.size());
  re2::StringPiece match;
  size_t pos = 0;
  while (limit < 0 || static_cast<int64_t>(out.size()) < limit) {
    if (pos > s.size() || !re.Match(input, pos, s.size(), RE2::UNANCHORED, &match, 1)) break;
    out.push_back(Value::string(std::string(match.data(), match.size())));
    size_t end = static_cast<size_t>(match.data() - s.data()) + match.size();
    pos = match.empty() ? end + 1 : end;
  }
  return Value::list(std::move(out));
}

namespace {

const Type kB(TypeKind::kBool), kI(TypeKind::kInt), kS(TypeKind::kString), kD(TypeKind::kDouble),
    kQ(TypeKind::kQuantity), kV(TypeKind::kSemver);

// Quantity functions. api::Quantity covers every value up to ~1.7e29; past it
// (parsing "1e30", or a sum that overflows) the value is a BigQuantity, as
// resource.Quantity's inf.Dec form is exact at any size.
bool both_small(const Value* a) { return !is_big_quantity(a[0]) && !is_big_quantity(a[1]); }

Value quantity(const Value* a) {
  auto q = api::Quantity::parse(a[0].str());
  if (q) return Value::quantity(*q);
  const std::string& msg = q.error().message();
  if (msg.rfind("quantity \"", 0) != 0) return Value::error(msg);  // a grammar error
  auto big = parse_big_quantity(a[0].str());
  if (!big) return Value::error(big.error().message());
  return make_quantity(std::move(*big));
}
Value is_quantity(const Value* a) { return Value::boolean(!quantity(a).is_error()); }
Value q_sign(const Value* a) {
  if (is_big_quantity(a[0])) return Value::integer(sign(to_big(a[0])));
  return Value::integer(a[0].quantity_data().sign());
}
// A BigQuantity is never an int64 (it is past 1.7e29).
Value q_is_integer(const Value* a) {
  return Value::boolean(!is_big_quantity(a[0]) && a[0].quantity_data().as_int64().has_value());
}
Value q_as_integer(const Value* a) {
  auto v = is_big_quantity(a[0]) ? std::nullopt : a[0].quantity_data().as_int64();
  if (!v) return Value::error("cannot convert value to integer");
  return Value::integer(*v);
}
Value q_as_float(const Value* a) {
  if (is_big_quantity(a[0])) return Value::dbl(approximate_float(to_big(a[0])));
  return Value::dbl(a[0].quantity_data().as_approximate_double());
}
Value q_add(const Value* a) {
  if (both_small(a)) {
    if (auto r = a[0].quantity_data().add(a[1].quantity_data())) return Value::quantity(*r);
  }
  return make_quantity(add(to_big(a[0]), to_big(a[1])));
}
Value q_sub(const Value* a) {
  if (both_small(a)) {
    if (auto r = a[0].quantity_data().sub(a[1].quantity_data())) return Value::quantity(*r);
  }
  return make_quantity(sub(to_big(a[0]), to_big(a[1])));
}
// The int operand is resource.NewQuantity(n, DecimalExponent).
Value q_with_int(const Value* a, bool subtract) {
  const api::Quantity rhs = api::Quantity::from_int(a[1].i, api::Quantity::Format::kDecimalExponent);
  if (!is_big_quantity(a[0])) {
    auto r = subtract ? a[0].quantity_data().sub(rhs) : a[0].quantity_data().add(rhs);
    if (r) return Value::quantity(*r);
  }
  BigQuantity x = to_big(a[0]), y = to_big(Value::borrowed_quantity(&rhs));
  return make_quantity(subtract ? sub(x, y) : add(x, y));
}
Value q_add_int(const Value* a) { return q_with_int(a, false); }
Value q_sub_int(const Value* a) { return q_with_int(a, true); }
int q_cmp(const Value* a) {
  if (both_small(a)) return a[0].quantity_data().compare(a[1].quantity_data());
  return compare(to_big(a[0]), to_big(a[1]));
}
Value q_greater(const Value* a) { return Value::boolean(q_cmp(a) > 0); }
Value q_less(const Value* a) { return Value::boolean(q_cmp(a) < 0); }
Value q_compare(const Value* a) { return Value::integer(q_cmp(a)); }

Value semver_impl(std::string_view s, bool normalize) {
  std::string err;
  auto v = Semver::parse(s, normalize, &err);
  if (!v) return Value::error(err);  // types.WrapErr of blang/semver's error
  return Value::semver(std::move(*v));
}
Value semver(const Value* a) { return semver_impl(a[0].str(), false); }
Value semver_norm(const Value* a) { return semver_impl(a[0].str(), a[1].b); }
Value is_semver(const Value* a) { return Value::boolean(Semver::parse(a[0].str(), false).has_value()); }
Value is_semver_norm(const Value* a) { return Value::boolean(Semver::parse(a[0].str(), a[1].b).has_value()); }
Value v_major(const Value* a) { return Value::integer(static_cast<int64_t>(a[0].semver_data().major)); }
Value v_minor(const Value* a) { return Value::integer(static_cast<int64_t>(a[0].semver_data().minor)); }
Value v_patch(const Value* a) { return Value::integer(static_cast<int64_t>(a[0].semver_data().patch)); }
Value v_greater(const Value* a) { return Value::boolean(a[0].semver_data().compare(a[1].semver_data()) > 0); }
Value v_less(const Value* a) { return Value::boolean(a[0].semver_data().compare(a[1].semver_data()) < 0); }
Value v_compare(const Value* a) { return Value::integer(a[0].semver_data().compare(a[1].semver_data())); }

Value find_all_impl(std::string_view s, std::string_view pattern, int64_t limit) {
  RE2::Options opts;
  opts.set_log_errors(false);
  RE2 re(re2::StringPiece(pattern.data(), pattern.size()), opts);
  if (!re.ok()) return Value::error("invalid regular expression: " + re.error());
  return find_all_re(s, re, limit);
}
Value find(const Value* a) {
  Value all = find_all_impl(a[0].str(), a[1].str(), 1);
  if (all.is_error()) return all;
  if (all.list_data().empty()) return Value::borrowed_string("");
  return all.list_data()[0];
}
Value find_all(const Value* a) { return find_all_impl(a[0].str(), a[1].str(), -1); }
Value find_all_n(const Value* a) { return find_all_impl(a[0].str(), a[1].str(), a[2].i); }

}  // namespace

void register_kubernetes(std::vector<Overload>& out) {
  const OverloadAdder add(out);
  add("string_to_quantity", "quantity", false, {kS}, kQ, quantity);
  add("is_quantity_string", "isQuantity", false, {kS}, kB, is_quantity);
  // quantity.go declares sign with cel.Overload: global only, sign(q).
  add("quantity_sign", "sign", false, {kQ}, kI, q_sign);
  add("quantity_is_integer", "isInteger", true, {kQ}, kB, q_is_integer);
  add("quantity_get_integer", "asInteger", true, {kQ}, kI, q_as_integer);
  add("quantity_get_float", "asApproximateFloat", true, {kQ}, kD, q_as_float);
  add("quantity_add", "add", true, {kQ, kQ}, kQ, q_add);
  add("quantity_add_int", "add", true, {kQ, kI}, kQ, q_add_int);
  add("quantity_sub", "sub", true, {kQ, kQ}, kQ, q_sub);
  add("quantity_sub_int", "sub", true, {kQ, kI}, kQ, q_sub_int);
  add("quantity_is_greater_than", "isGreaterThan", true, {kQ, kQ}, kB, q_greater);
  add("quantity_is_less_than", "isLessThan", true, {kQ, kQ}, kB, q_less);
  add("quantity_compare_to", "compareTo", true, {kQ, kQ}, kI, q_compare);
  add("string_to_semver", "semver", false, {kS}, kV, semver);
  add("string_bool_to_semver", "semver", false, {kS, kB}, kV, semver_norm);
  add("is_semver_string", "isSemver", false, {kS}, kB, is_semver);
  add("is_semver_string_bool", "isSemver", false, {kS, kB}, kB, is_semver_norm);
  add("semver_major", "major", true, {kV}, kI, v_major);
  add("semver_minor", "minor", true, {kV}, kI, v_minor);
  add("semver_patch", "patch", true, {kV}, kI, v_patch);
  add("semver_is_greater_than", "isGreaterThan", true, {kV, kV}, kB, v_greater);
  add("semver_is_less_than", "isLessThan", true, {kV, kV}, kB, v_less);
  add("semver_compare_to", "compareTo", true, {kV, kV}, kI, v_compare);
  add("string_find", "find", true, {kS, kS}, kS, find);
  add("string_find_all", "findAll", true, {kS, kS}, Type::list(kS), find_all);
  add("string_find_all_n", "findAll", true, {kS, kS, kI}, Type::list(kS), find_all_n);
}

}  // namespace draplane::cel::lib
