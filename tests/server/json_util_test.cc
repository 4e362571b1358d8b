#include "server/json_util.h"

#include <gtest/gtest.h>

namespace draplane::server {
namespace {

std::string apply(const char* target, const char* patch, const std::string& kind) {
  Json t = std::move(parse_json(target)).value();
  Json p = std::move(parse_json(patch)).value();
  if (kind == "merge") merge_patch(t, p, t.GetAllocator());
  if (kind == "smp") strategic_merge_patch(t, p, t.GetAllocator());
  if (kind == "smp-atomic") strategic_merge_patch(t, p, t.GetAllocator(), true);
  if (kind == "json") {
    Status st = json_patch(t, p, t.GetAllocator());
    if (!st.ok()) return st.to_string();
  }
  return to_string(t);
}

// Every control character is escaped when written (RapidJSON's SSE2 scan,
// now off, let 0x1A-0x1F through raw) and a raw one is refused when read.
TEST(JsonText, ControlCharactersAreEscapedAndRefusedRaw) {
  std::string text = "0123456789abcdef0123456789abcdef";
  for (char c = 1; c < 0x20; ++c) text.push_back(c);
  text += "0123456789abcdef0123456789abcdef";
  Json d(rapidjson::kObjectType);
  d.AddMember("s", JsonValue(text.data(), static_cast<rapidjson::SizeType>(text.size()), d.GetAllocator()),
              d.GetAllocator());
  const std::string out = to_string(d);
  for (char c = 0; c < 0x20; ++c) EXPECT_EQ(out.find(c), std::string::npos) << "raw byte " << int(c);
  EXPECT_TRUE(out.find("\\u001a") != std::string::npos || out.find("\\u001A") != std::string::npos) << out;
  auto back = parse_json(out);
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_EQ(std::string((*back)["s"].GetString(), (*back)["s"].GetStringLength()), text);
  EXPECT_FALSE(parse_json("{\"s\":\"0123456789abcdef0123456789abcdef\x1a"
                          "0123456789abcdef\"}")
                   .has_value());
}

TEST(JsonPatch, Formats) {
  struct Case {
    const char *name, *kind, *target, *patch, *want;
  };
  const Case cases[] = {
      {"merge replaces and deletes", "merge", R"({"a":1,"b":{"c":2,"d":3}})", R"({"a":null,"b":{"c":5}})",
       R"({"b":{"c":5,"d":3}})"},
      {"merge replaces lists", "merge", R"({"l":[1,2]})", R"({"l":[3]})", R"({"l":[3]})"},
      {"json add/replace/remove", "json", R"({"a":[1,3],"b":1})",
       R"([{"op":"add","path":"/a/1","value":2},{"op":"replace","path":"/b","value":7},{"op":"remove","path":"/a/0"}])",
       R"({"a":[2,3],"b":7})"},
      {"json test fails", "json", R"({"a":1})", R"([{"op":"test","path":"/a","value":2}])",
       R"(Invalid: json patch test operation at "/a": test failed)"},
      {"json missing path", "json", R"({"a":1})", R"([{"op":"remove","path":"/x"}])",
       R"(Invalid: json patch remove operation at "/x": path does not exist)"},
      {"smp merges lists by name", "smp", R"({"c":[{"name":"a","image":"x"},{"name":"b","image":"y"}]})",
       R"({"$setElementOrder/c":[{"name":"a"},{"name":"b"}],"c":[{"name":"b","image":"z"}]})",
       R"({"c":[{"name":"a","image":"x"},{"name":"b","image":"z"}]})"},
      {"smp delete directive", "smp", R"({"c":[{"name":"a"},{"name":"b"}]})", R"({"c":[{"name":"a","$patch":"delete"}]})",
       R"({"c":[{"name":"b"}]})"},
      {"smp atomic lists are replaced", "smp-atomic",
       R"({"spec":{"r":[{"name":"a","mode":"ExactCount"},{"name":"b"}],"m":{"x":1}}})",
       R"({"$setElementOrder/r":[{"name":"a"}],"spec":{"r":[{"name":"a","count":2}],"m":{"y":2}}})",
       R"({"spec":{"r":[{"name":"a","count":2}],"m":{"x":1,"y":2}}})"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(apply(c.target, c.patch, c.kind), c.want);
  }
}

TEST(JsonPatch, ParseErrorIsBadRequest) {
  auto r = parse_json("{\"a\":");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Code::kBadRequest);
}

}  // namespace
}  // namespace draplane::server
