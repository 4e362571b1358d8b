// base64 as Go's encoding/base64 writes and reads it: StdEncoding (padded,
// "+/") for kubeconfig data, RawURLEncoding (unpadded, "-_") for list
// continue tokens.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace draplane::common {

enum class Base64 { kStd, kRawUrl };

std::string base64_encode(std::string_view in, Base64 encoding = Base64::kStd);

// Go's Encoding.DecodeString: CR and LF are skipped; an error is a kBadRequest
// with Go's CorruptInputError text, "illegal base64 data at input byte N".
Result<std::string> base64_decode(std::string_view in, Base64 encoding = Base64::kStd);

}  // namespace draplane::common
