#include "cel/parser.h"

#include <cerrno>
#include <cstdlib>
#include <utility>

#include "cel/lexer.h"

namespace draplane::cel {

namespace {

constexpr const char* kAccu = "@result";
constexpr int kMaxTreeDepth = 500;

struct ParseError {};

class Parser {
 public:
  Parser(std::string_view src, std::vector<Issue>& issues) : lex_(src), issues_(issues) {
    advance();
  }

  ExprPtr parse_root() {
    ExprPtr e = expr();
    if (!failed_ && tok_.kind != Tok::kEof) {
      fail(tok_.offset, "Syntax error: mismatched input '" + describe(tok_) + "' expecting <EOF>");
    }
    if (failed_) return nullptr;
    return e;
  }

 private:
  // ------------------------------------------------------------------ tokens
  void advance() {
    if (failed_) {
      tok_.kind = Tok::kEof;
      return;
    }
    tok_ = lex_.next();
    if (tok_.kind == Tok::kError) {
      fail(tok_.offset, tok_.text);
      tok_.kind = Tok::kEof;
    }
  }
  bool accept(Tok k) {
    if (tok_.kind != k) return false;
    advance();
    return true;
  }
  void expect(Tok k, const char* what) {
    if (tok_.kind == k) {
      advance();
      return;
    }
    fail(tok_.offset, std::string("Syntax error: mismatched input '") + describe(tok_) + "' expecting " + what);
  }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::kEof: return "<EOF>";
      case Tok::kIdent: case Tok::kInt: case Tok::kUint: case Tok::kDouble: return t.text;
      case Tok::kString: return "'" + t.text + "'";
      case Tok::kTrue: return "true";
      case Tok::kFalse: return "false";
      case Tok::kNull: return "null";
      case Tok::kIn: return "in";
      case Tok::kLParen: return "(";
      case Tok::kRParen: return ")";
      case Tok::kLBracket: return "[";
      case Tok::kRBracket: return "]";
      case Tok::kLBrace: return "{";
      case Tok::kRBrace: return "}";
      case Tok::kDot: return ".";
      case Tok::kComma: return ",";
      case Tok::kColon: return ":";
      case Tok::kQuestion: return "?";
      case Tok::kNot: return "!";
      case Tok::kMinus: return "-";
      case Tok::kPlus: return "+";
      case Tok::kStar: return "*";
      case Tok::kSlash: return "/";
      case Tok::kPercent: return "%";
      case Tok::kEq: return "==";
      case Tok::kNe: return "!=";
      case Tok::kLt: return "<";
      case Tok::kLe: return "<=";
      case Tok::kGt: return ">";
      case Tok::kGe: return ">=";
      case Tok::kAnd: return "&&";
      case Tok::kOr: return "||";
      default: return t.text;
    }
  }
  void fail(int32_t offset, std::string msg) {
    if (failed_) return;
    failed_ = true;
    issues_.push_back({offset, std::move(msg)});
  }

  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& parser, int32_t offset) : p(parser) {
      if (++p.depth_ > kMaxDepth) p.fail(offset, "max recursion depth exceeded");
    }
    ~DepthGuard() { --p.depth_; }
  };

  // ------------------------------------------------------------------ builders
  static ExprPtr call(int32_t off, std::string fn, std::vector<ExprPtr> args, ExprPtr target = nullptr) {
    auto e = make_expr(ExprKind::kCall, off);
    e->name = std::move(fn);
    e->args = std::move(args);
    e->operand = std::move(target);
    return e;
  }
  static ExprPtr call2(int32_t off, std::string fn, ExprPtr a, ExprPtr b) {
    std::vector<ExprPtr> args;
    args.push_back(std::move(a));
    args.push_back(std::move(b));
    return call(off, std::move(fn), std::move(args));
  }
  static ExprPtr ident(int32_t off, std::string name) {
    auto e = make_expr(ExprKind::kIdent, off);
    e->name = std::move(name);
    return e;
  }
  static ExprPtr lit_bool(int32_t off, bool v) {
    auto e = make_expr(ExprKind::kConst, off);
    e->literal.kind = Literal::Kind::kBool;
    e->literal.b = v;
    return e;
  }
  static ExprPtr lit_int(int32_t off, int64_t v) {
    auto e = make_expr(ExprKind::kConst, off);
    e->literal.kind = Literal::Kind::kInt;
    e->literal.i = v;
    return e;
  }

  // Balanced tree for chains of && / || (as cel-go does), keeping depth low.
  static ExprPtr balance(const std::string& fn, std::vector<ExprPtr>& terms, std::vector<int32_t>& ops,
                         size_t lo, size_t hi) {
    if (lo == hi) return std::move(terms[lo]);
    size_t mid = (lo + hi + 1) / 2;
    ExprPtr left = balance(fn, terms, ops, lo, mid - 1);
    ExprPtr right = balance(fn, terms, ops, mid, hi);
    return call2(ops[mid - 1], fn, std::move(left), std::move(right));
  }

  // ------------------------------------------------------------------ grammar
  ExprPtr expr() {
    DepthGuard g(*this, tok_.offset);
    if (failed_) return nullptr;
    ExprPtr cond = logical(Tok::kOr, "_||_");
    if (failed_) return nullptr;
    if (tok_.kind != Tok::kQuestion) return cond;
    int32_t off = tok_.offset;
    advance();
    ExprPtr a = logical(Tok::kOr, "_||_");
    expect(Tok::kColon, "':'");
    ExprPtr b = expr();
    if (failed_) return nullptr;
    std::vector<ExprPtr> args;
    args.push_back(std::move(cond));
    args.push_back(std::move(a));
    args.push_back(std::move(b));
    return call(off, "_?_:_", std::move(args));
  }

  ExprPtr logical(Tok op, const char* fn) {
    std::vector<ExprPtr> terms;
    std::vector<int32_t> ops;
    terms.push_back(op == Tok::kOr ? logical(Tok::kAnd, "_&&_") : binary(kRelation));
    while (!failed_ && tok_.kind == op) {
      ops.push_back(tok_.offset);
      advance();
      terms.push_back(op == Tok::kOr ? logical(Tok::kAnd, "_&&_") : binary(kRelation));
    }
    if (failed_) return nullptr;
    return balance(fn, terms, ops, 0, terms.size() - 1);
  }

  // Binary operators by precedence level, loosest first (cel-go's grammar:
  // relations, then + -, then * / %); null when `t` is none at `level`.
  static constexpr int kRelation = 0, kAddition = 1, kMultiplication = 2;
  static const char* binary_function(int level, Tok t) {
    switch (level) {
      case kRelation:
        switch (t) {
          case Tok::kLt: return "_<_";
          case Tok::kLe: return "_<=_";
          case Tok::kGt: return "_>_";
          case Tok::kGe: return "_>=_";
          case Tok::kEq: return "_==_";
          case Tok::kNe: return "_!=_";
          case Tok::kIn: return "@in";
          default: return nullptr;
        }
      case kAddition: return t == Tok::kPlus ? "_+_" : t == Tok::kMinus ? "_-_" : nullptr;
      default: return t == Tok::kStar ? "_*_" : t == Tok::kSlash ? "_/_" : t == Tok::kPercent ? "_%_" : nullptr;
    }
  }

  // Left-associative operators of one level over the next tighter level.
  ExprPtr binary(int level) {
    auto operand = [&] { return level == kMultiplication ? unary() : binary(level + 1); };
    ExprPtr left = operand();
    while (!failed_) {
      const char* fn = binary_function(level, tok_.kind);
      if (!fn) break;
      int32_t off = tok_.offset;
      advance();
      ExprPtr right = operand();
      left = call2(off, fn, std::move(left), std::move(right));
    }
    return left;
  }

  ExprPtr unary() {
    DepthGuard g(*this, tok_.offset);
    if (failed_) return nullptr;
    if (tok_.kind == Tok::kNot || tok_.kind == Tok::kMinus) {
      Tok op = tok_.kind;
      std::vector<int32_t> offs;
      while (tok_.kind == op) {
        offs.push_back(tok_.offset);
        advance();
      }
      ExprPtr operand;
      if (op == Tok::kMinus && (tok_.kind == Tok::kInt || tok_.kind == Tok::kDouble)) {
        // The last '-' belongs to the literal (so -9223372036854775808 parses).
        operand = member(number_literal(true, offs.back()));
        offs.pop_back();
      } else {
        operand = member(primary());
      }
      for (size_t k = offs.size(); k-- > 0;) {
        std::vector<ExprPtr> args;
        args.push_back(std::move(operand));
        operand = call(offs[k], op == Tok::kNot ? "!_" : "-_", std::move(args));
      }
      return operand;
    }
    return member(primary());
  }

  ExprPtr number_literal(bool negative, int32_t neg_off) {
    Token t = tok_;
    advance();
    auto e = make_expr(ExprKind::kConst, negative ? neg_off : t.offset);
    if (t.kind == Tok::kDouble) {
      e->literal.kind = Literal::Kind::kDouble;
      std::string text = (negative ? "-" : "") + t.text;
      e->literal.d = std::strtod(text.c_str(), nullptr);
      return e;
    }
    // A uint literal keeps its text (the caller's '-' applies to ints only).
    bool is_uint = t.kind == Tok::kUint;
    std::string text = negative && !is_uint ? "-" + t.text : t.text;
    int base = t.hex ? 16 : 10;
    errno = 0;
    if (is_uint) {
      e->literal.kind = Literal::Kind::kUint;
      e->literal.u = std::strtoull(text.c_str(), nullptr, base);
    } else {
      e->literal.kind = Literal::Kind::kInt;
      e->literal.i = std::strtoll(text.c_str(), nullptr, base);
    }
    if (errno == ERANGE) {
      fail(t.offset, is_uint ? "invalid uint literal" : "invalid int literal");
      return nullptr;
    }
    return e;
  }

  std::string selector_name() {
    if (tok_.kind == Tok::kIdent || tok_.kind == Tok::kQuotedIdent || tok_.kind == Tok::kTrue ||
        tok_.kind == Tok::kFalse || tok_.kind == Tok::kNull || tok_.kind == Tok::kIn) {
      std::string n = tok_.text;
      advance();
      return n;
    }
    fail(tok_.offset, "Syntax error: mismatched input '" + describe(tok_) + "' expecting IDENTIFIER");
    return "";
  }

  ExprPtr member(ExprPtr e) {
    int chain = 0;
    while (!failed_) {
      if (++chain > kMaxTreeDepth) {
        fail(tok_.offset, "max recursion depth exceeded");
        return nullptr;
      }
      if (tok_.kind == Tok::kDot) {
        int32_t off = tok_.offset;
        advance();
        bool opt = accept(Tok::kQuestion);
        bool quoted = tok_.kind == Tok::kQuotedIdent;
        std::string name = selector_name();
        if (failed_) return nullptr;
        if (!opt && !quoted && tok_.kind == Tok::kLParen) {
          int32_t call_off = tok_.offset;
          advance();
          std::vector<ExprPtr> args = expr_list(Tok::kRParen);
          expect(Tok::kRParen, "')'");
          if (failed_) return nullptr;
          e = receiver_call(call_off, std::move(name), std::move(e), std::move(args));
          continue;
        }
        if (opt) {
          auto field = make_expr(ExprKind::kConst, off);
          field->literal.kind = Literal::Kind::kString;
          field->literal.s = name;
          e = call2(off, "_?._", std::move(e), std::move(field));
        } else {
          auto s = make_expr(ExprKind::kSelect, off);
          s->operand = std::move(e);
          s->name = std::move(name);
          e = std::move(s);
        }
      } else if (tok_.kind == Tok::kLBracket) {
        int32_t off = tok_.offset;
        advance();
        bool opt = accept(Tok::kQuestion);
        ExprPtr idx = expr();
        expect(Tok::kRBracket, "']'");
        if (failed_) return nullptr;
        e = call2(off, opt ? "_[?_]" : "_[_]", std::move(e), std::move(idx));
      } else {
        break;
      }
    }
    return e;
  }

  std::vector<ExprPtr> expr_list(Tok close) {
    std::vector<ExprPtr> out;
    if (tok_.kind == close) return out;
    while (!failed_) {
      out.push_back(expr());
      if (!accept(Tok::kComma)) break;
    }
    return out;
  }

  ExprPtr primary() {
    if (failed_) return nullptr;
    Token t = tok_;
    switch (t.kind) {
      case Tok::kInt: case Tok::kUint: case Tok::kDouble:
        return number_literal(false, 0);
      case Tok::kString: case Tok::kBytes: {
        advance();
        auto e = make_expr(ExprKind::kConst, t.offset);
        e->literal.kind = t.kind == Tok::kString ? Literal::Kind::kString : Literal::Kind::kBytes;
        e->literal.s = std::move(t.text);
        return e;
      }
      case Tok::kTrue: case Tok::kFalse:
        advance();
        return lit_bool(t.offset, t.kind == Tok::kTrue);
      case Tok::kNull: {
        advance();
        return make_expr(ExprKind::kConst, t.offset);
      }
      case Tok::kLParen: {
        advance();
        ExprPtr e = expr();
        expect(Tok::kRParen, "')'");
        return e;
      }
      case Tok::kLBracket: return list_literal();
      case Tok::kLBrace: return map_literal();
      case Tok::kDot:
      case Tok::kIdent: {
        bool leading_dot = accept(Tok::kDot);
        if (tok_.kind != Tok::kIdent) {
          fail(tok_.offset, "Syntax error: mismatched input '" + describe(tok_) + "' expecting IDENTIFIER");
          return nullptr;
        }
        Token id = tok_;
        advance();
        if (is_reserved_word(id.text)) {
          fail(id.offset, "reserved identifier: " + id.text);
          return nullptr;
        }
        std::string name = (leading_dot ? "." : "") + id.text;
        if (tok_.kind == Tok::kLParen) {
          int32_t off = tok_.offset;
          advance();
          std::vector<ExprPtr> args = expr_list(Tok::kRParen);
          expect(Tok::kRParen, "')'");
          if (failed_) return nullptr;
          return global_call(off, std::move(name), std::move(args));
        }
        // Message construction: Name{...} or a.b.C{...} (qualified names are
        // parsed as selects first, then converted below).
        if (tok_.kind == Tok::kLBrace) return struct_literal(name, id.offset);
        auto e = ident(id.offset, std::move(name));
        // A qualified message name a.b.C{...}.
        return maybe_qualified_struct(std::move(e));
      }
      case Tok::kEof:
        fail(t.offset, "Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}");
        return nullptr;
      default:
        fail(t.offset, "Syntax error: extraneous input '" + describe(t) + "'");
        return nullptr;
    }
  }

  ExprPtr maybe_qualified_struct(ExprPtr e) {
    // Look ahead for ident(.ident)* '{'. The lexer has no backtracking, so parse
    // the dotted chain eagerly and turn it back into selects when no '{' follows.
    std::string qualified = e->name;
    std::vector<std::pair<int32_t, std::string>> parts;
    while (tok_.kind == Tok::kDot) {
      int32_t off = tok_.offset;
      Lexer saved_lex = lex_;
      Token saved_tok = tok_;
      advance();
      if (tok_.kind != Tok::kIdent) {
        lex_ = saved_lex;
        tok_ = saved_tok;
        break;
      }
      Token id = tok_;
      Lexer after_id = lex_;
      advance();
      if (tok_.kind == Tok::kLParen) {
        // a.b.f(...) is a receiver call: rewind to before '.'.
        lex_ = saved_lex;
        tok_ = saved_tok;
        (void)after_id;
        break;
      }
      parts.emplace_back(off, id.text);
      qualified += "." + id.text;
    }
    if (!parts.empty() && tok_.kind == Tok::kLBrace) return struct_literal(qualified, e->offset);
    for (auto& [off, name] : parts) {
      auto s = make_expr(ExprKind::kSelect, off);
      s->operand = std::move(e);
      s->name = std::move(name);
      e = std::move(s);
    }
    return e;
  }

  ExprPtr struct_literal(const std::string& type_name, int32_t name_off) {
    int32_t off = tok_.offset;
    advance();  // '{'
    auto e = make_expr(ExprKind::kStruct, off);
    e->name = type_name;
    (void)name_off;
    elements(Tok::kRBrace, "'}'", [&] { e->entries.push_back(entry(/*field=*/true)); });
    return e;
  }

  ExprPtr list_literal() {
    auto e = make_expr(ExprKind::kList, tok_.offset);
    advance();
    elements(Tok::kRBracket, "']'", [&] {
      if (accept(Tok::kQuestion)) e->optional_indices.push_back(static_cast<int32_t>(e->args.size()));
      e->args.push_back(expr());
    });
    return e;
  }

  ExprPtr map_literal() {
    auto e = make_expr(ExprKind::kMap, tok_.offset);
    advance();
    elements(Tok::kRBrace, "'}'", [&] { e->entries.push_back(entry(/*field=*/false)); });
    return e;
  }

  // Comma-separated elements up to `close` (a trailing comma allowed), each read
  // by `element`, then `close`.
  template <typename Element>
  void elements(Tok close, const char* close_text, Element element) {
    while (!failed_ && tok_.kind != close) {
      element();
      if (!accept(Tok::kComma)) break;
    }
    expect(close, close_text);
  }

  // `[?]field: value` of a message literal, or `[?]key: value` of a map literal.
  MapEntry entry(bool field) {
    MapEntry m;
    m.optional = accept(Tok::kQuestion);
    if (field) {
      m.offset = tok_.offset;
      m.field = selector_name();
    } else {
      m.key = expr();
      m.offset = tok_.offset;
    }
    expect(Tok::kColon, "':'");
    m.value = expr();
    return m;
  }

  // ------------------------------------------------------------------ macros
  ExprPtr global_call(int32_t off, std::string name, std::vector<ExprPtr> args) {
    if (name == "has" && args.size() == 1) {
      Expr* a = args[0].get();
      if (a->kind != ExprKind::kSelect) {
        fail(a->offset, "invalid argument to has() macro");
        return nullptr;
      }
      a->test_only = true;
      a->offset = off;
      return std::move(args[0]);
    }
    return call(off, std::move(name), std::move(args));
  }

  bool simple_name(const ExprPtr& e, std::string& out, const char* message = "argument must be a simple name") {
    if (e->kind != ExprKind::kIdent || (!e->name.empty() && e->name[0] == '.')) {
      fail(e->offset, message);
      return false;
    }
    out = e->name;
    if (out == kAccu) {
      fail(e->offset, "iteration variable overwrites accumulator variable");
      return false;
    }
    return true;
  }

  ExprPtr comprehension(int32_t off, ExprPtr range, std::string v1, std::string v2, ExprPtr init,
                        ExprPtr cond, ExprPtr step, ExprPtr result) {
    auto c = make_expr(ExprKind::kComprehension, off);
    c->iter_range = std::move(range);
    c->iter_var = std::move(v1);
    c->iter_var2 = std::move(v2);
    c->accu_var = kAccu;
    c->accu_init = std::move(init);
    c->loop_cond = std::move(cond);
    c->loop_step = std::move(step);
    c->result = std::move(result);
    return c;
  }

  static ExprPtr not_strictly_false(int32_t off, ExprPtr e) {
    std::vector<ExprPtr> a;
    a.push_back(std::move(e));
    return call(off, "@not_strictly_false", std::move(a));
  }
  static ExprPtr negate(int32_t off, ExprPtr e) {
    std::vector<ExprPtr> a;
    a.push_back(std::move(e));
    return call(off, "!_", std::move(a));
  }
  static ExprPtr ternary(int32_t off, ExprPtr c, ExprPtr a, ExprPtr b) {
    std::vector<ExprPtr> args;
    args.push_back(std::move(c));
    args.push_back(std::move(a));
    args.push_back(std::move(b));
    return call(off, "_?_:_", std::move(args));
  }
  static ExprPtr list_of(int32_t off, ExprPtr e) {
    auto l = make_expr(ExprKind::kList, off);
    if (e) l->args.push_back(std::move(e));
    return l;
  }

  ExprPtr receiver_call(int32_t off, std::string name, ExprPtr target, std::vector<ExprPtr> args) {
    size_t n = args.size();
    bool quantifier = name == "all" || name == "exists" || name == "exists_one" || name == "existsOne";
    if (quantifier && (n == 2 || n == 3)) {
      std::string v1, v2;
      if (!simple_name(args[0], v1)) return nullptr;
      if (n == 3) {
        if (!simple_name(args[1], v2)) return nullptr;
        if (v1 == v2) {
          fail(args[1]->offset, "duplicate variable name: " + v1);
          return nullptr;
        }
      }
      ExprPtr pred = std::move(args[n - 1]);
      if (name == "all") {
        return comprehension(off, std::move(target), v1, v2, lit_bool(off, true),
                             not_strictly_false(off, ident(off, kAccu)),
                             call2(off, "_&&_", ident(off, kAccu), std::move(pred)), ident(off, kAccu));
      }
      if (name == "exists") {
        return comprehension(off, std::move(target), v1, v2, lit_bool(off, false),
                             not_strictly_false(off, negate(off, ident(off, kAccu))),
                             call2(off, "_||_", ident(off, kAccu), std::move(pred)), ident(off, kAccu));
      }
      return comprehension(off, std::move(target), v1, v2, lit_int(off, 0), lit_bool(off, true),
                           ternary(off, std::move(pred), call2(off, "_+_", ident(off, kAccu), lit_int(off, 1)),
                                   ident(off, kAccu)),
                           call2(off, "_==_", ident(off, kAccu), lit_int(off, 1)));
    }
    if ((name == "map" && (n == 2 || n == 3)) || (name == "filter" && n == 2)) {
      std::string v;
      if (!simple_name(args[0], v, "argument is not an identifier")) return nullptr;
      ExprPtr step;
      if (name == "filter") {
        step = ternary(off, std::move(args[1]), call2(off, "_+_", ident(off, kAccu), list_of(off, ident(off, v))),
                       ident(off, kAccu));
      } else if (n == 2) {
        step = call2(off, "_+_", ident(off, kAccu), list_of(off, std::move(args[1])));
      } else {
        step = ternary(off, std::move(args[1]), call2(off, "_+_", ident(off, kAccu), list_of(off, std::move(args[2]))),
                       ident(off, kAccu));
      }
      return comprehension(off, std::move(target), v, "", list_of(off, nullptr), lit_bool(off, true), std::move(step),
                           ident(off, kAccu));
    }
    if ((name == "transformList" || name == "transformMap" || name == "transformMapEntry") && (n == 3 || n == 4)) {
      std::string v1, v2;
      if (!simple_name(args[0], v1) || !simple_name(args[1], v2)) return nullptr;
      if (v1 == v2) {
        fail(args[1]->offset, "duplicate variable name: " + v1);
        return nullptr;
      }
      ExprPtr filter = n == 4 ? std::move(args[2]) : nullptr;
      ExprPtr tr = std::move(args[n - 1]);
      ExprPtr init, add;
      if (name == "transformList") {
        init = list_of(off, nullptr);
        add = call2(off, "_+_", ident(off, kAccu), list_of(off, std::move(tr)));
      } else {
        init = make_expr(ExprKind::kMap, off);
        std::vector<ExprPtr> a;
        a.push_back(ident(off, kAccu));
        if (name == "transformMap") a.push_back(ident(off, v1));
        a.push_back(std::move(tr));
        add = call(off, "cel.@mapInsert", std::move(a));
      }
      ExprPtr step = filter ? ternary(off, std::move(filter), std::move(add), ident(off, kAccu)) : std::move(add);
      return comprehension(off, std::move(target), v1, v2, std::move(init), lit_bool(off, true), std::move(step),
                           ident(off, kAccu));
    }
    if (name == "bind" && n == 3 && target->kind == ExprKind::kIdent && target->name == "cel") {
      std::string v;
      if (!simple_name(args[0], v, "cel.bind() variable names must be simple identifiers")) return nullptr;
      auto c = make_expr(ExprKind::kComprehension, off);
      c->iter_range = list_of(off, nullptr);
      c->iter_var = "#unused";
      c->accu_var = v;
      c->accu_init = std::move(args[1]);
      c->loop_cond = lit_bool(off, false);
      c->loop_step = ident(off, v);
      c->result = std::move(args[2]);
      return c;
    }
    if (name == "sortBy" && n == 2) {
      // ext/lists.go sortByMacro:
      //   cel.bind(@__sortBy_input__, target,
      //            @__sortBy_input__.@sortByAssociatedKeys(@__sortBy_input__.map(v, key)))
      ExprKind k = target->kind;
      if (k != ExprKind::kList && k != ExprKind::kSelect && k != ExprKind::kIdent && k != ExprKind::kComprehension &&
          k != ExprKind::kCall) {
        fail(target->offset, "sortBy can only be applied to a list, identifier, comprehension, call or select expression");
        return nullptr;
      }
      std::string v;
      if (!simple_name(args[0], v, "argument is not an identifier")) return nullptr;
      const std::string input = "@__sortBy_input__";
      ExprPtr keys = comprehension(off, ident(off, input), v, "", list_of(off, nullptr), lit_bool(off, true),
                                   call2(off, "_+_", ident(off, kAccu), list_of(off, std::move(args[1]))),
                                   ident(off, kAccu));
      std::vector<ExprPtr> a;
      a.push_back(std::move(keys));
      auto c = make_expr(ExprKind::kComprehension, off);
      c->iter_range = list_of(off, nullptr);
      c->iter_var = "#unused";
      c->accu_var = input;
      c->accu_init = std::move(target);
      c->loop_cond = lit_bool(off, false);
      c->loop_step = ident(off, input);
      c->result = call(off, "@sortByAssociatedKeys", std::move(a), ident(off, input));
      return c;
    }
    if ((name == "optMap" || name == "optFlatMap") && n == 2) {
      std::string v;
      if (!simple_name(args[0], v,
                       name == "optMap" ? "optMap() variable name must be a simple identifier"
                                        : "optFlatMap() variable name must be a simple identifier")) {
        return nullptr;
      }
      // o.optMap(v, t) -> o.hasValue() ? optional.of(cel.bind(v, o.value(), t)) : optional.none()
      // The target is evaluated once per use; it is an expression without side effects.
      ExprPtr target2 = clone(*target);
      auto has_value = call(off, "hasValue", {}, std::move(target));
      auto bind = make_expr(ExprKind::kComprehension, off);
      bind->iter_range = list_of(off, nullptr);
      bind->iter_var = "#unused";
      bind->accu_var = v;
      bind->accu_init = call(off, "value", {}, std::move(target2));
      bind->loop_cond = lit_bool(off, false);
      bind->loop_step = ident(off, v);
      bind->result = std::move(args[1]);
      ExprPtr then_e;
      if (name == "optMap") {
        std::vector<ExprPtr> a;
        a.push_back(std::move(bind));
        then_e = call(off, "optional.of", std::move(a));
      } else {
        then_e = std::move(bind);
      }
      return ternary(off, std::move(has_value), std::move(then_e), call(off, "optional.none", {}));
    }
    return call(off, std::move(name), std::move(args), std::move(target));
  }

  static ExprPtr clone(const Expr& e) {
    auto c = make_expr(e.kind, e.offset);
    c->literal = e.literal;
    c->name = e.name;
    c->test_only = e.test_only;
    c->optional_indices = e.optional_indices;
    c->iter_var = e.iter_var;
    c->iter_var2 = e.iter_var2;
    c->accu_var = e.accu_var;
    auto cl = [](const ExprPtr& p) { return p ? clone(*p) : nullptr; };
    c->operand = cl(e.operand);
    for (const auto& a : e.args) c->args.push_back(cl(a));
    for (const auto& en : e.entries) {
      MapEntry m;
      m.key = cl(en.key);
      m.field = en.field;
      m.value = cl(en.value);
      m.optional = en.optional;
      m.offset = en.offset;
      c->entries.push_back(std::move(m));
    }
    c->iter_range = cl(e.iter_range);
    c->accu_init = cl(e.accu_init);
    c->loop_cond = cl(e.loop_cond);
    c->loop_step = cl(e.loop_step);
    c->result = cl(e.result);
    return c;
  }

  Lexer lex_;
  Token tok_;
  std::vector<Issue>& issues_;
  bool failed_ = false;
  int depth_ = 0;
};

