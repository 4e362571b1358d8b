// Parser and lexer: literal forms, escapes, error positions, hostile input bounds.
#include <gtest/gtest.h>

#include <string>

#include "cel/cel.h"
#include "cel/parser.h"

namespace draplane::cel {
namespace {

std::string parse_eval(const std::string& expr) {
  auto r = eval_to_string(expr, nullptr, "");
  return r ? *r : "ERR: " + r.error().message();
}

TEST(Parser, Literals) {
  struct C {
    const char* expr;
    const char* want;
  };
  const C cases[] = {
      {"0x1F", "31"},
      {"0x1Fu", "31u"},
      {"-9223372036854775808", "-9223372036854775808"},
      {"18446744073709551615u", "18446744073709551615u"},
      {"1e3", "1000.0"},
      {".5", "0.5"},
      {"'\\x41\\101\\u0041\\U00000041'", "\"AAAA\""},
      {"b'\\xff\\377'", "b\"\\xff\\xff\""},
      {"r'\\n'", "\"\\\\n\""},
      {"'''a\nb'''", "\"a\\nb\""},
      {"\"\\\"q\\\"\"", "\"\\\"q\\\"\""},
      {"size('héllo')", "5"},
      {"size(b'h\\xc3\\xa9')", "3"},
      {"[1, 2, 3][1]", "2"},
      {"{'a': {'b': 1}}.a.b", "1"},
      {"true ? 1 : 2", "1"},
      {"!true || !!true", "true"},
      {"--5", "5"},
      {"1 + 2 * 3 - 4 / 2 % 3", "5"},
      {"'a' in ['a'] && 1 in {1: 2}", "true"},
      {"[1, 2].map(x, x * 10)", "[10, 20]"},
      {"[1, 2, 3].filter(x, x > 1)", "[2, 3]"},
      {"[1, 2, 3].exists_one(x, x > 2)", "true"},
      {"{'a': 1, 'b': 2}.transformMap(k, v, v + 1)", "{\"a\": 2, \"b\": 3}"},
      {"[5, 6].transformList(i, v, i * v)", "[0, 6]"},
      {"cel.bind(x, 2, x * x)", "4"},
      {"optional.of(1).orValue(2)", "1"},
      {"{'a': 1}.?b.orValue(7)", "7"},
      {"[1, 2][?5].hasValue()", "false"},
      {"[?optional.none(), ?optional.of(3)]", "[3]"},
      {"'%d-%s'.format([1, 'x'])", "\"1-x\""},
      {"'a,b,c'.split(',')", "[\"a\", \"b\", \"c\"]"},
      {"'abc'.substring(1)", "\"bc\""},
      {"[3, 1, 2].sort()", "[1, 2, 3]"},
      {"[1, 2, 3].sum()", "6"},
      {"sets.contains([1, 2, 3], [2])", "true"},
      {"'abc123'.find('[0-9]+')", "\"123\""},
      {"semver('v1.2', true)", "semver(\"1.2.0\")"},
      {"isSemver('1.2')", "false"},
      {"quantity('1Gi').add(quantity('512Mi'))", "quantity(\"1536Mi\")"},
      {"quantity('1.5').isInteger()", "false"},
      {"isQuantity('1Q')", "false"},
      {"string(1.5e-7)", "\"1.5e-07\""},
      {"int('42') + int(2.9)", "44"},
      {"type([]) == list", "true"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.expr);
    EXPECT_EQ(parse_eval(c.expr), c.want);
  }
}

TEST(Parser, SyntaxErrorsHavePositions) {
  struct C {
    const char* expr;
    const char* want;
  };
  const C cases[] = {
      {"1 +", "ERR: ERROR: <input>:1:4: Syntax error: mismatched input '<EOF>' expecting"},
      {"a.b(", "ERR: ERROR: <input>:1:5: Syntax error: mismatched input '<EOF>' expecting"},
      {"'abc", "ERR: ERROR: <input>:1:1: Syntax error: unterminated string literal"},
      {"1 = 2", "ERR: ERROR: <input>:1:3: Syntax error: token recognition error at: '='"},
      {"'\\q'", "ERR: ERROR: <input>:1:2: Syntax error: invalid escape sequence"},
      {"if", "ERR: ERROR: <input>:1:1: reserved identifier: if"},
      {"9223372036854775808", "ERR: ERROR: <input>:1:1: invalid int literal"},
      {"[1].all(1, true)", "ERR: ERROR: <input>:1:9: argument must be a simple name"},
      {"has(a)", "ERR: ERROR: <input>:1:5: invalid argument to has() macro"},
      {"1 +\n  foo", "ERR: ERROR: <input>:2:3: undeclared reference to 'foo'"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.expr);
    std::string got = parse_eval(c.expr);
    EXPECT_EQ(got.substr(0, std::string(c.want).size()), c.want) << got;
  }
}

TEST(Parser, HostileInputIsBounded) {
  // Deep nesting of every recursive form fails cleanly instead of overflowing.
  for (const char* open_close : {"()", "[]"}) {
    std::string e(5000, open_close[0]);
    e += "1";
    e += std::string(5000, open_close[1]);
    std::vector<Issue> issues;
    EXPECT_EQ(parse(e, issues), nullptr);
    ASSERT_FALSE(issues.empty());
    EXPECT_EQ(issues[0].message, "max recursion depth exceeded");
  }
  std::string neg(100000, '-');
  std::vector<Issue> issues;
  EXPECT_EQ(parse(neg + "1", issues), nullptr);
  std::string chain = "a";
  for (int i = 0; i < 3000; ++i) chain += ".b";
  issues.clear();
  EXPECT_EQ(parse(chain, issues), nullptr);
  EXPECT_EQ(issues[0].message, "max recursion depth exceeded");
  std::string sum = "1";
  for (int i = 0; i < 3000; ++i) sum += " + 1";
  issues.clear();
  EXPECT_EQ(parse(sum, issues), nullptr);
  // Long && chains are balanced, so they stay well within the limit.
  std::string conj = "true";
  for (int i = 0; i < 2000; ++i) conj += " && true";
  EXPECT_EQ(parse_eval(conj), "true");
}

}  // namespace
}  // namespace draplane::cel
