// The DRA selector environment as Kubernetes builds it (1.37: the newest
// entries of k8s.io/apiserver/pkg/cel/environment/base.go, which DRA's
// dynamic-resource-allocation/cel/compile.go extends with its device variable
// and uses as StoredExpressions): the extension libraries at the versions
// base.go pins, the Kubernetes libraries in the call styles they declare,
// quantities beyond int64 as resource.Quantity keeps them, and the semver
// library's parse and normalize rules. Each case names the upstream source it
// follows.
#include "eval_cases.h"

namespace draplane::cel {
namespace {

using testing::run;

TEST(K8sEnv, StringsExtensionIsVersion2) {
  run({
      // base.go: ext.Strings(ext.StringsVersion(2)); cel-go ext/strings.go adds
      // string reverse() only `if lib.version >= 3`. The name is still declared
      // by the lists extension (list reverse), so cel-go's checker reports the
      // overload, not an undeclared reference.
      {"'abc'.reverse()",
       "error: ERROR: <input>:1:14: found no matching overload for 'reverse' applied to 'string.()'"},
      {"'abc'.reverse() == 'cba'",
       "error: ERROR: <input>:1:14: found no matching overload for 'reverse' applied to 'string.()'"},
      // base.go: ext.Lists(ext.ListsVersion(3)); ext/lists.go declares list
      // reverse() at version 2.
      {"['a', 'b', 'c'].reverse()", "[\"c\", \"b\", \"a\"]"},
      // ext/strings.go, version 1: strings.quote and format; version 2: join.
      {"strings.quote('a\"b')", "\"\\\"a\\\\\\\"b\\\"\""},
      {"['a', 'b'].join('-')", "\"a-b\""},
  });
}

TEST(K8sEnv, ListsExtensionIsVersion3) {
  run({
      // ext/lists.go (version 2): sort is declared per comparable type
      // (comparableTypes), so a list of lists does not type-check.
      {"[3, 1, 2].sort()", "[1, 2, 3]"},
      {"['b', 'a'].sort()", "[\"a\", \"b\"]"},
      {"[[1], [2]].sort()",
       "error: ERROR: <input>:1:16: found no matching overload for 'sort' applied to 'list(list(int)).()'"},
      // ext/lists.go sortByMacro (version 2).
      {"[3, 1, 2].sortBy(x, -x)", "[3, 2, 1]"},
      {"['bb', 'a', 'ccc'].sortBy(s, s.size())", "[\"a\", \"bb\", \"ccc\"]"},
      {"{'a': 1}.sortBy(x, x)",
       "error: ERROR: <input>:1:1: sortBy can only be applied to a list, identifier, comprehension, call or select "
       "expression"},
  });
}

TEST(K8sEnv, KubernetesListsLibrary) {
  run({
      // library/lists.go: sum over summableTypes (int, uint, double, duration).
      {"[duration('1s'), duration('2m')].sum()", "duration(\"121s\")"},
      {"[1.5, 2.0].sum()", "3.5"},
      {"dyn([1.5, 2.0]).sum()", "3.5"},
      // isSorted, min and max per comparableTypes: no lists of lists.
      {"[[1], [2]].isSorted()",
       "error: ERROR: <input>:1:20: found no matching overload for 'isSorted' applied to 'list(list(int)).()'"},
      {"[[1], [2]].min()",
       "error: ERROR: <input>:1:15: found no matching overload for 'min' applied to 'list(list(int)).()'"},
      {"['b', 'a'].max()", "\"b\""},
      {"[timestamp('2024-01-01T00:00:00Z'), timestamp('2023-01-01T00:00:00Z')].isSorted()", "false"},
      {"[0].slice(0, 0).max()", "error: max called on empty list"},
  });
}

TEST(K8sEnv, OptionalTypesAtLatestVersion) {
  run({
      // base.go: cel.OptionalTypes() without a version, so all of cel-go's
      // optional library (cel/library.go, version 2: optional.unwrap, unwrapOpt).
      {"optional.unwrap([optional.of(1), optional.none(), optional.of(3)])", "[1, 3]"},
      {"[optional.of('a'), optional.none()].unwrapOpt()", "[\"a\"]"},
      {"[1, 2].first().value()", "1"},
  });
}

TEST(K8sEnv, DoubleToStringAsCelGo) {
  run({
      // cel-go common/types/double.go ConvertToType(StringType):
      // fmt.Sprintf("%g", d), i.e. strconv 'g' with the shortest digits, whose
      // exponent threshold is 6 (strconv/ftoa.go: "if shortest { eprec = 6 }").
      {"string(100000.0)", "\"100000\""},
      {"string(1e6)", "\"1e+06\""},
      {"string(123456789.0)", "\"1.23456789e+08\""},
      {"string(-4.5e-3)", "\"-0.0045\""},
      {"string(0.00001)", "\"1e-05\""},
      // ext/formatting.go FormatString: %s of a double converts the same way.
      {"'%s'.format([1e6])", "\"1e+06\""},
      // ... and errs on types it does not list, Kubernetes' object types too
      // (at run time; a literal list is checked when compiling, see below).
      {"'%s'.format(dyn([quantity('1Gi')]))",
       "error: error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, "
       "maps, lists, types, durations, and timestamps, was given kubernetes.Quantity"},
      {"'%s'.format(dyn([[semver('1.2.3')]]))",
       "error: error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, "
       "maps, lists, types, durations, and timestamps, was given kubernetes.Semver"},
  });
}

TEST(K8sEnv, MacroArgumentErrorsAsCelGo) {
  run({
      // cel-go parser/macro.go: MakeMap and MakeFilter (and sortBy, which uses
      // MakeMap) say "argument is not an identifier"; makeQuantifier says
      // "argument must be a simple name".
      {"[1].map(1, 2)", "error: ERROR: <input>:1:9: argument is not an identifier"},
      {"[1].filter(x.y, true)", "error: ERROR: <input>:1:13: argument is not an identifier"},
      {"[1].sortBy(1, 2)", "error: ERROR: <input>:1:12: argument is not an identifier"},
      {"[1].all(1, true)", "error: ERROR: <input>:1:9: argument must be a simple name"},
      // ext/bindings.go and cel/library.go (optMap, optFlatMap).
      {"cel.bind(1, 2, 3)", "error: ERROR: <input>:1:10: cel.bind() variable names must be simple identifiers"},
      {"optional.of(1).optMap(1, 2)",
       "error: ERROR: <input>:1:23: optMap() variable name must be a simple identifier"},
      {"optional.of(1).optFlatMap(1, 2)",
       "error: ERROR: <input>:1:27: optFlatMap() variable name must be a simple identifier"},
  });
}

TEST(K8sEnv, StringFormatValidator) {
  run({
      // ext/formatting.go stringFormatValidator (strings version >= 1): a
      // constant format string with a list literal is checked when compiling.
      {"'%s'.format([1, 2])",
       "error: ERROR: <input>:1:12: too many arguments supplied to string.format (expected 1, got 2)"},
      {"'%d %d'.format([1])", "error: ERROR: <input>:1:15: index 1 out of range"},
      {"'%'.format([1])", "error: ERROR: <input>:1:11: unexpected end of string"},
      {"'%d'.format(['a'])",
       "error: ERROR: <input>:1:14: error during formatting: decimal clause can only be used on integers, was given "
       "string"},
      {"'%s'.format([[1, quantity('1')]])",
       "error: ERROR: <input>:1:26: error during formatting: string clause can only be used on strings, bools, bytes, "
       "ints, doubles, maps, lists, types, durations, and timestamps, was given kubernetes.Quantity"},
      {"'%.f'.format([1.0])",
       "error: ERROR: <input>:1:13: could not parse formatting clause: error while parsing precision: error while "
       "converting precision to integer: strconv.Atoi: parsing \"\": invalid syntax"},
      {"'%d'.format([dyn('a')])", "error: error during formatting: decimal clause can only be used on integers"},
      // validator.go inExemptFunction: no homogeneous check anywhere inside format().
      {"'%s %s'.format([[1, 'a'], {'k': 1, 2: 'v'}])", "\"[1, a] {2: v, k: 1}\""},
      {"[[1, 'a']].size()", "error: ERROR: <input>:1:6: expected type 'int' but found 'string'"},
      // parseFormatString at run time: the missing argument is found first.
      {"'%'.format(dyn([]))", "error: index 0 out of range"},
      {"'%d-%s'.format([1, 'a'])", "\"1-a\""},
  });
}

TEST(K8sEnv, LibrariesKubernetesDoesNotInclude) {
  run({
      // base.go enables neither ext.Math nor ext.Encoders. cel-go's checker
      // (checkCall) then checks the target as an identifier, then the function.
      {"math.greatest(1, 2)",
       "error: ERROR: <input>:1:1: undeclared reference to 'math' (in container '')\n | math.greatest(1, 2)\n | ^\n"
       "ERROR: <input>:1:14: undeclared reference to 'greatest' (in container '')"},
      {"base64.encode(b'a')",
       "error: ERROR: <input>:1:1: undeclared reference to 'base64' (in container '')\n | base64.encode(b'a')\n | ^\n"
       "ERROR: <input>:1:14: undeclared reference to 'encode' (in container '')"},
      // library/quantity.go (quantityLibraryDecls): no mul/div.
      {"quantity('1').mul(2)", "error: ERROR: <input>:1:18: undeclared reference to 'mul' (in container '')"},
  });
}

TEST(K8sEnv, AuthzLibraryDeclarations) {
  run({
      // base.go: library.Authz (1.27) and library.AuthzSelectors (1.31) declare
      // these member functions on kubernetes.authorization.* object types; a
      // selector has no authorizer, so the calls never resolve on other types.
      {"'a'.check('get')", "error: ERROR: <input>:1:10: found no matching overload for 'check' applied to 'string.(string)'"},
      {"device.driver.name('x') == ''",
       "error: ERROR: <input>:1:19: found no matching overload for 'name' applied to 'string.(string)'"},
      // A dyn receiver type-checks there and fails at run time.
      {"dyn('a').allowed()", "error: no such overload"},
  });
}

TEST(K8sEnv, QuantitySignIsGlobalOnly) {
  run({
      // library/quantity.go: "sign" is cel.Overload("quantity_sign", ...), a
      // global function; the member style does not resolve.
      {"sign(quantity('-5'))", "-1"},
      {"sign(quantity('0'))", "0"},
      {"quantity('5').sign()",
       "error: ERROR: <input>:1:19: found no matching overload for 'sign' applied to 'kubernetes.Quantity.()'"},
  });
}

TEST(K8sEnv, CallStylesAsDeclared) {
  run({
      // library/quantity.go: quantity/isQuantity global, the rest members.
      {"'1Gi'.quantity()", "error: ERROR: <input>:1:15: found no matching overload for 'quantity' applied to 'string.()'"},
      {"isGreaterThan(quantity('2'), quantity('1'))",
       "error: ERROR: <input>:1:14: found no matching overload for 'isGreaterThan' applied to "
       "'(kubernetes.Quantity, kubernetes.Quantity)'"},
      {"asInteger(quantity('2'))",
       "error: ERROR: <input>:1:10: found no matching overload for 'asInteger' applied to '(kubernetes.Quantity)'"},
      // library/semverlib.go: semver/isSemver global, major/minor/patch and the
      // comparisons members.
      {"'1.2.3'.semver()", "error: ERROR: <input>:1:15: found no matching overload for 'semver' applied to 'string.()'"},
      {"major(semver('1.2.3'))",
       "error: ERROR: <input>:1:6: found no matching overload for 'major' applied to '(kubernetes.Semver)'"},
      // library/ip.go: ip, isIP, ip.isCanonical, string global; family and the
      // is* predicates members.
      {"'1.2.3.4'.isIP()", "error: ERROR: <input>:1:15: found no matching overload for 'isIP' applied to 'string.()'"},
      {"family(ip('1.2.3.4'))", "error: ERROR: <input>:1:7: found no matching overload for 'family' applied to '(net.IP)'"},
      // library/cidr.go: cidr, isCIDR, string global; containsIP, containsCIDR,
      // ip, prefixLength, masked members.
      {"'10.0.0.0/8'.cidr()", "error: ERROR: <input>:1:18: found no matching overload for 'cidr' applied to 'string.()'"},
      {"prefixLength(cidr('10.0.0.0/8'))",
       "error: ERROR: <input>:1:13: found no matching overload for 'prefixLength' applied to '(net.CIDR)'"},
  });
}

TEST(K8sEnv, QuantitiesBeyondInt64) {
  run({
      // resource.ParseQuantity keeps values beyond int64 exactly (inf.Dec);
      // library/quantity.go: isInteger is AsInt64's ok, asInteger errors.
      {"quantity('123456789012345678901234567890').isInteger()", "false"},
      {"quantity('1e30').isInteger()", "false"},
      {"isQuantity('1e30')", "true"},
      // quantity.go's own doc example.
      {"quantity('9999999999999999999999999999999999999G').isInteger()", "false"},
      {"quantity('9999999999999999999999999999999999999G').asInteger()", "error: cannot convert value to integer"},
      {"quantity('1e30').asInteger()", "error: cannot convert value to integer"},
      // Cmp, Add, Sub on inf.Dec: exact at any size.
      {"quantity('1e30').isGreaterThan(quantity('999999999999999999999999999999'))", "true"},
      {"quantity('-1e30').isLessThan(quantity('1'))", "true"},
      {"quantity('1e30').compareTo(quantity('1000000000000000000000000000000'))", "0"},
      {"quantity('1e30') == quantity('1000000000000000000000000000000')", "true"},
      {"quantity('1e30').add(quantity('1e30')) == quantity('2e30')", "true"},
      {"quantity('1e29').add(quantity('1e29')) == quantity('2e29')", "true"},
      {"quantity('1e30').sub(1)", "quantity(\"999999999999999999999999999999\")"},
      {"quantity('1e30').sub(quantity('1e30')).isInteger()", "true"},
      {"quantity('1e30').add(-1).add(1) == quantity('1e30')", "true"},
      {"sign(quantity('-1e40'))", "-1"},
      // AsCanonicalBytes: exponent lowered to a multiple of 3.
      {"quantity('1e40')", "quantity(\"10e39\")"},
      // AsApproximateFloat64: unscaled nanos as a float64 times 1e-9.
      {"quantity('1e40').asApproximateFloat() > 9.99e39", "true"},
      {"quantity('1e400').asApproximateFloat() == double('Infinity')", "true"},
  });
}

TEST(K8sEnv, SemverParseAsBlangSemver) {
  run({
      // library/semverlib.go stringToSemver: semver.Parse (blang/semver/v4),
      // whose error is the runtime error (types.WrapErr).
      {"semver('1.2')", "error: No Major.Minor.Patch elements found"},
      {"semver('')", "error: Version string empty"},
      {"semver('v1.2.3')", "error: Invalid character(s) found in major number \"v1\""},
      {"semver('01.2.3')", "error: Major number must not contain leading zeroes \"01\""},
      {"semver('1.02.3')", "error: Minor number must not contain leading zeroes \"02\""},
      {"semver('1.2.x')", "error: Invalid character(s) found in patch number \"x\""},
      {"semver('1.2.3-01')", "error: Numeric PreRelease version must not contain leading zeroes \"01\""},
      {"semver('1.2.3-a..b')", "error: Prerelease is empty"},
      {"semver('1.2.3-a_b')", "error: Invalid character(s) found in prerelease \"a_b\""},
      // Quoted as Go's %q does: \v and \a by name, not as \x escapes.
      {"semver('1.2.3-a\\vb')", "error: Invalid character(s) found in prerelease \"a\\vb\""},
      {"semver('1.2.3+\\a')", "error: Invalid character(s) found in build meta data \"\\a\""},
      {"semver('1.2.3+')", "error: Build meta data is empty"},
      // A numeric prerelease identifier is a uint64 (PRVersion.VersionNum).
      {"semver('1.2.3-99999999999999999999')",
       "error: strconv.ParseUint: parsing \"99999999999999999999\": value out of range"},
      {"isSemver('1.2.3-99999999999999999999')", "false"},
      {"semver('1.2.3-alpha.1+build.5').compareTo(semver('1.2.3-alpha.1')) == 0", "true"},
  });
}

TEST(K8sEnv, SemverNormalize) {
  run({
      // library/semverlib.go normalizeAndParse: one "v" dropped, leading zeros
      // dropped in each of the three SplitN parts, missing minor/patch filled;
      // a short version may not carry prerelease/build data.
      {"semver('v01.02.03', true)", "semver(\"1.2.3\")"},
      {"semver('1', true)", "semver(\"1.0.0\")"},
      {"semver('1.2.00-alpha', true)", "semver(\"1.2.0-alpha\")"},
      {"semver('1.2-alpha', true)", "error: short version cannot contain PreRelease/Build meta data"},
      {"isSemver('1.2-alpha', true)", "false"},
      {"isSemver('1+build', true)", "false"},
      {"isSemver('1.0.0+build', true)", "true"},
      {"isSemver('vv1.0.0', true)", "false"},
      {"semver('1.2.3.4', true)", "error: Invalid character(s) found in patch number \"3.4\""},
      {"semver('1.2.3-01', true)", "error: Numeric PreRelease version must not contain leading zeroes \"01\""},
      {"isSemver('v1.0', false)", "false"},
  });
}

}  // namespace
}  // namespace draplane::cel
