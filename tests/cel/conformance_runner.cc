// Runs the official CEL conformance tests (cel-spec, as JSON from the npm package
// @bufbuild/cel-spec) that apply to the DRA environment through draplane's CEL
// engine, and prints the pass count per file.
//
// Usage: cel_conformance TESTS_JSON SKIP_FILE [--list-failures]
// TESTS_JSON is the package's conformance suite dumped as JSON; SKIP_FILE lists
// "file/section/test  reason" lines for tests that do not apply. Exit 0 when every
// non-skipped test of the selected files passes, 1 otherwise, 77 (CTest skip)
// when TESTS_JSON is absent.
#include <rapidjson/document.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "cel/checker.h"
#include "cel/interpreter.h"
#include "cel/parser.h"
#include "cel/time.h"

namespace {

using draplane::cel::Activation;
using draplane::cel::CheckEnv;
using draplane::cel::EvalInput;
using draplane::cel::Expr;
using draplane::cel::ExprPtr;
using draplane::cel::Issue;
using draplane::cel::ListData;
using draplane::cel::MapData;
using draplane::cel::Plan;
using draplane::cel::Type;
using draplane::cel::TypeKind;
using draplane::cel::Value;
using draplane::cel::ValueKind;

const std::set<std::string> kFiles = {"basic",      "comparisons", "logic",    "integer_math", "fp_math",
                                      "string",     "string_ext",  "lists",    "macros",       "macros2",
                                      "fields",     "conversions", "parse",    "plumbing",     "bindings_ext",
                                      "optionals",  "timestamps"};

std::string b64decode(const std::string& in) {
  static const std::string chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  int val = 0, bits = -8;
  for (char c : in) {
    if (c == '=') break;
    size_t p = chars.find(c);
    if (p == std::string::npos) continue;
    val = (val << 6) + static_cast<int>(p);
    bits += 6;
    if (bits >= 0) {
      out.push_back(static_cast<char>((val >> bits) & 0xFF));
      bits -= 8;
    }
  }
  return out;
}

// Converts a cel.expr.Value in proto3 JSON; false when unsupported (messages).
bool to_value(const rapidjson::Value& j, Value& out) {
  if (j.HasMember("int64Value")) {
    const auto& v = j["int64Value"];
    out = Value::integer(v.IsString() ? std::stoll(v.GetString()) : v.GetInt64());
  } else if (j.HasMember("uint64Value")) {
    const auto& v = j["uint64Value"];
    out = Value::uinteger(v.IsString() ? std::stoull(v.GetString()) : v.GetUint64());
  } else if (j.HasMember("doubleValue")) {
    const auto& v = j["doubleValue"];
    if (v.IsString()) {
      std::string s = v.GetString();
      out = Value::dbl(s == "NaN" ? std::nan("") : (s == "Infinity" ? HUGE_VAL : (s == "-Infinity" ? -HUGE_VAL : std::stod(s))));
    } else {
      out = Value::dbl(v.GetDouble());
    }
  } else if (j.HasMember("stringValue")) {
    out = Value::string(std::string(j["stringValue"].GetString(), j["stringValue"].GetStringLength()));
  } else if (j.HasMember("bytesValue")) {
    out = Value::bytes(b64decode(j["bytesValue"].GetString()));
  } else if (j.HasMember("boolValue")) {
    out = Value::boolean(j["boolValue"].GetBool());
  } else if (j.HasMember("nullValue")) {
    out = Value::null();
  } else if (j.HasMember("typeValue")) {
    static std::set<std::string> names;  // keeps type names alive for borrowed values
    auto it = names.insert(j["typeValue"].GetString()).first;
    out = Value::type_name(*it);
  } else if (j.HasMember("listValue")) {
    ListData l;
    if (j["listValue"].HasMember("values")) {
      for (const auto& e : j["listValue"]["values"].GetArray()) {
        Value v;
        if (!to_value(e, v)) return false;
        l.push_back(v);
      }
    }
    out = Value::list(std::move(l));
  } else if (j.HasMember("objectValue")) {
    // google.protobuf.Duration / Timestamp in their JSON form.
    const auto& o = j["objectValue"];
    std::string type = o.HasMember("@type") ? o["@type"].GetString() : "";
    if (!o.HasMember("value") || !o["value"].IsString()) return false;
    std::string text = o["value"].GetString();
    std::string err;
    if (type == "type.googleapis.com/google.protobuf.Duration") {
      int64_t d;
      if (!draplane::cel::timeutil::parse_duration(text, d, err)) return false;
      out = Value::duration(d);
    } else if (type == "type.googleapis.com/google.protobuf.Timestamp") {
      draplane::cel::timeutil::Timestamp ts;
      if (!draplane::cel::timeutil::parse_rfc3339(text, ts, err)) return false;
      out = Value::timestamp(ts.seconds, ts.nanos, ts.offset);
    } else {
      return false;
    }
  } else if (j.HasMember("mapValue")) {
    MapData m;
    if (j["mapValue"].HasMember("entries")) {
      for (const auto& e : j["mapValue"]["entries"].GetArray()) {
        Value k, v;
        if (!to_value(e["key"], k) || !to_value(e["value"], v)) return false;
        m.entries.emplace_back(k, v);
      }
    }
    out = Value::map(std::move(m));
  } else {
    return false;
  }
  return true;
}

bool to_type(const rapidjson::Value& j, Type& out) {
  if (j.HasMember("primitive")) {
    std::string p = j["primitive"].GetString();
    if (p == "INT64") out = Type(TypeKind::kInt);
    else if (p == "UINT64") out = Type(TypeKind::kUint);
    else if (p == "DOUBLE") out = Type(TypeKind::kDouble);
    else if (p == "STRING") out = Type(TypeKind::kString);
    else if (p == "BYTES") out = Type(TypeKind::kBytes);
    else if (p == "BOOL") out = Type(TypeKind::kBool);
    else return false;
    return true;
  }
  if (j.HasMember("messageType")) {
    std::string m = j["messageType"].GetString();
    if (m == "google.protobuf.Duration") out = Type(TypeKind::kDuration);
    else if (m == "google.protobuf.Timestamp") out = Type(TypeKind::kTimestamp);
    else return false;
    return true;
  }
  if (j.HasMember("wellKnown")) {
    std::string m = j["wellKnown"].GetString();
    if (m == "DURATION") out = Type(TypeKind::kDuration);
    else if (m == "TIMESTAMP") out = Type(TypeKind::kTimestamp);
    else return false;
    return true;
  }
  if (j.HasMember("null")) {
    out = Type(TypeKind::kNull);
    return true;
  }
  if (j.HasMember("dyn")) {
    out = Type(TypeKind::kDyn);
    return true;
  }
  if (j.HasMember("listType")) {
    Type e;
    if (!to_type(j["listType"]["elemType"], e)) return false;
    out = Type::list(e);
    return true;
  }
  if (j.HasMember("mapType")) {
    Type k, v;
    if (!to_type(j["mapType"]["keyType"], k) || !to_type(j["mapType"]["valueType"], v)) return false;
    out = Type::map(k, v);
    return true;
  }
  return false;
}

// Exact equality for test expectations: kinds must match (1 != 1u), NaN == NaN.
bool same(const Value& a, const Value& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case ValueKind::kDouble:
      return (std::isnan(a.d) && std::isnan(b.d)) || a.d == b.d;
    case ValueKind::kList: {
      if (a.list_data().size() != b.list_data().size()) return false;
      for (size_t k = 0; k < a.list_data().size(); ++k) {
        if (!same(a.list_data()[k], b.list_data()[k])) return false;
      }
      return true;
    }
    case ValueKind::kMap: {
      const auto& x = a.map_data();
      const auto& y = b.map_data();
      if (x.entries.size() != y.entries.size()) return false;
      for (const auto& [k, v] : x.entries) {
        const Value* w = y.find(k);
        if (!w || !same(v, *w)) return false;
      }
      return true;
    }
    default:
      return draplane::cel::values_equal(a, b);
  }
}

