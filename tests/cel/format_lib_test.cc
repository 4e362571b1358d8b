// The Kubernetes CEL format library (format.named, format.<name>(), validate)
// and the compile-time check of constant regular expressions.
#include <gtest/gtest.h>

#include "cel/cel.h"
#include "eval_cases.h"

namespace draplane::cel {
namespace {

using testing::Case;
using testing::eval;
using testing::run;

// Go's RegexError joins its examples with "',  or '" (sic).
const char* kLabelErr =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

TEST(FormatLib, Named) {
  run({
      {"format.named('dns1123Label').hasValue()", "true"},
      {"format.named('nope').hasValue()", "false"},
      {"format.named('dns1123Label').value() == format.dns1123Label()", "true"},
      {"format.dns1123Label() == format.dns1035Label()", "false"},
      {"format.dns1123Label()", "format.dns1123Label()"},
      {"format.named('uuid').value().validate('123e4567-e89b-12d3-a456-426614174000')", "optional.none()"},
      {"format.dns1123Label() == 'x'", "error: ERROR: <input>:1:23: found no matching overload for '_==_'"},
      {"format.nope()", "error: ERROR: <input>:1:1: undeclared reference to 'format'"},
  });
}

TEST(FormatLib, Validate) {
  std::string label_err = kLabelErr;
  run({
      {"format.dns1123Label().validate('my-label-name')", "optional.none()"},
      {"format.dns1123Label().validate('my-label-name').hasValue()", "false"},
      {"format.dns1123Label().validate('My_Label')", ("optional.of([\"" + label_err + "\"])").c_str()},
      {"format.dns1123Label().validate('a.b')", "optional.of([\"must not contain dots\"])"},
      {"format.dns1123Label().validate('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')", "optional.of([\"must be no more than 63 characters\"])"},
      {"format.labelValue().validate('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')", "optional.of([\"must be no more than 63 bytes\"])"},
      {"format.dns1123Label().validate('-')", ("optional.of([\"" + label_err + "\"])").c_str()},
      {"format.dns1123Subdomain().validate('apiextensions.k8s.io')", "optional.none()"},
      {"format.dns1123Subdomain().validate('a..b').value()[0].startsWith('a lowercase RFC 1123 subdomain')", "true"},
      {"format.dns1035Label().validate('my-label-name')", "optional.none()"},
      {"format.dns1035Label().validate('1abc').value()[0].startsWith('a DNS-1035 label must consist')", "true"},
      {"format.qualifiedName().validate('apiextensions.k8s.io/v1beta1')", "optional.none()"},
      {"format.qualifiedName().validate('MyName')", "optional.none()"},
      {"format.qualifiedName().validate('/name').value()", "[\"prefix part must be non-empty\"]"},
      {"format.qualifiedName().validate('a/b/c').value()[0].startsWith('a valid label key must consist')", "true"},
      {"format.qualifiedName().validate('example.com/').value()",
       "[\"name part must be non-empty\", \"name part must consist of alphanumeric characters, '-', '_' or '.', and "
       "must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
       "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')\"]"},
      {"format.qualifiedName().validate('Example.com/x').value()[0].startsWith('prefix part a lowercase RFC 1123')",
       "true"},
      {"format.dns1123LabelPrefix().validate('my-label-prefix-')", "optional.none()"},
      {"format.dns1123Label().validate('my-label-prefix-').hasValue()", "true"},
      {"format.dns1123SubdomainPrefix().validate('mysubdomain.prefix.-')", "optional.none()"},
      {"format.dns1035LabelPrefix().validate('my-label-prefix-')", "optional.none()"},
      {"format.labelValue().validate('')", "optional.none()"},
      {"format.labelValue().validate('my_value-1.0')", "optional.none()"},
      {"format.labelValue().validate('-bad').value()[0].startsWith('a valid label must be an empty string')", "true"},
      {"format.uri().validate('http://example.com')", "optional.none()"},
      {"format.uri().validate('example')", "optional.of([\"parse \\\"example\\\": invalid URI for request\"])"},
      {"format.uuid().validate('123e4567-e89b-12d3-a456-426614174000')", "optional.none()"},
      {"format.uuid().validate('123E4567E89B12D3A456426614174000')", "optional.none()"},
      {"format.uuid().validate('123e4567-e89b-12d3-a456-42661417400')",
       "optional.of([\"does not match the UUID format\"])"},
      {"format.byte().validate('aGVsbG8=')", "optional.none()"},
      {"format.byte().validate('aGVsbA==')", "optional.none()"},
      {"format.byte().validate('aGVs')", "optional.none()"},
      {"format.byte().validate('aGVsbG8')", "optional.of([\"invalid base64\"])"},
      {"format.byte().validate('')", "optional.of([\"invalid base64\"])"},
      {"format.byte().validate('a=GV')", "optional.of([\"invalid base64\"])"},
      {"format.date().validate('2021-01-01')", "optional.none()"},
      {"format.date().validate('2024-02-29')", "optional.none()"},
      {"format.date().validate('2023-02-29')", "optional.of([\"invalid date\"])"},
      {"format.date().validate('2021-1-01')", "optional.of([\"invalid date\"])"},
      {"format.datetime().validate('2021-01-01T00:00:00Z')", "optional.none()"},
      {"format.datetime().validate('2021-01-01t23:59:59.123+05:30')", "optional.none()"},
      {"format.datetime().validate('2021-01-01T24:00:00Z')", "optional.of([\"invalid datetime\"])"},
      {"format.datetime().validate('2021-01-01T00:00:00')", "optional.of([\"invalid datetime\"])"},
      {"format.datetime().validate('2021-01-01')", "optional.of([\"invalid datetime\"])"},
      // The upstream usage pattern.
      {"format.dns1123Label().validate('Bad').value().join('\\n').size() > 0", "true"},
      {"format.named('byte').orValue(format.uuid()).validate('!').hasValue()", "true"},
  });
}

TEST(FormatLib, Cost) {
  // validate(): ceil(ceil(size x 0.1) x 128 x 0.25); a 13-character literal: 2 x 32.
  auto p = compile("format.dns1123Label().validate('my-label-name').hasValue()");
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_EQ((*p)->estimated_cost(), 1u + 64u + 1u);
  auto q = compile("format.dns1123Label() == format.dns1035Label()");
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ((*q)->estimated_cost(), 1u + 1u + 7u);
}

// Constant patterns of matches(), find() and findAll() are compiled when the
// selector compiles; a pattern RE2 rejects is a compile error that names it.
TEST(RegexLiterals, CompileErrors) {
  struct {
    const char* expr;
    const char* want;
  } cases[] = {
      {"device.driver.matches('(')",
       "ERROR: <input>:1:23: invalid matches argument: pattern \"(\" does not compile: missing ): (\n"
       " | device.driver.matches('(')\n"
       " | ......................^"},
      {"matches(device.driver, '[a-')",
       "ERROR: <input>:1:24: invalid matches argument: pattern \"[a-\" does not compile: missing ]: [a-"},
      {"device.driver.find('a{2,1}') == ''",
       "ERROR: <input>:1:20: invalid find argument: pattern \"a{2,1}\" does not compile: invalid repetition size: "
       "{2,1}"},
      {"device.driver.findAll('*').size() > 0",
       "ERROR: <input>:1:23: invalid findAll argument: pattern \"*\" does not compile: no argument for "
       "repetition operator: *"},
      {"device.driver.findAll('(?<name>x)', 2).size() > 0", "ERROR: <input>:1:23: invalid findAll argument"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.expr);
    auto p = compile(c.expr);
    ASSERT_FALSE(p.has_value());
    std::string want = c.want;
    EXPECT_EQ(p.error().message().substr(0, want.size()), want) << p.error().message();
    Status s = check_selector(c.expr);
    EXPECT_EQ(s.code(), Code::kInvalid);
    EXPECT_EQ(s.message().rfind("compilation failed: ERROR:", 0), 0u) << s.message();
  }
  // Valid constant patterns compile; dynamic ones are checked when evaluated.
  EXPECT_TRUE(compile("device.driver.matches('^gpu\\\\.')").has_value());
  EXPECT_TRUE(compile("device.driver.findAll('[a-z]+', 2).size() > 0").has_value());
  EXPECT_TRUE(compile("device.driver.matches(device.driver)").has_value());
  run({
      {"'abc'.matches(dyn('('))", "error: invalid regular expression: missing ): ("},
      {"'abc'.find('b.')", "\"bc\""},
      {"'abc'.find('x')", "\"\""},
      {"'a1b22c333'.findAll('[0-9]+')", "[\"1\", \"22\", \"333\"]"},
      {"'a1b22c333'.findAll('[0-9]+', 2)", "[\"1\", \"22\"]"},
      {"'a1b22c333'.findAll('[0-9]+', 0)", "[]"},
      {"'abc'.find(dyn('('))", "error: invalid regular expression: missing ): ("},
  });
}

}  // namespace
}  // namespace draplane::cel
