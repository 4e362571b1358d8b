// Query parameters read as kube-apiserver reads them: the conversions of
// apimachinery's runtime/conversion.go (booleans, integers), ListOptions
// defaulting and validation, the storage's resourceVersion and continue checks,
// label and field selector syntax, and dryRun / DeleteOptions validation.
// Expected texts follow upstream (k8s.io/apimachinery, k8s.io/apiserver).
#include "server/query_params.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "server/json_util.h"
#include "store/memory_store.h"

namespace draplane::server {
namespace {

const char* kQueryClaims = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims";

std::string claim(const std::string& name, const std::string& labels) {
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":")" + name +
         R"(","labels":)" + labels +
         R"(},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com"}}]}}})";
}

std::string decode_component(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i] == '+' ? ' ' : s[i];
    }
  }
  return out;
}

class QueryParamsTest : public ::testing::Test {
 protected:
  QueryParamsTest() {
    store_ = store::new_memory_store();
    ApiServerOptions o;
    o.clock = std::make_shared<common::FakeClock>();
    o.new_uid = [this] { return "uid-" + std::to_string(++uids_); };
    o.random_suffix = [] { return "xyz12"; };
    api_ = std::make_unique<ApiServer>(*store_, o);
    EXPECT_TRUE(api_->bootstrap().ok());
  }
  static Request request(const std::string& method, const std::string& target, const std::string& body = "") {
    Request r;
    r.method = method;
    size_t qm = target.find('?');
    r.path = target.substr(0, qm);
    if (qm != std::string::npos) {
      std::string qs = target.substr(qm + 1);
      size_t start = 0;
      while (start < qs.size()) {
        size_t amp = qs.find('&', start);
        std::string kv = qs.substr(start, amp == std::string::npos ? std::string::npos : amp - start);
        size_t eq = kv.find('=');
        r.query.emplace(decode_component(kv.substr(0, eq)), eq == std::string::npos ? "" : decode_component(kv.substr(eq + 1)));
        if (amp == std::string::npos) break;
        start = amp + 1;
      }
    }
    r.body = body;
    r.content_type = "application/json";
    r.accept = "application/json";
    r.identity = {"admin", true, ""};
    return r;
  }
  Response call(const std::string& method, const std::string& target, const std::string& body = "") {
    return api_->handle(request(method, target, body)).response;
  }
  static Json json(const Response& r) {
    auto j = parse_json(r.body);
    EXPECT_TRUE(j.has_value()) << r.body;
    return j.has_value() ? std::move(j).value() : Json();
  }
  static std::string message(const Response& r) { return get_string(json(r), {"message"}); }
  std::vector<std::string> names(const std::string& query) {
    Response r = call("GET", std::string(kQueryClaims) + "?" + query);
    EXPECT_EQ(r.code, 200) << query << ": " << r.body;
    std::vector<std::string> out;
    if (r.code != 200) return out;
    Json l = json(r);
    for (const auto& it : find(l, {"items"})->GetArray()) out.push_back(get_string(it, {"metadata", "name"}));
    return out;
  }
  void seed() {
    ASSERT_EQ(call("POST", kQueryClaims, claim("c0", R"({"app":"a","tier":"1"})")).code, 201);
    ASSERT_EQ(call("POST", kQueryClaims, claim("c1", R"({"app":"b","tier":"5"})")).code, 201);
    ASSERT_EQ(call("POST", kQueryClaims, claim("c2", R"({"app":"c"})")).code, 201);
    ASSERT_EQ(call("POST", kQueryClaims, claim("c3", R"({"other":"x"})")).code, 201);
  }
  // The event lines a watch gives within about a second.
  static std::vector<std::string> drain(WatchStream& w, size_t want) {
    std::mutex mu;
    std::condition_variable cv;
    w.set_notify([&] { cv.notify_all(); });
    std::vector<std::string> lines;
    std::unique_lock<std::mutex> l(mu);
    for (int i = 0; i < 20 && lines.size() < want; ++i) {
      w.take(lines);
      cv.wait_for(l, std::chrono::milliseconds(50));
    }
    return lines;
  }
  int uids_ = 0;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<ApiServer> api_;
};

