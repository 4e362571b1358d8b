// decode_tree / decode_tree_lenient / encode_tree agree with the text codec on
// every field (the full_* manifests), on strict and lenient errors, and keep the
// text reader's encoding check.
#include "api/codec_tree.h"

#include <gtest/gtest.h>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "codec_testdata.h"

namespace draplane::api {
namespace {

// As the API server parses a request body.
rapidjson::Document server_parse(const std::string& text) {
  rapidjson::Document d;
  d.Parse<rapidjson::kParseFullPrecisionFlag>(text.data(), text.size());
  EXPECT_FALSE(d.HasParseError()) << text;
  return d;
}

std::string text_of(const rapidjson::Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

std::vector<Object> full_objects() {
  std::vector<Object> out;
  for (const char* file : {"full_claim.yaml", "full_slice.yaml", "full_misc.yaml"}) {
    for (DecodedDocument& doc : decode_stream(read_testdata(file))) {
      EXPECT_TRUE(doc.object.has_value()) << file << ": " << doc.object.error().message();
      if (doc.object.has_value()) out.push_back(std::move(doc.object).value());
    }
  }
  EXPECT_GE(out.size(), 5u);
  return out;
}

TEST(CodecTreeTest, EncodeTreeIsTheParsedText) {
  for (const Object& obj : full_objects()) {
    SCOPED_TRACE(std::string(kind_of(obj)));
    rapidjson::Document tree;
    tree.SetArray();  // replaced, not appended to
    encode_tree(obj, tree);
    rapidjson::Document parsed = server_parse(to_json(obj));
    EXPECT_TRUE(tree == parsed);
    EXPECT_EQ(text_of(tree), text_of(parsed));
  }
}

TEST(CodecTreeTest, DecodeTreeIsDecodeOfTheText) {
  for (const Object& obj : full_objects()) {
    SCOPED_TRACE(std::string(kind_of(obj)));
    rapidjson::Document tree = server_parse(to_json(obj));
    Result<Object> direct = decode_tree(tree);
    ASSERT_TRUE(direct.has_value()) << direct.error().message();
    EXPECT_TRUE(*direct == obj);
    Result<LenientDecode> lenient = decode_tree_lenient(tree);
    ASSERT_TRUE(lenient.has_value()) << lenient.error().message();
    EXPECT_TRUE(lenient->object == obj);
    EXPECT_TRUE(lenient->dropped.empty());
  }
}

TEST(CodecTreeTest, NumbersCrossAsTheServerSeesThem) {
  // A Pod keeps fields it does not model as written; a double must come back as
  // the text the server's writer prints for it, and integers as integers.
  const std::string text =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","generation":7},)"
      R"("spec":{"containers":[{"name":"c","image":"i"}],"x-ratio":1.5,"x-big":12345678901234567890,)"
      R"("x-neg":-42,"x-exp":1e3}})";
  rapidjson::Document tree = server_parse(text);
  Result<Object> direct = decode_tree(tree);
  ASSERT_TRUE(direct.has_value()) << direct.error().message();
  Result<Object> via_text = decode_object(text_of(tree));
  ASSERT_TRUE(via_text.has_value()) << via_text.error().message();
  EXPECT_TRUE(*direct == *via_text);
  rapidjson::Document back;
  encode_tree(*direct, back);
  EXPECT_TRUE(back == server_parse(to_json(*direct)));
  EXPECT_EQ(back["metadata"]["generation"].GetInt64(), 7);
}

TEST(CodecTreeTest, ErrorsMatchTheTextCodec) {
  const std::vector<std::string> bodies = {
      // unknown field in a strict kind
      R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c"},)"
      R"("spec":{"devices":{"requests":[{"name":"g","exactly":{"deviceClassName":"x","cout":2}}]}}})",
      // a type error
      R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c"},)"
      R"("spec":{"devices":{"requests":[{"name":"g","exactly":{"deviceClassName":"x","count":"two"}}]}}})",
      // no kind, a List, an unknown kind, a retired version
      R"({"apiVersion":"v1","metadata":{"name":"c"}})",
      R"({"apiVersion":"v1","kind":"List","items":[]})",
      R"({"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"c"}})",
      R"({"apiVersion":"resource.k8s.io/v1alpha2","kind":"ResourceClaim","metadata":{"name":"c"}})",
  };
  for (const std::string& body : bodies) {
    SCOPED_TRACE(body);
    rapidjson::Document tree = server_parse(body);
    Result<Object> direct = decode_tree(tree);
    Result<Object> via_text = decode_object(text_of(tree));
    ASSERT_FALSE(via_text.has_value());
    ASSERT_FALSE(direct.has_value());
    EXPECT_EQ(direct.error().message(), via_text.error().message());
    Result<LenientDecode> lenient = decode_tree_lenient(tree);
    Result<LenientDecode> lenient_text = decode_object_lenient(text_of(tree));
    ASSERT_EQ(lenient.has_value(), lenient_text.has_value());
    if (lenient.has_value()) {
      EXPECT_TRUE(lenient->object == lenient_text->object);
      EXPECT_EQ(lenient->dropped, lenient_text->dropped);
    } else {
      EXPECT_EQ(lenient.error().message(), lenient_text.error().message());
    }
  }
}

TEST(CodecTreeTest, LenientListsDroppedFields) {
  rapidjson::Document tree = server_parse(
      R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"c"},"spec":{"selectorz":[]}})");
  Result<LenientDecode> lenient = decode_tree_lenient(tree);
  ASSERT_TRUE(lenient.has_value()) << lenient.error().message();
  ASSERT_EQ(lenient->dropped.size(), 1u);
  EXPECT_EQ(lenient->dropped[0], R"(unknown field "spec.selectorz")");
  EXPECT_EQ(meta_of(lenient->object).name, "c");
}

TEST(CodecTreeTest, InvalidUtf8IsReadAsTheTextReaderReadsIt) {
  rapidjson::Document tree = server_parse(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n"}})");
  const char bad[] = {'x', static_cast<char>(0xC3), '(', 0};  // a lead byte without its continuation
  tree["metadata"]["name"].SetString(bad, 3, tree.GetAllocator());
  // Both read the bad byte as U+FFFD, as Go's encoding/json does.
  Result<Object> direct = decode_tree(tree);
  ASSERT_TRUE(direct.has_value()) << direct.error().message();
  EXPECT_EQ(meta_of(*direct).name, "x\xEF\xBF\xBD(");
  Result<Object> text = decode_object(text_of(tree));
  ASSERT_TRUE(text.has_value()) << text.error().message();
  EXPECT_EQ(meta_of(*text).name, "x\xEF\xBF\xBD(");
  // Valid multi-byte text passes.
  tree["metadata"]["name"].SetString("gr\xC3\xBC\xC3\x9F", tree.GetAllocator());
  Result<Object> ok = decode_tree(tree);
  ASSERT_TRUE(ok.has_value()) << ok.error().message();
  EXPECT_EQ(meta_of(*ok).name, "gr\xC3\xBC\xC3\x9F");
}

}  // namespace
}  // namespace draplane::api
