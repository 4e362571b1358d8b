// libFuzzer target for Kubernetes protobuf request bodies (protobuf_body.h):
// the envelope and the Namespace reader; the JSON written for a readable body
// must parse.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "server/json_util.h"
#include "server/protobuf_body.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  auto pb = draplane::server::decode_protobuf_body(body);
  if (pb.has_value() && pb->supported) {
    if (!draplane::server::parse_json(pb->json).has_value()) __builtin_trap();
  }
  return 0;
}