// Depth of the tree, computed without recursion.
int tree_depth(const Expr& root) {
  std::vector<std::pair<const Expr*, int>> stack{{&root, 1}};
  int max_depth = 0;
  while (!stack.empty()) {
    const Expr* e = stack.back().first;
    int d = stack.back().second;
    stack.pop_back();
    if (d > max_depth) max_depth = d;
    auto push = [&](const ExprPtr& p) {
      if (p) stack.emplace_back(p.get(), d + 1);
    };
    push(e->operand);
    for (const auto& a : e->args) push(a);
    for (const auto& en : e->entries) {
      push(en.key);
      push(en.value);
    }
    push(e->iter_range);
    push(e->accu_init);
    push(e->loop_cond);
    push(e->loop_step);
    push(e->result);
  }
  return max_depth;
}

}  // namespace

ExprPtr parse(std::string_view source, std::vector<Issue>& issues) {
  if (source.size() > kMaxSourceLength) {
    issues.push_back({0, "expression code point size exceeds limit: size: " + std::to_string(source.size()) +
                             ", limit " + std::to_string(kMaxSourceLength)});
    return nullptr;
  }
  Parser p(source, issues);
  ExprPtr root = p.parse_root();
  if (root && tree_depth(*root) > kMaxTreeDepth) {
    issues.push_back({0, "max recursion depth exceeded"});
    return nullptr;
  }
  return root;
}

}  // namespace draplane::cel
