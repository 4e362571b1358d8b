#include "common/result.h"

namespace draplane {

std::string_view code_name(Code code) {
  switch (code) {
    case Code::kOk: return "OK";
    case Code::kInvalid: return "Invalid";
    case Code::kBadRequest: return "BadRequest";
    case Code::kNotFound: return "NotFound";
    case Code::kAlreadyExists: return "AlreadyExists";
    case Code::kConflict: return "Conflict";
    case Code::kForbidden: return "Forbidden";
    case Code::kUnauthorized: return "Unauthorized";
    case Code::kGone: return "Gone";
    case Code::kFailedPrecondition: return "FailedPrecondition";
    case Code::kUnavailable: return "Unavailable";
    case Code::kDeadlineExceeded: return "DeadlineExceeded";
    case Code::kInternal: return "Internal";
  }
  return "Unknown";
}

std::string Status::to_string() const {
  if (ok()) return "OK";
  std::string out(code_name(code_));
  out += ": ";
  out += message_;
  return out;
}

}  // namespace draplane
