// FieldError rendering (k8s field/errors.go) and the name formats with upstream's
// exact messages.
#include <gtest/gtest.h>

#include "api/field_error.h"
#include "api/validation_core.h"

namespace draplane::api {
namespace {

constexpr const char* kLabelMsg =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
constexpr const char* kSubdomainMsg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
constexpr const char* kCIdentMsg =
    "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric "
    "characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is "
    "'[A-Za-z_][A-Za-z0-9_]*')";

TEST(FieldError, RendersLikeKubernetes) {
  FieldPath req = FieldPath("spec").child("devices").child("requests");
  struct Case {
    const char* name;
    FieldError err;
    const char* want;
  } cases[] = {
      {"invalid int", field_invalid(req.index(1).child("exactly").child("count"), 0, "must be greater than zero"),
       "spec.devices.requests[1].exactly.count: Invalid value: 0: must be greater than zero"},
      {"required", field_required(req.index(0).child("name")), "spec.devices.requests[0].name: Required value"},
      {"required with detail", field_required(FieldPath("metadata").child("name"), "name or generateName is required"),
       "metadata.name: Required value: name or generateName is required"},
      {"too many", field_too_many(req, 33, 32), "spec.devices.requests: Too many: 33: must have at most 32 items"},
      {"too long", field_too_long(FieldPath("spec").child("driver"), 63),
       "spec.driver: Too long: must have at most 63 bytes"},
      {"quoted string", field_invalid(FieldPath("metadata").child("name"), "Foo", "bad"),
       "metadata.name: Invalid value: \"Foo\": bad"},
      {"duplicate", field_duplicate(req.index(1), "gpu"), "spec.devices.requests[1]: Duplicate value: \"gpu\""},
      {"not supported", field_not_supported(req.index(0).child("exactly").child("allocationMode"), "Some",
                                            {"All", "ExactCount"}),
       "spec.devices.requests[0].exactly.allocationMode: Unsupported value: \"Some\": supported values: \"All\", "
       "\"ExactCount\""},
      {"forbidden", field_forbidden(FieldPath("x"), "too complex, exceeds cost limit"),
       "x: Forbidden: too complex, exceeds cost limit"},
      {"null", field_invalid(req.index(0), BadValue::null(), "d"), "spec.devices.requests[0]: Invalid value: null: d"},
      {"bool", field_invalid(FieldPath("spec").child("allNodes"), BadValue::boolean(false), "d"),
       "spec.allNodes: Invalid value: false: d"},
      {"key path", field_invalid(FieldPath("a").child("attributes").key("gpu.nvidia.com/x"), "", "d"),
       "a.attributes[gpu.nvidia.com/x]: Invalid value: \"\": d"},
      {"not found", field_not_found(FieldPath("c").index(0), "gpu", "must be one"),
       "c[0]: Not found: \"gpu\": must be one"},
      {"internal", field_internal(FieldPath("x"), "boom"), "x: Internal error: boom"},
      {"escaped", field_invalid(FieldPath("x"), "a\"b\\c\n", "d"), "x: Invalid value: \"a\\\"b\\\\c\\n\": d"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.err.to_string(), c.want);
  }
}

TEST(FieldError, Aggregate) {
  FieldError a = field_required(FieldPath("a"));
  FieldError b = field_required(FieldPath("b"));
  EXPECT_EQ(aggregate({}), "");
  EXPECT_EQ(aggregate({a}), "a: Required value");
  EXPECT_EQ(aggregate({a, b, a}), "[a: Required value, b: Required value]");
  EXPECT_EQ(invalid_object_message("ResourceClaim", "resource.k8s.io", "c", {a}),
            "ResourceClaim.resource.k8s.io \"c\" is invalid: a: Required value");
  EXPECT_EQ(invalid_object_message("Pod", "", "p", {a, b}), "Pod \"p\" is invalid: [a: Required value, b: Required value]");
}

TEST(Formats, Messages) {
  using V = std::vector<std::string>;
  struct Case {
    const char* name;
    V got;
    V want;
  } cases[] = {
      {"label ok", vcore::dns1123_label_errors("gpu-0"), {}},
      {"label upper", vcore::dns1123_label_errors("Gpu"), {kLabelMsg}},
      {"label empty", vcore::dns1123_label_errors(""), {kLabelMsg}},
      {"label dots", vcore::dns1123_label_errors("a.b"), {"must not contain dots"}},
      {"label long", vcore::dns1123_label_errors(std::string(64, 'a')), {"must be no more than 63 characters"}},
      {"subdomain ok", vcore::dns1123_subdomain_errors("gpu.nvidia.com"), {}},
      {"subdomain bad", vcore::dns1123_subdomain_errors("Foo"), {kSubdomainMsg}},
      {"subdomain trailing dot", vcore::dns1123_subdomain_errors("a."), {kSubdomainMsg}},
      {"cident ok", vcore::c_identifier_errors("_memory1"), {}},
      {"cident digit", vcore::c_identifier_errors("1gpu"), {kCIdentMsg}},
      {"cident dash", vcore::c_identifier_errors("a-b"), {kCIdentMsg}},
      {"qualified ok", vcore::qualified_name_errors("resource.kubernetes.io/admin-access"), {}},
      {"qualified empty prefix", vcore::qualified_name_errors("/a"), {"prefix part must be non-empty"}},
      {"qualified empty name",
       vcore::qualified_name_errors("a/"),
       {"name part must be non-empty",
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"}},
      {"label value ok", vcore::label_value_errors(""), {}},
      {"label value bad",
       vcore::label_value_errors("-x"),
       {"a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
        "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
        "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.got, c.want);
  }
}

TEST(Formats, Semver) {
  struct Case {
    const char* v;
    bool want;
  } cases[] = {
      {"1.2.3", true},          {"0.0.0", true},         {"12.4.0", true},        {"1.0.0-alpha.1", true},
      {"1.0.0+build.5", true},  {"1.0.0-0a.x+b-1", true}, {"1.2", false},         {"01.2.3", false},
      {"1.2.3-01", false},      {"1.2.3-", false},       {"1.2.3+", false},       {"v1.2.3", false},
      {"1.2.3.4", false},       {"", false},             {"1.2.3-a..b", false},   {"550.54.15", true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.v);
    EXPECT_EQ(vcore::is_semver(c.v), c.want);
  }
}

TEST(Formats, Uuid) {
  EXPECT_TRUE(vcore::is_normalized_uuid("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"));
  EXPECT_FALSE(vcore::is_normalized_uuid("0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0"));
  EXPECT_FALSE(vcore::is_normalized_uuid("abc"));
  EXPECT_EQ(vcore::validate_uid("abc", FieldPath("u"))[0].to_string(),
            "u: Invalid value: \"abc\": error validating uid: invalid UUID length: 3");
  EXPECT_EQ(vcore::validate_uid("0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0", FieldPath("u"))[0].detail,
            "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase "
            "hexadecimal characters");
}

TEST(Formats, TruncateKey) {
  EXPECT_EQ(vcore::truncate_key("short", 63), "short");
  EXPECT_EQ(vcore::truncate_key(std::string(20, 'a') + std::string(20, 'b'), 16), "aaaaaaa...bbbbbb");
}

}  // namespace
}  // namespace draplane::api
