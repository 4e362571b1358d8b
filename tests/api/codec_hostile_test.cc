// Hostile and ambiguous input to the codec, answered as kube-apiserver's
// decoders answer it: YAML alias bombs and deep nesting are refused with go-yaml's
// and encoding/json's errors, a repeated JSON key takes its last value (and is
// still reported), and metav1.Time fields must be RFC 3339.
#include <gtest/gtest.h>

#include <string>

#include "api/codec.h"
#include "api/decode_limits.h"

namespace draplane::api {
namespace {

std::string error_of(const std::string& text) {
  Result<Object> r = decode_object(text);
  return r.has_value() ? std::string("decoded") : r.error().message();
}

// The billion laughs: nine levels of ten aliases each (10^9 nodes).
std::string alias_bomb() {
  std::string y = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: bomb\n  annotations:\n";
  y += "    a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  for (int i = 1; i <= 9; ++i) {
    std::string prev = "*a" + std::to_string(i - 1);
    y += "    a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) y += (j ? "," : "") + prev;
    y += "]\n";
  }
  return y;
}

TEST(CodecHostileTest, YamlAliasBombIsRefused) {
  EXPECT_LT(alias_bomb().size(), 1000u);
  EXPECT_EQ(error_of(alias_bomb()), "error converting YAML to JSON: yaml: document contains excessive aliasing");
  Result<std::string> json = yaml_to_json(alias_bomb());
  ASSERT_FALSE(json.has_value());
  EXPECT_EQ(json.error().message(), "error converting YAML to JSON: yaml: document contains excessive aliasing");
  EXPECT_EQ(json.error().code(), Code::kBadRequest);
}

TEST(CodecHostileTest, YamlAliasesWithinBudgetExpand) {
  // go-yaml's limit: more than 100 aliased nodes making up over 99% of a small
  // document. A hundred aliases of a small list are fine.
  std::string y = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ok\n  annotations:\n    a: &a [1,2,3]\n";
  for (int i = 0; i < 100; ++i) y += "    b" + std::to_string(i) + ": *a\n";
  Result<std::string> json = yaml_to_json(y);
  ASSERT_TRUE(json.has_value()) << json.error().message();
  EXPECT_NE(json->find("\"b99\":[1,2,3]"), std::string::npos);
}

// yaml-cpp 0.7 reads a `,` outside a flow collection as an empty document
// without consuming it, for ever (found by fuzz_yaml: one request pinned a
// server thread). Each is a 400 now, and at once.
TEST(CodecHostileTest, StrayFlowEntryIsRefusedNotLoopedOn) {
  for (const char* y : {",\n", "[a], b\n", "\"a\", b\n", "- a\n,\n", "{a: b}\n,\n",
                        "# c\n, \"a\"\napiVersion: v1\nkind: Namespace\n"}) {
    SCOPED_TRACE(y);
    Result<std::string> json = yaml_to_json(y);
    ASSERT_FALSE(json.has_value());
    EXPECT_NE(json.error().message().find("did not find expected <document start>"), std::string::npos)
        << json.error().message();
    EXPECT_EQ(json.error().code(), Code::kBadRequest);
  }
  // Several documents still decode.
  std::vector<DecodedDocument> docs = decode_stream(
      "kind: Namespace\napiVersion: v1\nmetadata: {name: a}\n---\n---\n"
      "kind: Namespace\napiVersion: v1\nmetadata: {name: b}\n");
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0].name, "a");
  EXPECT_EQ(docs[1].name, "b");
  EXPECT_TRUE(docs[1].object.has_value());
}

