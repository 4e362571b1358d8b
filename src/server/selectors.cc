#include "server/selectors.h"

#include <algorithm>
#include <optional>
#include <set>

#include "api/validation_core.h"
#include "server/query_params.h"

#include "server/strategy.h"

namespace draplane::server {
namespace {

bool satisfies(const Selector::Requirement& r, bool present, const std::string& value) {
  auto in = [&] { return std::find(r.values.begin(), r.values.end(), value) != r.values.end(); };
  switch (r.op) {
    case Selector::Op::kEq: return present && value == r.values[0];
    case Selector::Op::kNotEq: return !present || value != r.values[0];
    case Selector::Op::kIn: return present && in();
    case Selector::Op::kNotIn: return !present || !in();
    case Selector::Op::kExists: return present;
    case Selector::Op::kNotExists: return !present;
    case Selector::Op::kGt:
    case Selector::Op::kLt: {
      // Labels.Matches: both sides as int64; an unparsable side never matches.
      auto have = go_parse_int64(value);
      auto want = r.values.size() == 1 ? go_parse_int64(r.values[0]) : Result<int64_t>(Status(Code::kInvalid, ""));
      if (!present || !have.has_value() || !want.has_value()) return false;
      return r.op == Selector::Op::kGt ? *have > *want : *have < *want;
    }
  }
  return false;
}

}  // namespace

// ---- label selectors: k8s.io/apimachinery/pkg/labels Parse (lexer and
// recursive-descent parser), with its error texts.
namespace {

enum class Tok { kError, kEnd, kClosePar, kComma, kNot, kDoubleEq, kEq, kGt, kIdent, kIn, kLt, kNotEq, kNotIn, kOpenPar };

struct Item {
  Tok tok;
  std::string lit;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool is_special(char c) {
  return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<';
}

std::optional<Tok> keyword(std::string_view s) {
  static const std::pair<const char*, Tok> kTokens[] = {
      {")", Tok::kClosePar}, {",", Tok::kComma}, {"!", Tok::kNot},    {"==", Tok::kDoubleEq},
      {"=", Tok::kEq},       {">", Tok::kGt},    {"in", Tok::kIn},    {"<", Tok::kLt},
      {"!=", Tok::kNotEq},   {"notin", Tok::kNotIn}, {"(", Tok::kOpenPar}};
  for (const auto& [text, tok] : kTokens) {
    if (s == text) return tok;
  }
  return std::nullopt;
}

std::vector<Item> lex(std::string_view s) {
  std::vector<Item> out;
  size_t pos = 0;
  for (;;) {
    while (pos < s.size() && is_space(s[pos])) ++pos;
    if (pos >= s.size()) {
      out.push_back({Tok::kEnd, ""});
      return out;
    }
    if (is_special(s[pos])) {
      // The longest run of special symbols that still names an operator.
      std::string buf;
      std::optional<Item> last;
      while (pos < s.size() && is_special(s[pos])) {
        buf += s[pos];
        if (auto t = keyword(buf)) {
          last = Item{*t, buf};
        } else if (last) {
          break;
        }
        ++pos;
      }
      if (!last) {
        out.push_back({Tok::kError, "error expected: keyword found '" + buf + "'"});
      } else {
        out.push_back(*last);
      }
      continue;
    }
    size_t b = pos;
    while (pos < s.size() && !is_special(s[pos]) && !is_space(s[pos])) ++pos;
    std::string word(s.substr(b, pos - b));
    auto t = keyword(word);
    out.push_back({t ? *t : Tok::kIdent, word});
  }
}

// Go's strings.Join of the field errors' texts, as errors.Aggregate prints them.
std::string aggregate_text(const std::vector<std::string>& errs) {
  if (errs.size() == 1) return errs[0];
  std::string out = "[";
  for (size_t i = 0; i < errs.size(); ++i) out += (i ? ", " : "") + errs[i];
  return out + "]";
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

// A Go %#v / json rendering of a []string for the values errors.
std::string string_list(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + api::go_quote(v[i]);
  return out + "]";
}

class LabelParser {
 public:
  explicit LabelParser(std::string_view text) : items_(lex(text)) {}

  Result<std::vector<Selector::Requirement>> parse() {
    std::vector<Selector::Requirement> reqs;
    for (;;) {
      auto [tok, lit] = lookahead();
      if (tok == Tok::kEnd) return reqs;
      if (tok != Tok::kIdent && tok != Tok::kNot) {
        return error("found '" + lit + "', expected: !, identifier, or 'end of string'");
      }
      auto r = requirement();
      if (!r.has_value()) return error("unable to parse requirement: " + r.error().message());
      reqs.push_back(std::move(r).value());
      auto [t, l] = consume();
      if (t == Tok::kEnd) return reqs;
      if (t != Tok::kComma) return error("found '" + l + "', expected: ',' or 'end of string'");
      auto [t2, l2] = lookahead();
      if (t2 != Tok::kIdent && t2 != Tok::kNot) {
        return error("found '" + l2 + "', expected: identifier after ','");
      }
    }
  }

 private:
  static Status error(std::string m) { return Status(Code::kBadRequest, std::move(m)); }

  // In value position `in` and `notin` are identifiers.
  static Item as_value(Item it) {
    if (it.tok == Tok::kIn || it.tok == Tok::kNotIn) it.tok = Tok::kIdent;
    return it;
  }
  Item lookahead() const { return as_value(items_[pos_]); }
  Item consume(bool values = true) {
    Item it = items_[pos_];
    if (pos_ + 1 < items_.size()) ++pos_;
    return values ? as_value(it) : it;
  }

  Result<Selector::Requirement> requirement() {
    Selector::Requirement r;
    Item key = consume();
    bool not_exists = key.tok == Tok::kNot;
    if (not_exists) key = consume();
    const std::string& lit = key.lit;
    if (key.tok != Tok::kIdent) return error("found '" + lit + "', expected: identifier");
    auto key_errs = api::vcore::qualified_name_errors(lit);
    if (!key_errs.empty()) return error("<nil>: Invalid value: " + api::go_quote(lit) + ": " + join(key_errs, "; "));
    r.key = lit;
    // `!key` is complete by itself (what follows must be ',' or the end); a
    // key followed by ',' or the end means it exists.
    Tok next = lookahead().tok;
    if (not_exists || next == Tok::kEnd || next == Tok::kComma) {
      r.op = not_exists ? Selector::Op::kNotExists : Selector::Op::kExists;
      return r;
    }
    auto [otok, olit] = consume(false);
    switch (otok) {
      case Tok::kIn: r.op = Selector::Op::kIn; break;
      case Tok::kNotIn: r.op = Selector::Op::kNotIn; break;
      case Tok::kEq: case Tok::kDoubleEq: r.op = Selector::Op::kEq; break;
      case Tok::kNotEq: r.op = Selector::Op::kNotEq; break;
      case Tok::kGt: r.op = Selector::Op::kGt; break;
      case Tok::kLt: r.op = Selector::Op::kLt; break;
      default:
        return error("found '" + olit + "', expected: in, notin, =, ==, !=, gt, lt");
    }
    std::set<std::string> values;
    if (r.op == Selector::Op::kIn || r.op == Selector::Op::kNotIn) {
      ASSIGN_OR_RETURN(values, set_values());
    } else {
      ASSIGN_OR_RETURN(values, exact_value());
    }
    r.values.assign(values.begin(), values.end());
    return check(std::move(r));
  }

  // parseValues: `(a,b,,c)`; empty entries are the empty value.
  Result<std::set<std::string>> set_values() {
    auto [tok, lit] = consume();
    if (tok != Tok::kOpenPar) return error("found '" + lit + "' expected: '('");
    auto [t, l] = lookahead();
    if (t == Tok::kClosePar) {
      consume();
      return std::set<std::string>{""};
    }
    if (t != Tok::kIdent && t != Tok::kComma) return error("found '" + l + "', expected: ',', ')' or identifier");
    std::set<std::string> s;
    for (;;) {
      auto [it, il] = consume();
      if (it == Tok::kIdent) {
        s.insert(il);
        auto [t2, l2] = lookahead();
        if (t2 == Tok::kComma) continue;
        if (t2 == Tok::kClosePar) break;
        return error("found '" + l2 + "', expected: ',' or ')'");
      }
      if (it != Tok::kComma) return error("found '" + il + "', expected: ',', or identifier");
      if (s.empty()) s.insert("");
      Tok t2 = lookahead().tok;
      if (t2 == Tok::kClosePar) {
        s.insert("");
        break;
      }
      if (t2 == Tok::kComma) s.insert("");
    }
    if (consume().tok != Tok::kClosePar) return error("found '" + l + "', expected: ')'");
    return s;
  }

  Result<std::set<std::string>> exact_value() {
    Tok t = lookahead().tok;
    if (t == Tok::kEnd || t == Tok::kComma) return std::set<std::string>{""};
    auto [tok, lit] = consume();
    if (tok == Tok::kIdent) return std::set<std::string>{lit};
    return error("found '" + lit + "', expected: identifier");
  }

  // NewRequirement's checks of the values (the key was checked when read).
  static Result<Selector::Requirement> check(Selector::Requirement r) {
    std::vector<std::string> errs;
    bool gt_lt = r.op == Selector::Op::kGt || r.op == Selector::Op::kLt;
    if (gt_lt) {
      if (r.values.size() != 1) {
        errs.push_back("values: Invalid value: " + string_list(r.values) +
                       ": for 'Gt', 'Lt' operators, exactly one value is required");
      }
      for (size_t i = 0; i < r.values.size(); ++i) {
        if (!go_parse_int64(r.values[i]).has_value()) {
          errs.push_back("values[" + std::to_string(i) + "]: Invalid value: " + api::go_quote(r.values[i]) +
                         ": for 'Gt', 'Lt' operators, the value must be an integer");
        }
      }
    }
    for (size_t i = 0; i < r.values.size(); ++i) {
      auto v = api::vcore::label_value_errors(r.values[i]);
      if (!v.empty()) {
        errs.push_back("values[" + std::to_string(i) + "][" + r.key + "]: Invalid value: " +
                       api::go_quote(r.values[i]) + ": " + join(v, "; "));
      }
    }
    if (!errs.empty()) return error(aggregate_text(errs));
    return r;
  }

  std::vector<Item> items_;
  size_t pos_ = 0;
};

// ---- field selectors: k8s.io/apimachinery/pkg/fields ParseSelector.

// Terms split on commas that no backslash escapes (the backslashes stay).
std::vector<std::string> field_terms(std::string_view text) {
  std::vector<std::string> out;
  if (text.empty()) return out;
  size_t start = 0;
  bool slash = false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (slash) {
      slash = false;
    } else if (text[i] == '\\') {
      slash = true;
    } else if (text[i] == ',') {
      out.emplace_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  out.emplace_back(text.substr(start));
  return out;
}

Result<std::string> unescape_field_value(std::string_view s) {
  std::string out;
  bool slash = false;
  for (char c : s) {
    if (slash) {
      if (c != '\\' && c != ',' && c != '=') {
        return Status(Code::kBadRequest, std::string("invalid field selector: invalid escape sequence: \\") + c);
      }
      out += c;
      slash = false;
    } else if (c == '\\') {
      slash = true;
    } else if (c == ',' || c == '=') {
      // Go prints the rune with %v: its code point.
      return Status(Code::kBadRequest,
                    "invalid field selector: unescaped character in value: " + std::to_string(static_cast<int>(c)));
    } else {
      out += c;
    }
  }
  if (slash) return Status(Code::kBadRequest, "invalid field selector: invalid escape sequence: \\");
  return out;
}

}  // namespace

Result<Selector> Selector::parse_labels(std::string_view text) {
  Selector s;
  ASSIGN_OR_RETURN(s.reqs_, LabelParser(text).parse());
  std::stable_sort(s.reqs_.begin(), s.reqs_.end(), [](const Requirement& a, const Requirement& b) { return a.key < b.key; });
  return s;
}

Result<Selector> Selector::parse_fields(std::string_view text, const ResourceInfo& res) {
  const Strategy& strategy = strategy_of(res);
  Selector s;
  s.strategy_ = &strategy;
  std::vector<std::string> terms = field_terms(text);
  std::sort(terms.begin(), terms.end());
  for (const std::string& term : terms) {
    if (term.empty()) continue;
    // The first operator from the left, `!=` before `==` before `=`; nothing is trimmed.
    size_t pos = std::string::npos, len = 0;
    for (size_t i = 0; i < term.size() && pos == std::string::npos; ++i) {
      for (std::string_view op : {"!=", "==", "="}) {
        if (std::string_view(term).substr(i, op.size()) == op) {
          pos = i;
          len = op.size();
          break;
        }
      }
    }
    if (pos == std::string::npos) {
      return Status(Code::kBadRequest, "invalid selector: '" + std::string(text) + "'; can't understand '" + term + "'");
    }
    Requirement r;
    r.key = term.substr(0, pos);
    r.op = len == 2 && term[pos] == '!' ? Op::kNotEq : Op::kEq;
    ASSIGN_OR_RETURN(std::string value, unescape_field_value(std::string_view(term).substr(pos + len)));
    r.values.push_back(std::move(value));
    ASSIGN_OR_RETURN(r.key, strategy.field_label(res, r.key));
    s.reqs_.push_back(std::move(r));
  }
  for (const auto& r : s.reqs_) {
    if (!strategy.selectable_field(r.key)) return Status(Code::kBadRequest, strategy.unsupported_field(res, r.key));
  }
  return s;
}

bool Selector::matches_labels(const JsonValue& object) const {
  const JsonValue* labels = find(object, {"metadata", "labels"});
  for (const auto& r : reqs_) {
    const JsonValue* v = labels && labels->IsObject() ? find(*labels, {r.key}) : nullptr;
    bool present = v && v->IsString();
    if (!satisfies(r, present, present ? std::string(v->GetString(), v->GetStringLength()) : "")) return false;
  }
  return true;
}

bool Selector::matches_fields(const JsonValue& object) const {
  for (const auto& r : reqs_) {
    // Field selectors compare against the field's value, "" when unset.
    if (!satisfies(r, true, strategy_->field_value(object, r.key))) return false;
  }
  return true;
}

std::string Selector::pinned_name() const {
  for (const auto& r : reqs_) {
    if (r.key == "metadata.name" && r.op == Op::kEq) return r.values[0];
  }
  return "";
}

}  // namespace draplane::server
