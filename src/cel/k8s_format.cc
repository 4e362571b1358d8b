// The Kubernetes CEL format library: the named formats, their validations and
// the functions format.named(), format.<name>() and <format>.validate(). The
// name formats are apimachinery's checks, shared with API validation
// (api/validation_core.h).
#include "cel/k8s_format.h"

#include <array>
#include <utility>

#include "api/validation_core.h"
#include "cel/functions.h"
#include "cel/overload_adder.h"
#include "cel/url.h"
#include "common/civil_date.h"

namespace draplane::cel {

namespace format {

namespace {

using Errors = std::vector<std::string>;

bool alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z'); }
bool digit(char c) { return c >= '0' && c <= '9'; }

// apimachinery's maskTrailingDash for generateName prefixes: a trailing '-' and
// the character before it become "a". (Upstream slices without a length check
// and panics on "-"; here "-" is left as is and fails validation.)
std::string mask_trailing_dash(std::string_view s) {
  if (s.size() >= 2 && s.back() == '-') return std::string(s.substr(0, s.size() - 2)) + "a";
  return std::string(s);
}

Errors uri(std::string_view v) {
  Url u;
  std::string err;
  if (!url::parse_request_uri(v, u, err)) return {err};
  return {};
}
// (?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$
Errors uuid(std::string_view v) {
  auto hex = [](char c) { return digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); };
  const int groups[] = {8, 4, 4, 4, 12};
  size_t p = 0;
  for (int g = 0; g < 5; ++g) {
    if (g > 0 && p < v.size() && v[p] == '-') ++p;
    for (int k = 0; k < groups[g]; ++k, ++p) {
      if (p >= v.size() || !hex(v[p])) return {"does not match the UUID format"};
    }
  }
  if (p != v.size()) return {"does not match the UUID format"};
  return {};
}
// govalidator's Base64 regex: groups of four, the last one possibly padded.
Errors base64(std::string_view v) {
  auto b64 = [](char c) { return alnum(c) || c == '+' || c == '/'; };
  bool ok = !v.empty() && v.size() % 4 == 0;
  size_t pad = v.ends_with("==") ? 2 : v.ends_with("=") ? 1 : 0;
  for (size_t k = 0; ok && k < v.size() - pad; ++k) ok = b64(v[k]);
  if (!ok) return {"invalid base64"};
  return {};
}
// Go's time.Parse("2006-01-02", s).
bool is_date(std::string_view v) {
  if (v.size() != 10 || v[4] != '-' || v[7] != '-') return false;
  for (size_t k : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (!digit(v[k])) return false;
  }
  int y = (v[0] - '0') * 1000 + (v[1] - '0') * 100 + (v[2] - '0') * 10 + (v[3] - '0');
  int m = (v[5] - '0') * 10 + (v[6] - '0');
  int d = (v[8] - '0') * 10 + (v[9] - '0');
  if (m < 1 || m > 12 || d < 1) return false;
  return d <= common::days_in_month(y, m);
}
Errors date(std::string_view v) {
  if (!is_date(v)) return {"invalid date"};
  return {};
}
// kube-openapi strfmt.IsDateTime: split the lower-cased text at 't', a valid
// date before, and ^(\d\d):(\d\d):(\d\d)(.\d+)?(z|[+-]\d\d:\d\d)$ after, with
// hours <= 23 and minutes, seconds <= 59.
Errors datetime(std::string_view v) {
  const Errors bad = {"invalid datetime"};
  if (v.size() < 4) return bad;
  std::string low(v);
  for (char& c : low) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  size_t t = low.find('t');
  if (t == std::string::npos || !is_date(std::string_view(low).substr(0, t))) return bad;
  std::string_view r = std::string_view(low).substr(t + 1);
  r = r.substr(0, r.find('t'));  // strings.Split: only the second part counts
  if (r.size() < 9 || !digit(r[0]) || !digit(r[1]) || r[2] != ':' || !digit(r[3]) || !digit(r[4]) || r[5] != ':' ||
      !digit(r[6]) || !digit(r[7])) {
    return bad;
  }
  std::string_view tail = r.substr(8);
  size_t zone = 0;
  if (tail.ends_with("z")) {
    zone = 1;
  } else if (tail.size() >= 6) {
    std::string_view z = tail.substr(tail.size() - 6);
    if ((z[0] == '+' || z[0] == '-') && digit(z[1]) && digit(z[2]) && z[3] == ':' && digit(z[4]) && digit(z[5])) {
      zone = 6;
    }
  }
  if (zone == 0) return bad;
  std::string_view frac = tail.substr(0, tail.size() - zone);
  if (!frac.empty()) {
    if (frac.size() < 2 || frac[0] == '\n') return bad;
    for (char c : frac.substr(1)) {
      if (!digit(c)) return bad;
    }
  }
  if (r.substr(0, 2) > "23" || r.substr(3, 2) > "59" || r.substr(6, 2) > "59") return bad;
  return {};
}

const std::vector<NamedFormat> kFormats = {
    {"dns1123Label", "DNS1123Label", [](std::string_view s) { return api::vcore::dns1123_label_errors(s); }},
    {"dns1123Subdomain", "DNS1123Subdomain", [](std::string_view s) { return api::vcore::dns1123_subdomain_errors(s); }},
    {"dns1035Label", "DNS1035Label", [](std::string_view s) { return api::vcore::dns1035_label_errors(s); }},
    {"qualifiedName", "QualifiedName", [](std::string_view s) { return api::vcore::qualified_name_errors(s); }},
    {"dns1123LabelPrefix", "DNS1123LabelPrefix",
     [](std::string_view s) { return api::vcore::dns1123_label_errors(mask_trailing_dash(s)); }},
    {"dns1123SubdomainPrefix", "DNS1123SubdomainPrefix",
     [](std::string_view s) { return api::vcore::dns1123_subdomain_errors(mask_trailing_dash(s)); }},
    {"dns1035LabelPrefix", "DNS1035LabelPrefix",
     [](std::string_view s) { return api::vcore::dns1035_label_errors(mask_trailing_dash(s)); }},
    {"labelValue", "LabelValue", [](std::string_view s) { return api::vcore::label_value_errors(s); }},
    {"uri", "URI", [](std::string_view s) { return uri(s); }},
    {"uuid", "uuid", [](std::string_view s) { return uuid(s); }},
    {"byte", "byte", [](std::string_view s) { return base64(s); }},
    {"date", "date", [](std::string_view s) { return date(s); }},
    {"datetime", "datetime", [](std::string_view s) { return datetime(s); }},
};
constexpr size_t kFormatCount = 13;

}  // namespace

const std::vector<NamedFormat>& all() { return kFormats; }

const NamedFormat* find(std::string_view key) {
  for (const auto& f : kFormats) {
    if (key == f.key) return &f;
  }
  return nullptr;
}

}  // namespace format