TEST(CodecHostileTest, DeepNestingIsRefused) {
  // 150,000 levels: encoding/json's "exceeded max depth" (limit 10000), not a stack overflow.
  std::string deep(150000, '[');
  std::string msg = error_of(deep);
  EXPECT_NE(msg.find("invalid character '[' exceeded max depth"), std::string::npos) << msg;
  std::string objects;
  for (int i = 0; i < 150000; ++i) objects += "{\"a\":";
  msg = error_of(objects);
  EXPECT_NE(msg.find("invalid character '{' exceeded max depth"), std::string::npos) << msg;
  // Exactly the limit is read (and then is not an object).
  msg = error_of(std::string(kMaxNestingDepth, '[') + std::string(kMaxNestingDepth, ']'));
  EXPECT_EQ(msg.find("exceeded max depth"), std::string::npos) << msg;
  msg = error_of(std::string(kMaxNestingDepth + 1, '[') + std::string(kMaxNestingDepth + 1, ']'));
  EXPECT_NE(msg.find("exceeded max depth"), std::string::npos) << msg;
  // YAML: flow and block nesting end at yaml-cpp's depth with go-yaml's wording.
  for (const std::string& y : {std::string(150000, '['), "x: " + std::string(150000, '{')}) {
    Result<std::string> json = yaml_to_json(y);
    ASSERT_FALSE(json.has_value());
    EXPECT_NE(json.error().message().find("exceeded max depth of"), std::string::npos) << json.error().message();
  }
  std::string block;
  for (int i = 0; i < 150000; ++i) block += "- ";
  Result<std::string> json = yaml_to_json(block);
  ASSERT_FALSE(json.has_value());
  EXPECT_NE(json.error().message().find("exceeded max depth of"), std::string::npos) << json.error().message();
}

TEST(CodecHostileTest, RepeatedKeyTakesTheLastValue) {
  const std::string dc = R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass",)";
  // Strict: reported (once), as before.
  EXPECT_EQ(error_of(dc + R"("metadata":{"name":"a","name":"b","name":"c"}})"),
            "strict decoding error: duplicate field \"metadata.name\"");
  // Lenient: the last value, and the duplicate listed.
  Result<LenientDecode> l = decode_object_lenient(dc + R"("metadata":{"name":"a","name":"b"}})");
  ASSERT_TRUE(l.has_value()) << l.error().message();
  EXPECT_EQ(meta_of(l->object).name, "b");
  ASSERT_EQ(l->dropped.size(), 1u);
  EXPECT_EQ(l->dropped[0], "duplicate field \"metadata.name\"");
  // Go decodes a repeated struct field into the same value: objects merge, a
  // map keeps the keys the later object does not set, scalars are replaced.
  l = decode_object_lenient(dc + R"("metadata":{"name":"a","labels":{"x":"1","y":"1"}},)"
                                 R"("metadata":{"labels":{"y":"2"},"annotations":{"n":"v"}}})");
  ASSERT_TRUE(l.has_value()) << l.error().message();
  const ObjectMeta& m = meta_of(l->object);
  EXPECT_EQ(m.name, "a");
  EXPECT_EQ(m.labels.at("x"), "1");
  EXPECT_EQ(m.labels.at("y"), "2");
  EXPECT_EQ(m.annotations.at("n"), "v");
  // A repeated apiVersion or kind: the last one names the kind.
  Result<LenientDecode> k = decode_object_lenient(
      R"({"apiVersion":"v1","kind":"DeviceClass","kind":"Namespace","metadata":{"name":"n"}})");
  ASSERT_TRUE(k.has_value()) << k.error().message();
  EXPECT_EQ(kind_of(k->object), "Namespace");
  // Lists: a repeated list is replaced (its elements decoded into the old ones, as Go does).
  Result<LenientDecode> p = decode_object_lenient(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"a","image":"x"},{"name":"b"}],)"
      R"("containers":[{"name":"c"}]}})");
  ASSERT_TRUE(p.has_value()) << p.error().message();
  const Pod& pod = std::get<Pod>(p->object);
  ASSERT_EQ(pod.spec.containers.size(), 1u);
  EXPECT_EQ(pod.spec.containers[0].name, "c");
  EXPECT_EQ(pod.spec.containers[0].image, "x");
  // Unmodelled members kept for round trips: the last value too.
  p = decode_object_lenient(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},)"
                            R"("spec":{"hostNetwork":true,"hostNetwork":false}})");
  ASSERT_TRUE(p.has_value()) << p.error().message();
  std::string out = to_json(p->object);
  EXPECT_NE(out.find("\"hostNetwork\":false"), std::string::npos) << out;
  EXPECT_EQ(out.find("\"hostNetwork\":true"), std::string::npos) << out;
}