TEST(GoConversions, ParseInt64AsStrconv) {
  struct Case {
    std::string in;
    std::optional<int64_t> want;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {"0", 0, ""},
           {"+5", 5, ""},
           {"-7", -7, ""},
           {"9223372036854775807", INT64_MAX, ""},
           {"-9223372036854775808", INT64_MIN, ""},
           {"9223372036854775808", std::nullopt, "strconv.ParseInt: parsing \"9223372036854775808\": value out of range"},
           {"99999999999999999999x", std::nullopt, "strconv.ParseInt: parsing \"99999999999999999999x\": value out of range"},
           {"", std::nullopt, "strconv.ParseInt: parsing \"\": invalid syntax"},
           {"abc", std::nullopt, "strconv.ParseInt: parsing \"abc\": invalid syntax"},
           {" 1", std::nullopt, "strconv.ParseInt: parsing \" 1\": invalid syntax"},
           {"1_000", std::nullopt, "strconv.ParseInt: parsing \"1_000\": invalid syntax"},
           {"-", std::nullopt, "strconv.ParseInt: parsing \"-\": invalid syntax"},
       }) {
    auto r = go_parse_int64(c.in);
    if (c.want) {
      ASSERT_TRUE(r.has_value()) << c.in << ": " << r.error().message();
      EXPECT_EQ(*r, *c.want) << c.in;
    } else {
      ASSERT_FALSE(r.has_value()) << c.in;
      EXPECT_EQ(r.error().message(), c.error);
    }
  }
  EXPECT_EQ(go_parse_uint64("18446744073709551615").value(), UINT64_MAX);
  EXPECT_EQ(go_parse_uint64("1180591620717411303424").error().message(),
            "strconv.ParseUint: parsing \"1180591620717411303424\": value out of range");
  EXPECT_EQ(go_parse_uint64("+1").error().message(), "strconv.ParseUint: parsing \"+1\": invalid syntax");
}

TEST(GoConversions, OptionBooleansAsConvertSliceStringToBool) {
  // runtime.Convert_Slice_string_To_bool: only "0" and any case of "false" are false.
  for (const char* v : {"true", "True", "TRUE", "1", "t", "yes", "", "bogus"}) {
    Request r;
    r.query["watch"] = v;
    EXPECT_EQ(query_option_bool(r, "watch"), std::optional<bool>(true)) << v;
  }
  for (const char* v : {"false", "False", "FALSE", "fAlSe", "0"}) {
    Request r;
    r.query["watch"] = v;
    EXPECT_EQ(query_option_bool(r, "watch"), std::optional<bool>(false)) << v;
  }
  EXPECT_EQ(query_option_bool(Request(), "watch"), std::nullopt);
  EXPECT_EQ(go_parse_bool("True"), std::optional<bool>(true));
  EXPECT_EQ(go_parse_bool("yes"), std::nullopt);
}

TEST_F(QueryParamsTest, WatchParameterConvertsLikeEveryOptionBoolean) {
  for (const char* v : {"true", "True", "1", "t", "TRUE", ""}) {
    auto out = api_->handle(request("GET", std::string(kQueryClaims) + "?watch=" + v));
    EXPECT_NE(out.watch, nullptr) << "watch=" << v << ": " << out.response.body;
  }
  for (const char* v : {"false", "False", "0"}) {
    auto out = api_->handle(request("GET", std::string(kQueryClaims) + "?watch=" + v));
    EXPECT_EQ(out.watch, nullptr) << "watch=" << v;
    EXPECT_EQ(out.response.code, 200);
  }
}

TEST_F(QueryParamsTest, IntegerParametersAre400WithGoMessage) {
  seed();
  struct Case {
    std::string query, message;
  };
  for (const Case& c : std::vector<Case>{
           {"limit=abc", "strconv.ParseInt: parsing \"abc\": invalid syntax"},
           {"limit=", "strconv.ParseInt: parsing \"\": invalid syntax"},
           {"limit=99999999999999999999", "strconv.ParseInt: parsing \"99999999999999999999\": value out of range"},
           {"timeoutSeconds=ten", "strconv.ParseInt: parsing \"ten\": invalid syntax"},
           {"watch=true&timeoutSeconds=1.5", "strconv.ParseInt: parsing \"1.5\": invalid syntax"},
       }) {
    Response r = call("GET", std::string(kQueryClaims) + "?" + c.query);
    EXPECT_EQ(r.code, 400) << c.query << ": " << r.body;
    EXPECT_EQ(message(r), c.message) << c.query;
    EXPECT_EQ(get_string(json(r), {"reason"}), "BadRequest");
  }
  // A negative limit is no limit (the storage pages only for limit > 0).
  EXPECT_EQ(names("limit=-1").size(), 4u);
  EXPECT_EQ(names("limit=%2B2"), (std::vector<std::string>{"c0", "c1"}));
}

