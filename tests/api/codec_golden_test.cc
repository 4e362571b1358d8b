// Before/after comparison of the codec: every public entry point of api/codec.h
// (decode_stream, decode_object, decode_object_lenient with its dropped fields,
// to_json compact and pretty, to_yaml, to_json_list, to_yaml_stream) is run over
// every manifest in the repository and over seeded mutations of each object in
// them, and the outcome is compared with tests/api/testdata/codec_golden.txt,
// recorded from the codec before its field tables replaced the hand-written
// decoders and encoders (issue 24). A refactor of the codec must leave every line
// unchanged, error messages included.
//
// Inputs, in this order: every *.yaml and *.json under tests/, examples/, and
// ../shared/conformance (the shared conformance cases; CI may lack the folder, so
// golden lines of those inputs are skipped, not failed, when it is absent). From
// each input every embedded object (a mapping with string kind and apiVersion, at
// any depth: List items, a conformance case's objects) is taken once, and
// mutated kMutations times with a generator seeded by the object's text: a
// scalar of the wrong type, an unknown or near-miss field, a duplicated key, a
// null, a removed field, an out-of-range or non-integer number, another
// apiVersion, a value wrapped in an array. Odd mutations are fed as YAML (the
// JSON text behind "---"), even ones as JSON.
//
// Each golden line is `key<TAB>outcome`. Errors and dropped-field lists are kept
// verbatim (an error repeated by a later entry point as "=strict"); encoded texts are kept as FNV-1a hashes (the golden stays small),
// except the compact JSON of each unmutated object, which is kept whole. A line
// `input<TAB>path<TAB>hash` records each input's content: an edited input fails
// the test until the golden is regenerated; a new input is only noted.
//
// Regenerate (only when a change of behaviour is intended, and say so in the
// commit):  DRAPLANE_UPDATE_GOLDEN=1 build/tests/api_test --gtest_filter='CodecGolden.*'
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "api/codec.h"
#include "api/internal/json_value.h"

namespace draplane::api {
namespace {

namespace fs = std::filesystem;
using internal::JsonValue;

constexpr int kMutations = 12;
constexpr const char* kConformancePrefix = "shared/conformance/";

std::string golden_path() {
  return std::string(DRAPLANE_SOURCE_DIR) + "/tests/api/testdata/codec_golden.txt";
}

uint64_t fnv1a(std::string_view text) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string hex(uint64_t h) {
  static const char* digits = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[static_cast<size_t>(i)] = digits[h & 15];
  return out;
}

std::string hash_of(std::string_view text) { return "#" + hex(fnv1a(text)); }

// One line per entry: tabs, newlines and backslashes escaped.
std::string escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else out += c;
  }
  return out;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Input {
  std::string key;  // "tests/...", "examples/...", "shared/conformance/..."
  fs::path path;
};

std::vector<Input> inputs_under(const fs::path& root, const std::string& prefix) {
  std::vector<Input> out;
  if (!fs::is_directory(root)) return out;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file()) continue;
    std::string ext = e.path().extension().string();
    if (ext != ".yaml" && ext != ".json") continue;
    out.push_back({prefix + fs::relative(e.path(), root).generic_string(), e.path()});
  }
  std::sort(out.begin(), out.end(), [](const Input& a, const Input& b) { return a.key < b.key; });
  return out;
}

std::string error_text(const Status& st) {
  return "error " + std::to_string(static_cast<int>(st.code())) + " " + st.message();
}

// The outcome of every entry point on one text.
std::string outcome(const std::string& text, bool keep_json) {
  std::string out;
  std::string strict_error;  // repeated below as "=strict", keeping the golden small
  auto error_or_same = [&](const Status& st) {
    std::string e = error_text(st);
    return e == strict_error ? std::string("=strict") : e;
  };
  Result<Object> strict = decode_object(text);
  if (strict.has_value()) {
    const Object& o = strict.value();
    std::string json = to_json(o);
    out += "strict ";
    out += kind_of(o);
    out += keep_json ? " json=" + json : " json" + hash_of(json);
    out += " pretty" + hash_of(to_json(o, true)) + " yaml" + hash_of(to_yaml(o));
    Result<Object> again = decode_object(json);
    out += again.has_value() && again.value() == o ? " rt=same" : " rt=differs";
  } else {
    strict_error = error_text(strict.error());
    out += "strict " + strict_error;
  }
  Result<LenientDecode> lenient = decode_object_lenient(text);
  if (lenient.has_value()) {
    out += " | lenient json" + hash_of(to_json(lenient.value().object)) + " dropped=[";
    for (size_t i = 0; i < lenient.value().dropped.size(); ++i) {
      if (i > 0) out += "; ";
      out += lenient.value().dropped[i];
    }
    out += "]";
  } else {
    out += " | lenient " + error_or_same(lenient.error());
  }
  out += " | stream";
  std::vector<Object> decoded;
  for (const DecodedDocument& doc : decode_stream(text)) {
    out += " [" + std::to_string(doc.index) + " " + doc.kind + "/" + doc.name + " ";
    if (doc.object.has_value()) {
      out += "ok" + hash_of(to_json(doc.object.value()));
      decoded.push_back(doc.object.value());
    } else {
      out += error_or_same(doc.object.error());
    }
    out += "]";
  }
  if (!decoded.empty()) {
    out += " list" + hash_of(to_json_list(decoded)) + hash_of(to_json_list(decoded, true)) +
           " yamls" + hash_of(to_yaml_stream(decoded));
  }
  return out;
}

