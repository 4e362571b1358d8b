// libFuzzer target for JSON request bodies: the codec's text path (every kind,
// strict and lenient, then defaults, validation and both encoders) and the API
// server's path (its RapidJSON reader, the tree decoder, the tree encoder).
// Any crash, sanitizer report, hang or unbounded memory is a bug; a reproducer
// goes into tests/fuzz/regressions/json/ and is replayed before fuzzing.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "api/codec.h"
#include "api/codec_tree.h"
#include "api/defaults.h"
#include "api/validation.h"
#include "server/json_util.h"

namespace {

void exercise(draplane::api::Object& obj) {
  draplane::api::apply_defaults(obj, draplane::api::DefaultOptions{"2024-01-01T00:00:00Z"});
  (void)draplane::api::validate(obj, draplane::api::ValidationOptions{});
  std::string json = draplane::api::to_json(obj);
  (void)draplane::api::to_yaml(obj);
  // The encoder's output always reads back.
  if (!draplane::api::decode_object(json).has_value()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (auto& doc : draplane::api::decode_stream(text)) {
    if (doc.object.has_value()) exercise(*doc.object);
  }
  auto lenient = draplane::api::decode_object_lenient(text);
  if (lenient.has_value()) exercise(lenient->object);
  auto tree = draplane::server::parse_json(text);
  if (tree.has_value()) {
    (void)draplane::server::to_string(*tree);
    auto obj = draplane::api::decode_tree_lenient(*tree);
    if (obj.has_value()) {
      draplane::server::Json out;
      draplane::api::encode_tree(obj->object, out);
      (void)draplane::server::to_string(out);
    }
    (void)draplane::api::decode_tree(*tree);
  }
  return 0;
}