TEST_F(QueryParamsTest, ResourceVersionMustBeUint64) {
  seed();
  // List: storage.ValidateListOptions -> 400.
  Response r = call("GET", std::string(kQueryClaims) + "?resourceVersion=abc");
  EXPECT_EQ(r.code, 400);
  EXPECT_EQ(message(r), "invalid resource version: resourceVersion: Invalid value: \"abc\": strconv.ParseUint: "
                        "parsing \"abc\": invalid syntax");
  r = call("GET", std::string(kQueryClaims) + "?resourceVersion=1180591620717411303424");
  EXPECT_EQ(r.code, 400);
  EXPECT_EQ(message(r), "invalid resource version: resourceVersion: Invalid value: \"1180591620717411303424\": "
                        "strconv.ParseUint: parsing \"1180591620717411303424\": value out of range");
  r = call("GET", std::string(kQueryClaims) + "?resourceVersion=-1&resourceVersionMatch=NotOlderThan");
  EXPECT_EQ(r.code, 400);
  // Get and watch: the cacher's ParseResourceVersion error is not a Status (500, no reason).
  r = call("GET", std::string(kQueryClaims) + "/c0?resourceVersion=abc");
  EXPECT_EQ(r.code, 500) << r.body;
  EXPECT_EQ(message(r), "resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax");
  EXPECT_EQ(find(json(r), {"reason"}), nullptr);
  auto w = api_->handle(request("GET", std::string(kQueryClaims) + "?watch=1&resourceVersion=x1"));
  EXPECT_EQ(w.watch, nullptr);
  EXPECT_EQ(w.response.code, 500);
  EXPECT_EQ(message(w.response),
            "resourceVersion: Invalid value: \"x1\": strconv.ParseUint: parsing \"x1\": invalid syntax");
  // A revision the store has not reached: 504 Timeout, cause ResourceVersionTooLarge.
  r = call("GET", std::string(kQueryClaims) + "?resourceVersion=999999&resourceVersionMatch=Exact");
  EXPECT_EQ(r.code, 504) << r.body;
  EXPECT_EQ(message(r).rfind("Timeout: Too large resource version: 999999, current: ", 0), 0u) << r.body;
  EXPECT_EQ(get_string(json(r), {"reason"}), "Timeout");
  // Valid ones still work.
  EXPECT_EQ(call("GET", std::string(kQueryClaims) + "/c0?resourceVersion=0").code, 200);
  EXPECT_EQ(names("resourceVersion=0").size(), 4u);
}