TEST(CodecHostileTest, TimesAreRfc3339) {
  EXPECT_EQ(error_of(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n","creationTimestamp":"yesterday"}})"),
            "metadata.creationTimestamp: parsing time \"yesterday\" as \"2006-01-02T15:04:05Z07:00\": cannot parse "
            "\"yesterday\" as \"2006\"");
  EXPECT_EQ(error_of("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
                     "  driver: d\n  pool: {name: p, resourceSliceCount: 1, generation: 1}\n  nodeName: n\n"
                     "  devices: [{name: g, taints: [{key: k, effect: NoSchedule, timeAdded: 2024-13-01T00:00:00Z}]}]\n"),
            "spec.devices[0].taints[0].timeAdded: parsing time \"2024-13-01T00:00:00Z\": month out of range");
  Result<Object> ok = decode_object(
      R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n","creationTimestamp":"2024-02-29T23:59:59.5+01:00"}})");
  EXPECT_TRUE(ok.has_value()) << ok.error().message();
  ok = decode_object(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n","creationTimestamp":null}})");
  EXPECT_TRUE(ok.has_value()) << ok.error().message();
  // "" is unset (what draplane's encoder writes for a condition without a time).
  ok = decode_object(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n","creationTimestamp":""}})");
  EXPECT_TRUE(ok.has_value()) << ok.error().message();
}

TEST(CodecHostileTest, GoTimeParseErrors) {
  const std::string layout = "\"2006-01-02T15:04:05Z07:00\"";
  struct Case {
    std::string in, want;
  };
  const Case cases[] = {
      {"2024-01-01T00:00:00Z", ""},
      {"2024-01-01T00:00:00.123456789Z", ""},
      {"2024-01-01T1:00:00-07:30", ""},
      {"", "parsing time \"\" as " + layout + ": cannot parse \"\" as \"2006\""},
      {"2024/01/01", "parsing time \"2024/01/01\" as " + layout + ": cannot parse \"/01/01\" as \"-\""},
      {"2024-1-01T00:00:00Z", "parsing time \"2024-1-01T00:00:00Z\" as " + layout + ": cannot parse \"1-01T00:00:00Z\" as \"01\""},
      {"2024-01-01 00:00:00Z", "parsing time \"2024-01-01 00:00:00Z\" as " + layout + ": cannot parse \" 00:00:00Z\" as \"T\""},
      {"2024-01-01T00:00:00", "parsing time \"2024-01-01T00:00:00\" as " + layout + ": cannot parse \"\" as \"Z07:00\""},
      {"2024-01-01T24:00:00Z", "parsing time \"2024-01-01T24:00:00Z\": hour out of range"},
      {"2023-02-29T00:00:00Z", "parsing time \"2023-02-29T00:00:00Z\": day out of range"},
      {"2024-01-01T00:00:00Zjunk", "parsing time \"2024-01-01T00:00:00Zjunk\": extra text: \"junk\""},
  };
  for (const Case& c : cases) {
    std::optional<std::string> err = rfc3339_error(c.in);
    EXPECT_EQ(err.value_or(""), c.want) << c.in;
  }
}

TEST(CodecHostileTest, InvalidUtf8ReadsAsGoReadsIt) {
  // encoding/json (kube-apiserver's decoder) replaces each bad byte with U+FFFD.
  Result<Object> o = decode_object("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"n\","
                                   "\"annotations\":{\"a\":\"x\xff\xc3y\xe2\x82\xac\"}}}");
  ASSERT_TRUE(o.has_value()) << o.error().message();
  EXPECT_EQ(meta_of(*o).annotations.at("a"), "x\xEF\xBF\xBD\xEF\xBF\xBDy\xe2\x82\xac");
  EXPECT_TRUE(valid_utf8("plain \xe2\x82\xac"));
  EXPECT_FALSE(valid_utf8("\xed\xa0\x80"));  // a surrogate
  EXPECT_EQ(coerce_utf8("\xed\xa0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(coerce_utf8("\xf0\x9f\x98"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  // go-yaml's reader refuses it.
  Result<std::string> y = yaml_to_json("a: \"x\xffy\"\n");
  ASSERT_FALSE(y.has_value());
  EXPECT_EQ(y.error().message(), "error converting YAML to JSON: yaml: invalid leading UTF-8 octet");
  // Bad bytes that begin like the U+FFFD replacing them (found by fuzz_json: the
  // reader ran past the end of the text).
  y = yaml_to_json("a: \xef\xbf");
  ASSERT_FALSE(y.has_value());
  EXPECT_EQ(y.error().message(), "error converting YAML to JSON: yaml: incomplete UTF-8 octet sequence");
  y = yaml_to_json("a: \xef\xbf!");
  ASSERT_FALSE(y.has_value());
  EXPECT_EQ(y.error().message(), "error converting YAML to JSON: yaml: invalid trailing UTF-8 octet");
}

}  // namespace
}  // namespace draplane::api
