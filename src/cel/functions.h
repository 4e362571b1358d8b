// The function library of the DRA CEL environment: one table of overloads that
// the checker uses for static resolution and the interpreter for dispatch.
//
// Each overload has the cel-go shape: function name, member (receiver) or global
// style, parameter types (receiver first for members), result type and the
// implementation. Operators (&&, ||, ?:) and a few forms that need the
// interpreter (optional select/index, @not_strictly_false) are declared with a
// null implementation and evaluated by the interpreter itself.
//
// The registry is built once, immutable afterwards; thread-safe.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "cel/types.h"
#include "common/utf8.h"
#include "cel/value.h"

namespace re2 {
class RE2;
}

namespace draplane::cel {

namespace timeutil {
class TimeZoneDatabase;
}

// Implementation: `args` holds the receiver first for member overloads. Returns
// an error value for CEL runtime errors.
using FnImpl = Value (*)(const Value* args);

// What the few implementations that need more than their arguments receive: the
// services the program's owner injects (no process-wide state).
struct CallContext {
  const timeutil::TimeZoneDatabase* time_zones = nullptr;  // null: named zones are unknown
};
using CtxFnImpl = Value (*)(const CallContext& ctx, const Value* args);

struct Overload {
  std::string id;
  std::string function;
  bool member = false;
  std::vector<Type> params;
  Type result;
  FnImpl impl = nullptr;
  // Extra runtime cost per call beyond the base 1, as a multiple of the size of
  // the first string/list argument / 10 (cel-go charges string traversals so).
  bool size_cost = false;
  // Set instead of `impl` by overloads that use the CallContext.
  CtxFnImpl ctx_impl = nullptr;

  bool callable() const { return impl || ctx_impl; }
  Value invoke(const CallContext& ctx, const Value* args) const { return impl ? impl(args) : ctx_impl(ctx, args); }
};

// Overloads of `function` in the given style with `nargs` parameters (receiver
// included). Empty when the function is not declared.
std::vector<const Overload*> find_overloads(std::string_view function, bool member, size_t nargs);

// True when any overload (any style or arity) declares `function`.
bool function_declared(std::string_view function);

// Whether a runtime value fits a declared parameter type (dyn and type
// parameters accept anything; list/map/optional match by kind only).
bool value_matches(const Type& param, const Value& v);

// The ValueKind a runtime value must have to fit `param` (as value_matches
// decides), or -1 when any value fits. Lets calls precompute their dispatch.
int required_value_kind(const Type& param);

// Error values with cel-go's messages.
Value no_such_overload();
Value no_such_key(const Value& key);

// Helpers shared by the library files.
namespace lib {
void register_standard(std::vector<Overload>& out);
void register_strings(std::vector<Overload>& out);
void register_lists(std::vector<Overload>& out);
void register_kubernetes(std::vector<Overload>& out);
void register_time(std::vector<Overload>& out);    // time_lib.cc
void register_net(std::vector<Overload>& out);     // k8s_net_lib.cc: IP, CIDR, URL
void register_format(std::vector<Overload>& out);  // k8s_format.cc
void register_authz(std::vector<Overload>& out);   // k8s_authz_lib.cc
// The matches of `re` in `s` (at most `limit`, all when negative), as
// findAll() returns them.
Value find_all_re(std::string_view s, const re2::RE2& re, int64_t limit);
// string.format() of the strings extension; error value on failure.
Value format_string(std::string_view fmt, const ListData& args);
// Walks a format string as cel-go's parseFormatString does: literal text goes
// to `out` (when given), each clause calls `clause(arg index, verb, precision
// or -1)`, whose non-empty result is a formatting error. `runtime` orders the
// missing-argument check as evaluation does (the static validator checks the end
// of the string first). `requested` counts the clauses. Returns "" or cel-go's
// error message.
std::string scan_format(std::string_view fmt, size_t nargs, bool runtime, std::string* out,
                        const std::function<std::string(size_t, char, int)>& clause, size_t* requested);
// Go's strconv.FormatFloat(d, 'g', -1, 64), as CEL's string(double) prints.
std::string format_double_go(double d);
// Quotes like strings.quote().
std::string quote_string(std::string_view s);
// Code points of a UTF-8 string.
std::vector<uint32_t> decode_utf8(std::string_view s);
size_t utf8_length(std::string_view s);
}  // namespace lib

}  // namespace draplane::cel