TEST_F(QueryParamsTest, ListOptionsValidation) {
  seed();
  struct Case {
    std::string query, message;
  };
  const std::string p = "ListOptions.meta.k8s.io \"\" is invalid: ";
  for (const Case& c : std::vector<Case>{
           {"resourceVersionMatch=Exact",
            p + "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"},
           {"resourceVersionMatch=Exact&resourceVersion=0",
            p + "resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""},
           {"resourceVersionMatch=Newest&resourceVersion=3",
            p + "resourceVersionMatch: Unsupported value: \"Newest\": supported values: \"Exact\", \"NotOlderThan\", \"\""},
           {"sendInitialEvents=true", p + "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"},
           {"watch=1&sendInitialEvents=true",
            p + "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"},
           {"watch=1&resourceVersion=5&resourceVersionMatch=NotOlderThan",
            p + "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents "
                "is provided"},
           {"watch=1&sendInitialEvents=true&resourceVersionMatch=Exact",
            p + "[resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to "
                "NotOlderThan, resourceVersionMatch: Unsupported value: \"Exact\": supported values: \"NotOlderThan\"]"},
       }) {
    auto out = api_->handle(request("GET", std::string(kQueryClaims) + "?" + c.query));
    EXPECT_EQ(out.watch, nullptr) << c.query;
    EXPECT_EQ(out.response.code, 422) << c.query << ": " << out.response.body;
    EXPECT_EQ(message(out.response), c.message) << c.query;
    EXPECT_EQ(get_string(json(out.response), {"details", "kind"}), "ListOptions");
  }
}

TEST_F(QueryParamsTest, ContinueTokens) {
  seed();
  Response p1 = call("GET", std::string(kQueryClaims) + "?limit=2");
  std::string token = get_string(json(p1), {"metadata", "continue"});
  ASSERT_FALSE(token.empty());
  // RawURLEncoding: safe in a URL as it is.
  EXPECT_EQ(token.find_first_of("+/="), std::string::npos) << token;
  EXPECT_EQ(names("limit=2&continue=" + token), (std::vector<std::string>{"c2", "c3"}));
  EXPECT_EQ(names("limit=2&resourceVersion=0&continue=" + token), (std::vector<std::string>{"c2", "c3"}));
  struct Case {
    std::string query, message;
  };
  auto b64 = [](const std::string& json) {
    // RawURLEncoding of short ASCII, enough for the cases below.
    static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::string out;
    uint32_t buf = 0;
    int bits = 0;
    for (unsigned char c : json) {
      buf = (buf << 8) | c;
      bits += 8;
      while (bits >= 6) out += k[(buf >> (bits -= 6)) & 63];
    }
    if (bits > 0) out += k[(buf << (6 - bits)) & 63];
    return out;
  };
  for (const Case& c : std::vector<Case>{
           {"continue=abc!", "invalid continue token: continue key is not valid: illegal base64 data at input byte 3"},
           {"continue=" + b64(R"({"v":"meta.k8s.io/v2","rv":3,"start":"c1"})"),
            "invalid continue token: continue key is not valid: server does not recognize this encoded version "
            "meta.k8s.io/v2"},
           {"continue=" + b64(R"({"v":"meta.k8s.io/v1","rv":0,"start":"c1"})"),
            "invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version "
            "meta.k8s.io/v1)"},
           {"continue=" + b64(R"({"v":"meta.k8s.io/v1","rv":3,"start":""})"),
            "invalid continue token: continue key is not valid: encoded start key empty (version meta.k8s.io/v1)"},
           {"continue=" + b64(R"({"v":"meta.k8s.io/v1","rv":3,"start":"../x"})"),
            "invalid continue token: continue key is not valid: ../x"},
           {"continue=" + token + "&resourceVersion=5", "specifying resource version is not allowed when using continue"},
       }) {
    Response r = call("GET", std::string(kQueryClaims) + "?" + c.query);
    EXPECT_EQ(r.code, 400) << c.query << ": " << r.body;
    EXPECT_EQ(message(r), c.message) << c.query;
  }
  // resourceVersionMatch with continue is a ListOptions error first.
  EXPECT_EQ(call("GET", std::string(kQueryClaims) + "?continue=" + token + "&resourceVersion=1&resourceVersionMatch=Exact").code,
            422);
}

TEST_F(QueryParamsTest, LabelSelectorSyntax) {
  seed();
  struct Case {
    std::string selector;
    std::vector<std::string> want;
  };
  for (const Case& c : std::vector<Case>{
           {"app in (a,b)", {"c0", "c1"}},
           {"app in(a, b)", {"c0", "c1"}},
           {"app notin (a,b)", {"c2", "c3"}},
           {"!app", {"c3"}},
           {"app", {"c0", "c1", "c2"}},
           {"app,!tier", {"c2"}},
           {"app!=a", {"c1", "c2", "c3"}},
           {"app==c", {"c2"}},
           {"tier>2", {"c1"}},
           {"tier<2", {"c0"}},
           {"app in (in,notin)", {}},
           {"  app = a  ", {"c0"}},
       }) {
    std::string enc;
    for (char ch : c.selector) enc += ch == ' ' ? std::string("%20") : ch == ',' ? std::string("%2C") : std::string(1, ch);
    EXPECT_EQ(names("labelSelector=" + enc), c.want) << c.selector;
  }
  struct Bad {
    std::string selector, message;
  };
  const std::string key_rule =
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
      "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
      "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
  for (const Bad& c : std::vector<Bad>{
           {"app in a", "unable to parse requirement: found 'a' expected: '('"},
           {"app=b c", "found 'c', expected: ',' or 'end of string'"},
           {"app=a,", "found '', expected: identifier after ','"},
           {",app", "found ',', expected: !, identifier, or 'end of string'"},
           {"!app=a", "found '=', expected: ',' or 'end of string'"},
           {"app in (a b)", "unable to parse requirement: found 'b', expected: ',' or ')'"},
           {"-app=a", "unable to parse requirement: <nil>: Invalid value: \"-app\": " + key_rule},
           {"app=-a",
            "unable to parse requirement: values[0][app]: Invalid value: \"-a\": a valid label must be an empty string "
            "or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
            "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
            "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
           {"tier>x", "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the "
                      "value must be an integer"},
           {"app a", "unable to parse requirement: found 'a', expected: in, notin, =, ==, !=, gt, lt"},
       }) {
    std::string enc;
    for (char ch : c.selector) enc += ch == ' ' ? std::string("%20") : ch == ',' ? std::string("%2C") : std::string(1, ch);
    Response r = call("GET", std::string(kQueryClaims) + "?labelSelector=" + enc);
    EXPECT_EQ(r.code, 400) << c.selector << ": " << r.body;
    EXPECT_EQ(message(r), c.message) << c.selector;
  }
}

TEST_F(QueryParamsTest, FieldSelectorSyntax) {
  seed();
  EXPECT_EQ(names("fieldSelector=metadata.name!%3Dc0,metadata.name!%3Dc2"), (std::vector<std::string>{"c1", "c3"}));
  EXPECT_EQ(names("fieldSelector=metadata.name%3D%3Dc1"), (std::vector<std::string>{"c1"}));
  EXPECT_EQ(names("fieldSelector=metadata.name%3Dc1,"), (std::vector<std::string>{"c1"}));
  EXPECT_EQ(names("fieldSelector=metadata.namespace%3Ddefault,metadata.name!%3Dc3"),
            (std::vector<std::string>{"c0", "c1", "c2"}));
  // Escaped commas belong to the value.
  EXPECT_EQ(names("fieldSelector=metadata.name%3Dc1%5C,c2"), (std::vector<std::string>{}));
  struct Bad {
    std::string query, message;
  };
  for (const Bad& c : std::vector<Bad>{
           {"fieldSelector=metadata.name", "invalid selector: 'metadata.name'; can't understand 'metadata.name'"},
           {"fieldSelector=metadata.name%3Da%3Db", "invalid field selector: unescaped character in value: 61"},
           {"fieldSelector=metadata.name%3Da%5Cb", "invalid field selector: invalid escape sequence: \\b"},
           {"fieldSelector=spec.foo%3Dx",
            "\"spec.foo\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""},
           {"fieldSelector=%20metadata.name%3Dc1",
            "\" metadata.name\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""},
       }) {
    Response r = call("GET", std::string(kQueryClaims) + "?" + c.query);
    EXPECT_EQ(r.code, 400) << c.query << ": " << r.body;
    EXPECT_EQ(message(r), c.message) << c.query;
  }
  Response r = call("GET", "/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.pool%3Dx");
  EXPECT_EQ(r.code, 400);
  EXPECT_EQ(message(r), "field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: spec.pool");
  r = call("GET", "/api/v1/pods?fieldSelector=spec.bogus%3Dx");
  EXPECT_EQ(message(r), "field label not supported: spec.bogus");
}

TEST_F(QueryParamsTest, DryRunAndDeleteOptions) {
  Response r = call("POST", std::string(kQueryClaims) + "?dryRun=all", claim("d0", "{}"));
  EXPECT_EQ(r.code, 422) << r.body;
  EXPECT_EQ(message(r), "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"all\"]: supported "
                        "values: \"All\"");
  EXPECT_EQ(call("GET", std::string(kQueryClaims) + "/d0").code, 404);
  ASSERT_EQ(call("POST", std::string(kQueryClaims) + "?dryRun=All", claim("d0", "{}")).code, 201);
  ASSERT_EQ(call("POST", kQueryClaims, claim("d0", "{}")).code, 201);
  Request patch = request("PATCH", std::string(kQueryClaims) + "/d0?dryRun=", R"({"metadata":{"labels":{"x":"1"}}})");
  patch.content_type = "application/merge-patch+json";
  r = api_->handle(patch).response;
  EXPECT_EQ(r.code, 422) << r.body;
  EXPECT_EQ(message(r), "PatchOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"\"]: supported "
                        "values: \"All\"");
  r = call("DELETE", std::string(kQueryClaims) + "/d0?dryRun=true");
  EXPECT_EQ(r.code, 422);
  EXPECT_EQ(message(r), "DeleteOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"true\"]: supported "
                        "values: \"All\"");
  r = call("DELETE", std::string(kQueryClaims) + "/d0?propagationPolicy=Cascade");
  EXPECT_EQ(r.code, 422);
  EXPECT_EQ(message(r), "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: \"Cascade\": "
                        "supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"");
  r = call("DELETE", std::string(kQueryClaims) + "/d0?gracePeriodSeconds=soon");
  EXPECT_EQ(r.code, 400);
  EXPECT_EQ(message(r), "strconv.ParseInt: parsing \"soon\": invalid syntax");
  r = call("DELETE", std::string(kQueryClaims) + "/d0", R"({"dryRun":["Al"]})");
  EXPECT_EQ(r.code, 422);
  r = call("DELETE", std::string(kQueryClaims) + "?dryRun=x");
  EXPECT_EQ(r.code, 422);
  EXPECT_EQ(call("GET", std::string(kQueryClaims) + "/d0").code, 200);
  // With a body, the query's DeleteOptions are not read (as upstream's handler).
  EXPECT_EQ(call("DELETE", std::string(kQueryClaims) + "/d0?dryRun=x", R"({"dryRun":["All"]})").code, 200);
  EXPECT_EQ(call("GET", std::string(kQueryClaims) + "/d0").code, 200);
  EXPECT_EQ(call("DELETE", std::string(kQueryClaims) + "/d0?dryRun=All&gracePeriodSeconds=0").code, 200);
  EXPECT_EQ(call("GET", std::string(kQueryClaims) + "/d0").code, 200);
  EXPECT_EQ(call("DELETE", std::string(kQueryClaims) + "/d0").code, 200);
  EXPECT_EQ(call("GET", std::string(kQueryClaims) + "/d0").code, 404);
}

TEST_F(QueryParamsTest, TableOptionsIncludeObject) {
  seed();
  const char* table = "application/json;as=Table;v=v1;g=meta.k8s.io";
  Request r = request("GET", std::string(kQueryClaims) + "?includeObject=All");
  r.accept = table;
  Response out = api_->handle(r).response;
  EXPECT_EQ(out.code, 422) << out.body;
  EXPECT_EQ(message(out), "TableOptions.meta.k8s.io \"\" is invalid: includeObject: Invalid value: \"All\": must be "
                          "'Metadata', 'Object', 'None', or empty");
  r.path += "/c0";
  EXPECT_EQ(api_->handle(r).response.code, 422);
  r = request("GET", std::string(kQueryClaims) + "?includeObject=Metadata");
  r.accept = table;
  EXPECT_EQ(api_->handle(r).response.code, 200);
  // Not a Table: TableOptions are not read.
  EXPECT_EQ(call("GET", std::string(kQueryClaims) + "?includeObject=All").code, 200);
}

TEST_F(QueryParamsTest, WatchFromEmptyResourceVersionSendsInitialEventsAndBookmark) {
  seed();
  // WatchList defaulting: "" means sendInitialEvents=true; with bookmarks the
  // end of the initial events is marked.
  auto out = api_->handle(request("GET", std::string(kQueryClaims) + "?watch=True&allowWatchBookmarks=True"));
  ASSERT_NE(out.watch, nullptr) << out.response.body;
  auto lines = drain(*out.watch, 5);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_NE(lines[4].find(R"("type":"BOOKMARK")"), std::string::npos) << lines[4];
  EXPECT_NE(lines[4].find("k8s.io/initial-events-end"), std::string::npos) << lines[4];
  // sendInitialEvents=false from "": only changes from now on.
  out = api_->handle(request("GET", std::string(kQueryClaims) +
                                        "?watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan"));
  ASSERT_NE(out.watch, nullptr) << out.response.body;
  ASSERT_EQ(call("POST", kQueryClaims, claim("c9", "{}")).code, 201);
  lines = drain(*out.watch, 1);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find(R"("type":"ADDED")"), std::string::npos);
  EXPECT_NE(lines[0].find(R"("name":"c9")"), std::string::npos);
}

}  // namespace
}  // namespace draplane::server