struct Outcome {
  bool pass = false;
  std::string detail;
};

Outcome run_test(const rapidjson::Value& t, const draplane::cel::TimeZoneDatabase& zones) {
  std::string expr(t["expr"].GetString(), t["expr"].GetStringLength());
  CheckEnv env;
  env.homogeneous_aggregates = false;  // the conformance environment is cel-go's default
  if (t.HasMember("container")) env.container = t["container"].GetString();
  if (t.HasMember("typeEnv")) {
    for (const auto& d : t["typeEnv"].GetArray()) {
      if (!d.HasMember("ident")) return {false, "unsupported declaration"};
      Type ty;
      if (!to_type(d["ident"]["type"], ty)) return {false, "unsupported declared type"};
      env.variables[d["name"].GetString()] = ty;
    }
  }
  Activation act;
  if (t.HasMember("bindings")) {
    for (auto it = t["bindings"].MemberBegin(); it != t["bindings"].MemberEnd(); ++it) {
      Value v;
      if (!it->value.HasMember("value") || !to_value(it->value["value"], v)) return {false, "unsupported binding"};
      act.vars[it->name.GetString()] = v;
      if (!t.HasMember("typeEnv")) env.variables[it->name.GetString()] = Type(TypeKind::kDyn);
    }
  }
  bool want_error = t.HasMember("evalError");
  Value want;
  if (!want_error) {
    if (!t.HasMember("value")) {
      want = Value::boolean(true);  // SimpleTest's default expectation
    } else if (!to_value(t["value"], want)) {
      return {false, "unsupported expected value"};
    }
  }
  std::vector<Issue> issues;
  ExprPtr ast = draplane::cel::parse(expr, issues);
  bool checked = !(t.HasMember("disableCheck") && t["disableCheck"].GetBool());
  if (ast && checked) draplane::cel::check(*ast, env, issues);
  if (!issues.empty()) {
    if (want_error) return {true, ""};
    return {false, "compile: " + draplane::cel::format_issues(expr, issues)};
  }
  auto plan = Plan::build(*ast, checked, [&] { return draplane::cel::CallContext{&zones}; });
  EvalInput in;
  in.activation = &act;
  in.cost_limit = UINT64_MAX;
  Value got = plan->eval(in);
  if (want_error) {
    if (got.is_error()) return {true, ""};
    return {false, "want error, got " + draplane::cel::to_literal(got)};
  }
  if (got.is_error()) return {false, "error: " + got.error_message()};
  if (!same(got, want)) {
    return {false, "got " + draplane::cel::to_literal(got) + ", want " + draplane::cel::to_literal(want)};
  }
  return {true, ""};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: cel_conformance TESTS_JSON SKIP_FILE [--list-failures]\n";
    return 2;
  }
  bool list_failures = argc > 3 && std::string(argv[3]) == "--list-failures";
  std::ifstream in(argv[1]);
  if (!in) {
    std::cout << "SKIP: " << argv[1] << " not found (npm unavailable when the test data was set up)\n";
    return 77;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseFullPrecisionFlag>(text.c_str());
  if (doc.HasParseError()) {
    std::cerr << "cannot parse " << argv[1] << "\n";
    return 2;
  }
  std::map<std::string, std::string> skips;
  {
    std::ifstream sf(argv[2]);
    std::string line;
    while (std::getline(sf, line)) {
      if (line.empty() || line[0] == '#') continue;
      size_t sp = line.find('\t');
      std::string key = line.substr(0, sp);
      skips[key] = sp == std::string::npos ? "" : line.substr(sp + 1);
    }
  }
  draplane::cel::TimeZoneDatabase zones;  // the system's zoneinfo
  int total_pass = 0, total_fail = 0, total_skip = 0;
  std::set<std::string> seen;
  for (const auto& file : doc["suites"].GetArray()) {
    std::string fname = file["name"].GetString();
    if (!kFiles.count(fname)) continue;
    int pass = 0, fail = 0, skip = 0;
    for (const auto& section : file["suites"].GetArray()) {
      std::string sname = section["name"].GetString();
      for (const auto& test : section["tests"].GetArray()) {
        const auto& o = test["original"];
        std::string name = o.HasMember("name") ? o["name"].GetString() : o["expr"].GetString();
        std::string key = fname + "/" + sname + "/" + name;
        seen.insert(key);
        if (skips.count(key)) {
          ++skip;
          continue;
        }
        Outcome r = run_test(o, zones);
        if (r.pass) {
          ++pass;
        } else {
          ++fail;
          if (list_failures) {
            std::cout << key << "\t" << r.detail << "\n";
          } else {
            std::cout << "FAIL " << key << ": " << o["expr"].GetString() << "\n    " << r.detail << "\n";
          }
        }
      }
    }
    std::cout << "cel-spec " << fname << ": " << pass << "/" << (pass + fail) << " passed, " << skip
              << " skipped\n";
    total_pass += pass;
    total_fail += fail;
    total_skip += skip;
  }
  for (const auto& [key, reason] : skips) {
    if (!seen.count(key)) std::cout << "note: skip entry matches no test: " << key << "\n";
  }
  std::cout << "cel-spec total: " << total_pass << "/" << (total_pass + total_fail) << " passed, " << total_skip
            << " skipped\n";
  return total_fail == 0 ? 0 : 1;
}