// Every mapping with string kind and apiVersion, outermost first.
void collect_objects(const JsonValue& v, std::vector<const JsonValue*>& out) {
  if (v.is_object()) {
    const JsonValue* kind = v.find("kind");
    const JsonValue* av = v.find("apiVersion");
    if (kind != nullptr && kind->is_string() && av != nullptr && av->is_string()) {
      out.push_back(&v);
    }
    for (const auto& m : v.members) collect_objects(m.second, out);
  } else if (v.is_array()) {
    for (const JsonValue& item : v.items) collect_objects(item, out);
  }
}

// Every object member at any depth, as (object, member index).
void collect_members(JsonValue& v, std::vector<std::pair<JsonValue*, size_t>>& out) {
  if (v.is_object()) {
    for (size_t i = 0; i < v.members.size(); ++i) {
      out.emplace_back(&v, i);
      collect_members(v.members[i].second, out);
    }
  } else if (v.is_array()) {
    for (JsonValue& item : v.items) collect_members(item, out);
  }
}

JsonValue parsed(const std::string& json) {
  Result<JsonValue> v = internal::parse_json(json);
  return v.has_value() ? std::move(v).value() : JsonValue::string("x");
}

// A value of another type than `v`'s.
JsonValue other_type(const JsonValue& v, uint64_t r) {
  std::vector<JsonValue> choices = {JsonValue::string("two"), JsonValue::number("7"),
                                    JsonValue::from_bool(true), JsonValue::array(),
                                    JsonValue::object()};
  choices.erase(std::remove_if(choices.begin(), choices.end(),
                               [&](const JsonValue& c) { return c.type == v.type; }),
                choices.end());
  return choices[r % choices.size()];
}

