// RapidJSON tree <-> JsonValue without text. Numbers cross as the text reader
// and the server's parser would see them: a RapidJSON number becomes the text
// rapidjson::Writer prints for it, and JsonValue number text becomes the value
// RapidJSON's full-precision reader makes of it.
#include "api/codec_tree.h"

#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <charconv>
#include <string>
#include <vector>

#include "api/decode_limits.h"
#include "api/internal/decoder.h"
#include "api/internal/encoder.h"
#include "api/internal/json_value.h"

namespace draplane::api {
namespace {

using internal::JsonValue;
using Alloc = rapidjson::Document::AllocatorType;

// The text reader makes invalid UTF-8 valid as Go does (U+FFFD a bad byte); so
// must this: the server's reader passes strings through as they came.
std::string text_of(const char* s, size_t n) {
  size_t i = 0;
  while (i < n && static_cast<unsigned char>(s[i]) < 0x80) ++i;
  if (i == n) return std::string(s, n);
  return coerce_utf8(std::string_view(s, n));
}

std::string number_text(const rapidjson::Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

Status from_tree(const rapidjson::Value& v, JsonValue& out) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      out = JsonValue::null();
      return Status();
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      out = JsonValue::from_bool(v.GetBool());
      return Status();
    case rapidjson::kNumberType:
      out = JsonValue::number(number_text(v));
      return Status();
    case rapidjson::kStringType:
      out = JsonValue::string(text_of(v.GetString(), v.GetStringLength()));
      return Status();
    case rapidjson::kArrayType:
      out = JsonValue::array();
      out.items.resize(v.Size());
      for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
        if (Status st = from_tree(v[i], out.items[i]); !st.ok()) return st;
      }
      return Status();
    case rapidjson::kObjectType:
      out = JsonValue::object();
      out.members.reserve(v.MemberCount());
      for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
        auto& member = out.members.emplace_back(text_of(m->name.GetString(), m->name.GetStringLength()),
                                                JsonValue());
        if (Status st = from_tree(m->value, member.second); !st.ok()) return st;
      }
      return Status();
  }
  return Status();
}

// Receives the one number event of reading a number's text.
struct NumberHandler : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, NumberHandler> {
  rapidjson::Value* out = nullptr;
  bool Int(int i) { return out->SetInt(i), true; }
  bool Uint(unsigned u) { return out->SetUint(u), true; }
  bool Int64(int64_t i) { return out->SetInt64(i), true; }
  bool Uint64(uint64_t u) { return out->SetUint64(u), true; }
  bool Double(double d) { return out->SetDouble(d), true; }
  bool Default() { return false; }
};

void set_number(const std::string& text, rapidjson::Value& out) {
  // Plain integers (what the encoder writes for every integer field) directly;
  // GenericValue(int64_t) sets the same type flags the reader's Int/Int64 do.
  bool plain = !text.empty() && text.size() <= 18;
  for (size_t i = text[0] == '-' ? 1 : 0; plain && i < text.size(); ++i) plain = text[i] >= '0' && text[i] <= '9';
  if (plain && text != "-") {
    int64_t n = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec == std::errc() && end == text.data() + text.size()) {
      out = rapidjson::Value(n);
      return;
    }
  }
  NumberHandler h;
  h.out = &out;
  rapidjson::StringStream in(text.c_str());
  rapidjson::Reader reader;
  if (!reader.Parse<rapidjson::kParseFullPrecisionFlag>(in, h)) out.SetNull();  // the encoder writes only numbers here
}

void to_tree(const JsonValue& v, rapidjson::Value& out, Alloc& a) {
  switch (v.type) {
    case JsonValue::Type::kNull:
      out.SetNull();
      return;
    case JsonValue::Type::kBool:
      out.SetBool(v.boolean);
      return;
    case JsonValue::Type::kNumber:
      set_number(v.text, out);
      return;
    case JsonValue::Type::kString:
      out.SetString(v.text.data(), static_cast<rapidjson::SizeType>(v.text.size()), a);
      return;
    case JsonValue::Type::kArray:
      out.SetArray();
      out.Reserve(static_cast<rapidjson::SizeType>(v.items.size()), a);
      for (const JsonValue& item : v.items) {
        rapidjson::Value x;
        to_tree(item, x, a);
        out.PushBack(x, a);
      }
      return;
    case JsonValue::Type::kObject:
      out.SetObject();
      for (const auto& [key, value] : v.members) {
        rapidjson::Value k(key.data(), static_cast<rapidjson::SizeType>(key.size()), a);
        rapidjson::Value x;
        to_tree(value, x, a);
        out.AddMember(k, x, a);
      }
      return;
  }
}

}  // namespace

Result<Object> decode_tree(const rapidjson::Value& value) {
  JsonValue root;
  if (Status st = from_tree(value, root); !st.ok()) return st;
  return internal::decode_single(std::move(root), nullptr);
}

Result<LenientDecode> decode_tree_lenient(const rapidjson::Value& value) {
  JsonValue root;
  if (Status st = from_tree(value, root); !st.ok()) return st;
  LenientDecode out;
  ASSIGN_OR_RETURN(out.object, internal::decode_single(std::move(root), &out.dropped));
  return out;
}

void encode_tree(const Object& object, rapidjson::Document& out) {
  rapidjson::Document fresh;
  to_tree(internal::encode_object(object), fresh, fresh.GetAllocator());
  out.Swap(fresh);
}

}  // namespace draplane::api
