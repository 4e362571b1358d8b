// Typed decoding: the Decoder's messages, the scalar readers, and the one-off
// hooks of the field tables. Structs are read by the generic read() of
// decoder.h walking their field tables (fields_*.h).
#include <algorithm>
#include <limits>

#include "api/decode_limits.h"
#include "api/internal/decoder.h"

namespace draplane::api::internal {

void Decoder::type_error(const FieldPath& path, std::string_view expected, const JsonValue& got) {
  std::string msg = path + ": expected " + std::string(expected) + ", got " +
                    std::string(type_name(got.type));
  if (got.type == JsonValue::Type::kString) {
    msg += " \"" + got.text + "\"";
  } else if (got.type == JsonValue::Type::kNumber) {
    msg += " " + got.text;
  } else if (got.type == JsonValue::Type::kBool) {
    msg += got.boolean ? " true" : " false";
  }
  fail(std::move(msg));
}

Status Decoder::status() const {
  if (error_) return *error_;
  if (strict_.empty()) return Status();
  std::string msg = "strict decoding error: ";
  for (size_t i = 0; i < strict_.size(); ++i) {
    if (i > 0) msg += ", ";
    msg += strict_[i];
  }
  return Status(Code::kBadRequest, msg);
}

// ---------------------------------------------------------------- scalars

void read(Decoder& d, const JsonValue& v, const FieldPath& path, std::string& out) {
  if (v.is_null()) return;
  if (!v.is_string()) {
    if (!v.plain.empty()) {
      out = v.plain;
      return;
    }
    return d.type_error(path, "string", v);
  }
  out = v.text;
}

namespace {
bool parse_integer(const std::string& text, int64_t& out) {
  if (text.empty() || text.find_first_of(".eE") != std::string::npos) return false;
  size_t i = text[0] == '-' ? 1 : 0;
  if (i >= text.size()) return false;
  __int128 v = 0;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    v = v * 10 + (text[i] - '0');
    if (v > static_cast<__int128>(std::numeric_limits<int64_t>::max()) + 1) return false;
  }
  if (text[0] == '-') v = -v;
  if (v > std::numeric_limits<int64_t>::max()) return false;
  out = static_cast<int64_t>(v);
  return true;
}
}  // namespace

void read(Decoder& d, const JsonValue& v, const FieldPath& path, int64_t& out) {
  if (v.is_null()) return;
  int64_t value = 0;
  if (v.type != JsonValue::Type::kNumber || !parse_integer(v.text, value)) {
    return d.type_error(path, "integer", v);
  }
  out = value;
}

void read(Decoder& d, const JsonValue& v, const FieldPath& path, int32_t& out) {
  if (v.is_null()) return;
  int64_t value = 0;
  if (v.type != JsonValue::Type::kNumber || !parse_integer(v.text, value) ||
      value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max()) {
    return d.type_error(path, "32-bit integer", v);
  }
  out = static_cast<int32_t>(value);
}

void read(Decoder& d, const JsonValue& v, const FieldPath& path, bool& out) {
  if (v.is_null()) return;
  if (v.type != JsonValue::Type::kBool) return d.type_error(path, "boolean", v);
  out = v.boolean;
}

void read(Decoder& d, const JsonValue& v, const FieldPath& path, Quantity& out) {
  if (v.is_null()) {
    out = Quantity();
    return;
  }
  if (v.type != JsonValue::Type::kString && v.type != JsonValue::Type::kNumber) {
    return d.type_error(path, "quantity (string or number)", v);
  }
  // Like Quantity.UnmarshalJSON: surrounding whitespace is ignored.
  std::string_view text = v.text;
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\n' ||
                           text.front() == '\r')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\n' ||
                           text.back() == '\r')) {
    text.remove_suffix(1);
  }
  Result<Quantity> q = Quantity::parse(text);
  if (!q.has_value()) return d.fail(path + ": " + q.error().message());
  out = std::move(q).value();
}

void read_time(Decoder& d, const JsonValue& v, const FieldPath& path, std::string& out) {
  if (v.is_null()) {
    out.clear();
    return;
  }
  if (!v.is_string()) return d.type_error(path, "string", v);
  // "" is unset here (Go refuses it): draplane's encoder writes a condition's
  // empty lastTransitionTime so, and stored objects must keep decoding.
  if (v.text.empty()) {
    out.clear();
    return;
  }
  if (std::optional<std::string> err = rfc3339_error(v.text)) return d.fail(path + ": " + *err);
  out = v.text;
}

void read(Decoder& d, const JsonValue& v, const FieldPath& path, RawJson& out) {
  out.text = v.is_null() ? std::string() : canonical_json_text(v);
}

// ---------------------------------------------------------------- hooks

void read_removed_claim_source(Decoder& d, const JsonValue& x, const FieldPath& p,
                               const FieldPath& c, PodResourceClaim&) {
  // The v1alpha2-era ClaimSource: say exactly what to write instead.
  std::string hint;
  const JsonValue* claim = x.is_object() ? x.find("resourceClaimName") : nullptr;
  const JsonValue* tmpl = x.is_object() ? x.find("resourceClaimTemplateName") : nullptr;
  std::string base = p.empty() ? std::string() : p + ".";
  if (claim && claim->is_string()) {
    hint = "write " + base + "resourceClaimName: " + claim->text;
  } else if (tmpl && tmpl->is_string()) {
    hint = "write " + base + "resourceClaimTemplateName: " + tmpl->text;
  } else {
    hint = "write " + base + "resourceClaimName or " + base + "resourceClaimTemplateName";
  }
  d.fail(c + ": field was removed in Kubernetes 1.31 (pod claim sources are gone since "
             "resource.k8s.io/v1alpha3): " + hint + " directly on the pod claim instead of "
             "under source");
}

}  // namespace draplane::api::internal