// Mutation `n` of `root` (a copy), seeded by `seed`.
JsonValue mutate(JsonValue root, uint64_t seed, int n) {
  std::mt19937_64 rng(seed * 1000003ULL + static_cast<uint64_t>(n));
  std::vector<std::pair<JsonValue*, size_t>> members;
  collect_members(root, members);
  if (members.empty()) return root;
  auto [obj, i] = members[rng() % members.size()];
  JsonValue& value = obj->members[i].second;
  const std::string key = obj->members[i].first;
  static const char* kNumbers[] = {"9223372036854775808", "-9223372036854775809", "2147483648",
                                   "-2147483649", "1e3", "1.5", "-1", "0",
                                   "99999999999999999999999"};
  static const char* kStrings[] = {"", "not-a-time", "2026-12-06T03:40:01Z", "1Gi", "-5", "x y"};
  static const char* kVersions[] = {"resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2",
                                    "resource.k8s.io/v1alpha3", "v1", "apps/v1"};
  switch (rng() % 9) {
    case 0:
      value = other_type(value, rng());
      break;
    case 1: {
      std::string name = rng() % 2 == 0 ? "zzUnknown" : key + "x";
      obj->add(name, JsonValue::string("v"));
      break;
    }
    case 2: {
      JsonValue copy = rng() % 2 == 0 ? value : JsonValue::string("dup");
      obj->add(key, std::move(copy));
      break;
    }
    case 3:
      value = JsonValue::null();
      break;
    case 4:
      obj->members.erase(obj->members.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    case 5:
      value = JsonValue::number(kNumbers[rng() % std::size(kNumbers)]);
      break;
    case 6:
      if (JsonValue* av = root.find("apiVersion")) {
        *av = JsonValue::string(kVersions[rng() % std::size(kVersions)]);
      }
      break;
    case 7:
      value = JsonValue::string(kStrings[rng() % std::size(kStrings)]);
      break;
    default: {
      JsonValue wrapped = JsonValue::array();
      wrapped.items.push_back(value);
      value = std::move(wrapped);
      break;
    }
  }
  return root;
}

struct Golden {
  std::map<std::string, std::string> inputs;   // key -> content hash
  std::map<std::string, std::string> entries;  // key -> outcome
};

Golden compute(const std::vector<Input>& inputs) {
  Golden g;
  std::set<std::string> seen_objects;
  for (const Input& in : inputs) {
    std::string text = read_file(in.path);
    g.inputs[in.key] = hex(fnv1a(text));
    g.entries[in.key] = outcome(text, false);
    std::vector<internal::YamlDocument> docs = internal::parse_yaml_stream(text);
    for (const internal::YamlDocument& doc : docs) {
      if (!doc.error.ok()) continue;
      std::vector<const JsonValue*> objects;
      collect_objects(doc.value, objects);
      for (const JsonValue* o : objects) {
        std::string json = internal::to_json_text(*o);
        if (!seen_objects.insert(json).second) continue;
        uint64_t seed = fnv1a(json);
        std::string base = in.key + "@" + hex(seed);
        g.entries[base] = outcome(json, true);
        JsonValue tree = parsed(json);
        for (int n = 0; n < kMutations; ++n) {
          std::string mutated = internal::to_json_text(mutate(tree, seed, n));
          if (n % 2 == 1) mutated = "---\n" + mutated;
          g.entries[base + "/m" + std::to_string(n)] = outcome(mutated, false);
        }
      }
    }
  }
  return g;
}

std::vector<Input> all_inputs() {
  std::vector<Input> out;
  fs::path src(DRAPLANE_SOURCE_DIR);
  for (auto [dir, prefix] : {std::pair<fs::path, std::string>{src / "tests", "tests/"},
                             {src / "examples", "examples/"},
                             {fs::path(DRAPLANE_SHARED_DIR) / "conformance", kConformancePrefix}}) {
    std::vector<Input> some = inputs_under(dir, prefix);
    out.insert(out.end(), some.begin(), some.end());
  }
  return out;
}

void write_golden(const Golden& g) {
  std::ofstream out(golden_path(), std::ios::binary);
  out << "# Generated by tests/api/codec_golden_test.cc; see its header.\n";
  for (const auto& [key, hash] : g.inputs) out << "input\t" << key << "\t" << hash << "\n";
  for (const auto& [key, value] : g.entries) out << escape(key) << "\t" << escape(value) << "\n";
}

Golden read_golden() {
  Golden g;
  std::ifstream in(golden_path(), std::ios::binary);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;
    std::string key = line.substr(0, tab);
    std::string rest = line.substr(tab + 1);
    if (key == "input") {
      size_t t2 = rest.find('\t');
      g.inputs[rest.substr(0, t2)] = rest.substr(t2 + 1);
    } else {
      g.entries[key] = rest;
    }
  }
  return g;
}

bool is_conformance(const std::string& key) { return key.rfind(kConformancePrefix, 0) == 0; }

TEST(CodecGolden, EveryEntryPointMatchesTheRecordedOutcomes) {
  std::vector<Input> inputs = all_inputs();
  Golden actual = compute(inputs);
  if (std::getenv("DRAPLANE_UPDATE_GOLDEN") != nullptr) {
    write_golden(actual);
    GTEST_SKIP() << "wrote " << golden_path() << " (" << actual.entries.size() << " entries)";
  }
  Golden expected = read_golden();
  ASSERT_FALSE(expected.entries.empty()) << "no golden at " << golden_path();
  bool have_conformance = fs::is_directory(fs::path(DRAPLANE_SHARED_DIR) / "conformance");
  for (const auto& [key, hash] : expected.inputs) {
    if (is_conformance(key) && !have_conformance) continue;
    auto it = actual.inputs.find(key);
    ASSERT_TRUE(it != actual.inputs.end())
        << "input " << key << " is gone: regenerate the golden (see the test's header)";
    ASSERT_EQ(it->second, hash)
        << "input " << key << " changed: regenerate the golden (see the test's header)";
  }
  for (const auto& [key, hash] : actual.inputs) {
    if (expected.inputs.count(key) == 0) {
      std::cout << "note: input " << key << " is not in the golden (regenerate to add it)\n";
    }
  }
  int mismatches = 0;
  size_t compared = 0;
  for (const auto& [key, want] : expected.entries) {
    if (is_conformance(key) && !have_conformance) continue;
    auto it = actual.entries.find(key);
    std::string got = it == actual.entries.end() ? "<no such case>" : escape(it->second);
    ++compared;
    if (got != want && ++mismatches <= 20) {
      ADD_FAILURE() << "case " << key << "\n  want: " << want << "\n  got:  " << got;
    }
  }
  EXPECT_EQ(mismatches, 0) << "of " << compared << " cases";
  EXPECT_GT(compared, 1000u);
}

}  // namespace
}  // namespace draplane::api
