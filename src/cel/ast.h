// The CEL abstract syntax tree produced by the parser (macros already expanded, as
// cel-go does) and annotated in place by the checker.
//
// Node kinds follow cel.expr.Expr: constant, identifier, select, call, list, map
// (also used for message construction, which this environment rejects), and
// comprehension. Every node records the byte offset of the token cel-go reports for
// it (operator, '(' of a call, '.' of a select), which error messages turn into
// line:column.
//
// Plain data; not thread-safe for mutation, immutable once a Program owns it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cel/types.h"

namespace draplane::cel {

struct Overload;

struct Literal {
  enum class Kind { kNull, kBool, kInt, kUint, kDouble, kString, kBytes };
  Kind kind = Kind::kNull;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  std::string s;  // string (UTF-8) or bytes
};

enum class ExprKind { kConst, kIdent, kSelect, kCall, kList, kMap, kStruct, kComprehension };

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct MapEntry {
  ExprPtr key;  // for kStruct, unused (field name in `field`)
  std::string field;
  ExprPtr value;
  bool optional = false;  // `?key: value`
  int32_t offset = 0;
};

struct Expr {
  ExprKind kind = ExprKind::kConst;
  int32_t offset = 0;  // byte offset in the source

  Literal literal;   // kConst
  std::string name;  // kIdent name, kSelect field, kCall function, kStruct type name

  // kSelect: operand; kCall: receiver (null for global calls).
  ExprPtr operand;
  bool test_only = false;  // kSelect from has()

  std::vector<ExprPtr> args;              // kCall arguments, kList elements
  std::vector<int32_t> optional_indices;  // kList: elements written `?e`
  std::vector<MapEntry> entries;          // kMap / kStruct

  // kComprehension (cel-go layout; iter_var2 non-empty for two-variable forms).
  std::string iter_var, iter_var2, accu_var;
  ExprPtr iter_range, accu_init, loop_cond, loop_step, result;

  // Filled by the checker.
  Type type;
  // kIdent that names a type (int, string, ...) rather than a variable.
  bool is_type_name = false;
  // kCall: the overloads that may apply at run time (one when resolved statically).
  std::vector<const Overload*> overloads;
};

inline ExprPtr make_expr(ExprKind kind, int32_t offset) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->offset = offset;
  return e;
}

}  // namespace draplane::cel
