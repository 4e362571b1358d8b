#include "server/api_error.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace draplane::server {

ApiError from_code(Code code, std::string message) {
  ApiError e;
  e.message = std::move(message);
  switch (code) {
    case Code::kInvalid: e.http = 422; e.reason = "Invalid"; break;
    case Code::kBadRequest: e.http = 400; e.reason = "BadRequest"; break;
    case Code::kNotFound: e.http = 404; e.reason = "NotFound"; break;
    case Code::kAlreadyExists: e.http = 409; e.reason = "AlreadyExists"; break;
    case Code::kConflict: e.http = 409; e.reason = "Conflict"; break;
    case Code::kForbidden: e.http = 403; e.reason = "Forbidden"; break;
    case Code::kUnauthorized: e.http = 401; e.reason = "Unauthorized"; break;
    case Code::kGone: e.http = 410; e.reason = "Expired"; break;
    case Code::kUnavailable: e.http = 503; e.reason = "ServiceUnavailable"; break;
    case Code::kDeadlineExceeded: e.http = 504; e.reason = "Timeout"; break;
    case Code::kFailedPrecondition: e.http = 409; e.reason = "Conflict"; break;
    default: e.http = 500; e.reason = "InternalError"; break;
  }
  return e;
}

namespace {
std::string cause_reason(api::FieldErrorType t) {
  switch (t) {
    case api::FieldErrorType::kNotFound: return "FieldValueNotFound";
    case api::FieldErrorType::kRequired: return "FieldValueRequired";
    case api::FieldErrorType::kDuplicate: return "FieldValueDuplicate";
    case api::FieldErrorType::kInvalid: return "FieldValueInvalid";
    case api::FieldErrorType::kNotSupported: return "FieldValueNotSupported";
    case api::FieldErrorType::kForbidden: return "FieldValueForbidden";
    case api::FieldErrorType::kTooLong: return "FieldValueTooLong";
    case api::FieldErrorType::kTooMany: return "FieldValueTooMany";
    case api::FieldErrorType::kInternal: return "InternalError";
  }
  return "FieldValueInvalid";
}
}  // namespace

std::string status_json(const ApiError& e) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("kind"); w.String("Status");
  w.Key("apiVersion"); w.String("v1");
  w.Key("metadata"); w.StartObject(); w.EndObject();
  w.Key("status"); w.String("Failure");
  w.Key("message"); w.String(e.message.c_str(), static_cast<rapidjson::SizeType>(e.message.size()));
  if (!e.reason.empty()) { w.Key("reason"); w.String(e.reason.c_str()); }  // omitempty, as metav1.Status
  if (!e.name.empty() || !e.kind.empty() || !e.causes.empty() || !e.other_causes.empty() || e.retry_after > 0) {
    w.Key("details");
    w.StartObject();
    if (!e.name.empty()) { w.Key("name"); w.String(e.name.c_str()); }
    if (!e.group.empty()) { w.Key("group"); w.String(e.group.c_str()); }
    if (!e.kind.empty()) { w.Key("kind"); w.String(e.kind.c_str()); }
    if (!e.causes.empty() || !e.other_causes.empty()) {
      w.Key("causes");
      w.StartArray();
      for (const auto& c : e.other_causes) {
        w.StartObject();
        w.Key("reason"); w.String(c.reason.c_str(), static_cast<rapidjson::SizeType>(c.reason.size()));
        w.Key("message"); w.String(c.message.c_str(), static_cast<rapidjson::SizeType>(c.message.size()));
        if (!c.field.empty()) {  // omitempty
          w.Key("field"); w.String(c.field.c_str(), static_cast<rapidjson::SizeType>(c.field.size()));
        }
        w.EndObject();
      }
      for (const auto& c : e.causes) {
        w.StartObject();
        w.Key("reason"); w.String(cause_reason(c.type).c_str());
        std::string body = c.body();
        w.Key("message"); w.String(body.c_str(), static_cast<rapidjson::SizeType>(body.size()));
        w.Key("field"); w.String(c.field.c_str());
        w.EndObject();
      }
      w.EndArray();
    }
    if (e.retry_after > 0) { w.Key("retryAfterSeconds"); w.Int(e.retry_after); }
    w.EndObject();
  }
  w.Key("code"); w.Int(e.http);
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

std::string success_status_json(const std::string& name, const ResourceInfo& r) {
  std::string out = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":")";
  out += name + R"(","group":")" + r.group + R"(","kind":")" + r.resource + R"("}})";
  return out;
}

std::string qualified_resource(const ResourceInfo& r) {
  return r.group.empty() ? r.resource : r.resource + "." + r.group;
}

namespace {
ApiError with_details(ApiError e, const ResourceInfo& r, const std::string& name) {
  e.name = name;
  e.group = r.group;
  e.kind = r.resource;
  return e;
}
}  // namespace

ApiError not_found(const ResourceInfo& r, const std::string& name) {
  return with_details(from_code(Code::kNotFound, qualified_resource(r) + " \"" + name + "\" not found"), r, name);
}

ApiError already_exists(const ResourceInfo& r, const std::string& name) {
  return with_details(from_code(Code::kAlreadyExists, qualified_resource(r) + " \"" + name + "\" already exists"), r,
                      name);
}

ApiError conflict(const ResourceInfo& r, const std::string& name, const std::string& why) {
  return with_details(
      from_code(Code::kConflict, "Operation cannot be fulfilled on " + qualified_resource(r) + " \"" + name + "\": " + why),
      r, name);
}

ApiError invalid(const ResourceInfo& r, const std::string& name, api::FieldErrorList errors) {
  ApiError e = from_code(Code::kInvalid, api::invalid_object_message(r.kind, r.group, name, errors));
  e.name = name;
  e.group = r.group;
  e.kind = r.kind;
  e.causes = std::move(errors);
  return e;
}

ApiError forbidden(const ResourceInfo& r, const std::string& name, const std::string& why) {
  std::string what = qualified_resource(r) + (name.empty() ? "" : " \"" + name + "\"");
  return with_details(from_code(Code::kForbidden, what + " is forbidden: " + why), r, name);
}

ApiError bad_request(std::string message) { return from_code(Code::kBadRequest, std::move(message)); }

ApiError method_not_allowed() {
  ApiError e = from_code(Code::kBadRequest, "the server does not allow this method on the requested resource");
  e.http = 405;
  e.reason = "MethodNotAllowed";
  return e;
}

}  // namespace draplane::server
