// The generated field tables: openapi_types.json (scripts/gen_openapi_types.py,
// from the Kubernetes API's Go types), embedded in the binary by the build
// (embed_text.cmake) and parsed once, on first use.
#include <rapidjson/document.h>

#include <cstdio>
#include <cstdlib>

#include "server/openapi_schema.h"

namespace draplane::server::openapi {

// The text of openapi_types.json (generated at build time), a new copy.
std::string openapi_types_json();

namespace {

std::string member(const rapidjson::Value& v, const char* key) {
  auto it = v.FindMember(key);
  return it == v.MemberEnd() ? "" : std::string(it->value.GetString(), it->value.GetStringLength());
}

std::vector<std::string> strings(const rapidjson::Value& v, const char* key) {
  std::vector<std::string> out;
  auto it = v.FindMember(key);
  if (it == v.MemberEnd()) return out;
  for (const auto& s : it->value.GetArray()) out.emplace_back(s.GetString(), s.GetStringLength());
  return out;
}

Field field_of(const rapidjson::Value& f) {
  auto required = f.FindMember("required");
  return Field{member(f, "name"),
               member(f, "type"),
               member(f, "description"),
               required != f.MemberEnd() && required->value.GetBool(),
               strings(f, "enum"),
               member(f, "listType"),
               strings(f, "listMapKeys"),
               member(f, "mapType"),
               member(f, "patchStrategy"),
               member(f, "patchMergeKey")};
}

std::vector<Definition> parse() {
  rapidjson::Document doc;
  std::string text = openapi_types_json();
  doc.ParseInsitu(text.data());  // the copy is ours: no second copy of its strings
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("definitions")) {
    // Built in: only a broken build gets here.
    std::fprintf(stderr, "openapi_types.json does not parse at offset %zu\n", doc.GetErrorOffset());
    std::abort();
  }
  std::vector<Definition> out;
  for (const auto& d : doc["definitions"].GetArray()) {
    Definition def;
    def.name = member(d, "name");
    def.description = member(d, "description");
    def.map_type = member(d, "mapType");
    if (auto fields = d.FindMember("fields"); fields != d.MemberEnd()) {
      for (const auto& f : fields->value.GetArray()) def.fields.push_back(field_of(f));
    }
    out.push_back(std::move(def));
  }
  return out;
}

}  // namespace

const std::vector<Definition>& generated_definitions() {
  static const std::vector<Definition> kDefinitions = parse();
  return kDefinitions;
}

}  // namespace draplane::server::openapi
