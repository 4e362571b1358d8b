// libFuzzer target for YAML bodies: the codec's YAML stream reader (every kind)
// and the API server's YAML-to-JSON conversion, whose JSON it then reads as the
// server does. Alias bombs and deep nesting must fail with an error within
// the fuzzer's memory limit (-rss_limit_mb).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "api/codec.h"
#include "server/json_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (auto& doc : draplane::api::decode_stream(text)) {
    if (doc.object.has_value()) {
      std::string yaml = draplane::api::to_yaml(*doc.object);
      // The encoder's output always reads back.
      if (!draplane::api::decode_object(yaml).has_value()) __builtin_trap();
    }
  }
  auto json = draplane::api::yaml_to_json(text);
  if (json.has_value()) {
    // The conversion writes JSON the server's reader takes.
    if (!draplane::server::parse_json(*json).has_value()) __builtin_trap();
  }
  return 0;
}
