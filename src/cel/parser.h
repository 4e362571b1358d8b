// CEL parser: source text -> AST with macros expanded (has, all, exists,
// exists_one/existsOne, map, filter, the two-variable comprehensions
// transformList/transformMap/transformMapEntry, cel.bind, optMap/optFlatMap),
// following cel-go's grammar, precedence, macro expansions and error positions.
//
// Hostile input is bounded: the source length (kMaxSourceLength) and the nesting
// depth of the tree (kMaxDepth) are limited, so no input can overflow the stack of
// the parser, the checker or the evaluator.
//
// Thread-safe: parse() keeps no state between calls.
#pragma once

#include <string_view>
#include <vector>

#include "cel/ast.h"
#include "cel/issues.h"

namespace draplane::cel {

inline constexpr size_t kMaxSourceLength = 100000;  // cel-go's default code point limit
inline constexpr int kMaxDepth = 250;               // cel-go's default recursion limit

// On success returns the root and leaves `issues` empty; on failure returns null
// and fills `issues` (first syntax error).
ExprPtr parse(std::string_view source, std::vector<Issue>& issues);

}  // namespace draplane::cel
