// libFuzzer target for the CEL engine: parses, checks and evaluates arbitrary
// input against a fixed device, in the DRA environment (compile + eval) and as a
// general expression (eval_to_string). Any crash, sanitizer report or hang is a
// bug; a reproducer goes into tests/cel/fuzz_regressions/ and is replayed by the
// `cel_fuzz` CTest before fuzzing.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cel/cel.h"

namespace {

const draplane::api::Device& device() {
  static const draplane::api::Device d = [] {
    draplane::api::Device x;
    x.attributes["model"].string_ = "H100";
    x.attributes["index"].int_ = 3;
    x.attributes["mig"].bool_ = true;
    x.attributes["driverVersion"].version = "550.1.0";
    x.attributes["k8s.io/pcieRoot"].string_ = "pci0";
    x.capacity["memory"].value = *draplane::api::Quantity::parse("80Gi");
    return x;
  }();
  return d;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > draplane::cel::kMaxExpressionLength) return 0;
  std::string_view expr(reinterpret_cast<const char*>(data), size);
  static const draplane::cel::DeviceBinding binding("gpu.example.com", device());
  auto program = draplane::cel::compile(expr);
  if (program) {
    (void)(*program)->eval(binding);
    (void)draplane::cel::check_selector(expr);
  }
  (void)draplane::cel::eval_to_string(expr, &device(), "gpu.example.com");
  return 0;
}