namespace lib {

namespace {

const Type kS(TypeKind::kString), kF(TypeKind::kFormat);

Value named(const Value* a) {
  const NamedFormat* f = format::find(a[0].str());
  if (!f) return Value::optional_none();
  return Value::optional_of(Value::format(f));
}
template <size_t K>
Value constant(const Value*) {
  return Value::format(&format::all()[K]);
}
template <size_t... K>
constexpr std::array<FnImpl, sizeof...(K)> constants(std::index_sequence<K...>) {
  return {&constant<K>...};
}
Value validate(const Value* a) {
  std::vector<std::string> errs = a[0].format_data().validate(a[1].str());
  if (errs.empty()) return Value::optional_none();
  ListData l;
  for (auto& e : errs) l.push_back(Value::string(std::move(e)));
  return Value::optional_of(Value::list(std::move(l)));
}

}  // namespace

void register_format(std::vector<Overload>& out) {
  const OverloadAdder add(out);
  add("format-named", "format.named", false, {kS}, Type::optional(kF), named);
  static constexpr auto kConstants = constants(std::make_index_sequence<format::kFormatCount>());
  static_assert(kConstants.size() == 13);
  for (size_t k = 0; k < format::all().size(); ++k) {
    std::string name = std::string("format.") + format::all()[k].key;
    add(name, name, false, {}, kF, kConstants[k]);
  }
  add("format-validate", "validate", true, {kF, kS}, Type::optional(Type::list(kS)), validate);
}

}  // namespace lib
}  // namespace draplane::cel
