// Compile-time validation of constant arguments, as the AST validators that
// Kubernetes' base environment installs (cel.ValidateDurationLiterals,
// ValidateTimestampLiterals, ValidateRegexLiterals): duration('...') and
// timestamp('...') with a constant string that does not convert, and matches(),
// find() or findAll() with a constant pattern that RE2 rejects, are compile
// errors at the argument, e.g.
//   ERROR: <input>:1:22: invalid matches argument: pattern "(" does not compile: missing ): (
// (cel-go reports "invalid matches argument"; the pattern and the reason are
// draplane's addition). Kubernetes rejects bad find/findAll patterns when it
// builds the program; here that is a compile error too.
//
// Thread-safe: pure function of the checked AST.
#pragma once

#include <vector>

#include "cel/ast.h"
#include "cel/issues.h"

namespace draplane::cel {

// Appends one issue per invalid constant argument. Returns true when none.
bool validate_literals(const Expr& checked_root, std::vector<Issue>& issues);

}  // namespace draplane::cel
