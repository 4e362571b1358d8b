// Device selectors in the DRA environment: attribute and capacity access,
// quantities, semvers, missing attributes, error absorption, compile errors.
#include <gtest/gtest.h>

#include "cel/cel.h"

namespace draplane::cel {
namespace {

api::Quantity q(const char* s) { return *api::Quantity::parse(s); }

api::Device gpu() {
  api::Device d;
  d.name = "gpu-0";
  d.attributes["productName"].string_ = "NVIDIA H100 80GB HBM3";
  d.attributes["index"].int_ = 0;
  d.attributes["mig"].bool_ = false;
  d.attributes["driverVersion"].version = "550.54.15";
  d.attributes["cudaComputeCapability"].version = "9.0.0";
  d.attributes["uuid"].string_ = "GPU-1234";
  d.attributes["k8s.io/pcieRoot"].string_ = "pci0000:00";
  d.capacity["memory"].value = q("80Gi");
  d.capacity["multiprocessors"].value = q("132");
  return d;
}

struct EnvCase {
  const char* expr;
  bool want;
  const char* want_error;  // runtime error, "" for none
};

TEST(DraEnv, Selectors) {
  DeviceBinding dev("gpu.nvidia.com", gpu());
  const EnvCase cases[] = {
      {"device.driver == \"gpu.nvidia.com\"", true, ""},
      {"device.driver == 'other'", false, ""},
      {"device.driver != 'other'", true, ""},
      {"'gpu.nvidia.com' == device.driver", true, ""},
      {"device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H100')", true, ""},
      {"device.attributes['gpu.nvidia.com']['productName'] == 'NVIDIA H100 80GB HBM3'", true, ""},
      {"device.attributes['gpu.nvidia.com'].index == 0", true, ""},
      {"device.attributes['gpu.nvidia.com'].mig", false, ""},
      {"device.attributes['k8s.io'].pcieRoot == 'pci0000:00'", true, ""},
      {"device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity('40Gi'))", true, ""},
      {"device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) == 0", true, ""},
      {"device.capacity['gpu.nvidia.com'].memory == quantity('81920Mi')", true, ""},
      {"device.capacity['gpu.nvidia.com'].memory.isLessThan(quantity('100G'))", true, ""},
      {"device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity('85899345920'))", false, ""},
      {"device.capacity['gpu.nvidia.com'].multiprocessors.asInteger() > 100", true, ""},
      {"device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('550.0.0'))", true, ""},
      {"device.attributes['gpu.nvidia.com'].driverVersion.major() == 550", true, ""},
      {"device.attributes['gpu.nvidia.com'].cudaComputeCapability.compareTo(semver('9.0.0')) >= 0", true, ""},
      {"device.attributes['gpu.nvidia.com'].productName.matches('H100')", true, ""},
      {"device.attributes['gpu.nvidia.com'].productName.matches('^H100')", false, ""},
      {"has(device.attributes['gpu.nvidia.com'].productName)", true, ""},
      {"has(device.attributes['gpu.nvidia.com'].nothere)", false, ""},
      {"'productName' in device.attributes['gpu.nvidia.com']", true, ""},
      {"'nothere' in device.attributes['gpu.nvidia.com']", false, ""},
      {"device.attributes['gpu.nvidia.com'].nothere == 1", false, "no such key: nothere"},
      {"device.attributes['unknown.com'].size() == 0", true, ""},
      {"device.attributes['unknown.com'].x == 1", false, "no such key: x"},
      {"device.capacity['gpu.nvidia.com'].bandwidth.isGreaterThan(quantity('1'))", false, "no such key: bandwidth"},
      // Error absorption: && and || are commutative with respect to errors.
      {"device.attributes['gpu.nvidia.com'].nothere == 1 && false", false, ""},
      {"false && device.attributes['gpu.nvidia.com'].nothere == 1", false, ""},
      {"device.attributes['gpu.nvidia.com'].nothere == 1 || true", true, ""},
      {"true || device.attributes['gpu.nvidia.com'].nothere == 1", true, ""},
      {"device.attributes['gpu.nvidia.com'].nothere == 1 || false", false, "no such key: nothere"},
      // An int attribute compared with a string is false; a version is an error.
      {"device.attributes['gpu.nvidia.com'].index == 'a'", false, ""},
      {"device.attributes['gpu.nvidia.com'].driverVersion == '550.54.15'", false, "no such overload"},
      {"device.attributes['gpu.nvidia.com'].driverVersion == semver('550.54.15')", true, ""},
      {"device.allowMultipleAllocations", false, ""},
      {"cel.bind(a, device.attributes['gpu.nvidia.com'], a.index == 0 && a.mig == false)", true, ""},
      {"device.attributes['gpu.nvidia.com'].exists(k, k == 'uuid')", true, ""},
      {"device.attributes.all(d, d.size() > 0)", true, ""},
      {"dyn(1) == 1.0", true, ""},
      {"1 < 2u && 2.5 > 1", true, ""},
      {"9223372036854775807 + 1 == 0", false, "integer overflow"},
      {"1 / 0 == 0", false, "division by zero"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.expr);
    auto p = compile(c.expr);
    ASSERT_TRUE(p.has_value()) << p.error().message();
    EvalResult r = (*p)->eval(dev);
    EXPECT_EQ(r.error, c.want_error);
    if (r.ok()) {
      EXPECT_EQ(r.value, c.want);
    }
  }
}

TEST(DraEnv, CompileErrors) {
  struct E {
    const char* expr;
    const char* want;
  };
  const E cases[] = {
      {"foo == 1", "ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')\n | foo == 1\n | ^"},
      {"device.driver == 'a' || quantity(1)",
       "ERROR: <input>:1:33: found no matching overload for 'quantity' applied to '(int)'\n"
       " | device.driver == 'a' || quantity(1)\n"
       " | ................................^"},
      {"1 == 1.0", "ERROR: <input>:1:3: found no matching overload for '_==_' applied to '(int, double)'\n"
                   " | 1 == 1.0\n | ..^"},
      {"[1, 'a'].size() > 0", "ERROR: <input>:1:5: expected type 'int' but found 'string'\n"
                              " | [1, 'a'].size() > 0\n | ....^"},
      {"device.foo", "ERROR: <input>:1:7: undefined field 'foo'\n | device.foo\n | ......^"},
      {"device.driver", "must evaluate to bool or the unknown type, not string"},
      {"quantity('1') < quantity('2')",
       "ERROR: <input>:1:15: found no matching overload for '_<_' applied to '(kubernetes.Quantity, "
       "kubernetes.Quantity)'\n | quantity('1') < quantity('2')\n | ..............^"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.expr);
    auto p = compile(c.expr);
    ASSERT_FALSE(p.has_value());
    EXPECT_EQ(p.error().code(), Code::kInvalid);
    EXPECT_EQ(p.error().message(), c.want);
  }
}

TEST(DraEnv, EvalToString) {
  api::Device d = gpu();
  struct E {
    const char* expr;
    const char* want;
  };
  const E cases[] = {
      {"1 + 2", "3"},
      {"[1, 2]", "[1, 2]"},
      {"{'a': 1}", "{\"a\": 1}"},
      {"3u", "3u"},
      {"1.5", "1.5"},
      {"2.0", "2.0"},
      {"'text'", "\"text\""},
      {"b'ab'", "b\"ab\""},
      {"null", "null"},
      {"quantity('1.5Gi')", "quantity(\"1536Mi\")"},
      {"semver('1.2.3')", "semver(\"1.2.3\")"},
      {"device.attributes['gpu.nvidia.com'].index", "0"},
      {"device.capacity['gpu.nvidia.com'].memory", "quantity(\"80Gi\")"},
      {"type(1)", "int"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.expr);
    auto r = eval_to_string(c.expr, &d, "gpu.nvidia.com");
    ASSERT_TRUE(r.has_value()) << r.error().message();
    EXPECT_EQ(*r, c.want);
  }
  auto err = eval_to_string("device.driver", nullptr, "");
  ASSERT_FALSE(err.has_value());
  EXPECT_EQ(err.error().message(), "no such attribute(s): device");
}

TEST(DraEnv, CheckSelectorAndCost) {
  EXPECT_TRUE(check_selector("device.driver == 'a'").ok());
  Status s = check_selector("foo");
  EXPECT_EQ(s.code(), Code::kInvalid);
  EXPECT_EQ(s.message().rfind("compilation failed: ERROR: <input>:1:1: undeclared reference", 0), 0u);
  // Nested comprehensions over the attribute maps: 32^4 iterations.
  Status hostile = check_selector(
      "device.attributes.all(a, device.attributes.all(b, device.attributes.all(c, "
      "device.attributes.all(d, device.attributes.all(e, a == e)))))");
  EXPECT_EQ(hostile.code(), Code::kForbidden);
  EXPECT_EQ(hostile.message(), "too complex, exceeds cost limit");
}

TEST(DraEnv, CheckSelectorThroughProgramCacheGivesTheSameVerdicts) {
  ProgramCache cache;
  const std::string hostile =
      "device.attributes.all(a, device.attributes.all(b, device.attributes.all(c, "
      "device.attributes.all(d, device.attributes.all(e, a == e)))))";
  for (int round = 0; round < 2; ++round) {  // the second round answers from the cache
    for (const std::string& expr : {std::string("device.driver == 'a'"), std::string("foo"), hostile}) {
      Status direct = check_selector(expr);
      Status cached = check_selector(expr, &cache);
      EXPECT_EQ(cached.code(), direct.code()) << expr;
      EXPECT_EQ(cached.message(), direct.message()) << expr;
    }
  }
  // Past its bound the cache starts over and keeps answering.
  for (size_t i = 0; i <= ProgramCache::kMaxPrograms; ++i) {
    ASSERT_TRUE(cache.get("device.driver == 'd" + std::to_string(i) + "'").has_value());
  }
  EXPECT_TRUE(check_selector("device.driver == 'a'", &cache).ok());
  EXPECT_EQ(check_selector("foo", &cache).code(), Code::kInvalid);
}

TEST(DraEnv, RuntimeCostLimit) {
  // Not caught statically (list literal sizes), stopped at run time.
  auto p = compile(
      "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, "
      "[1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, "
      "a + b + c + d + e + f > 0))))))");
  ASSERT_TRUE(p.has_value()) << p.error().message();
  DeviceBinding dev("gpu.nvidia.com", gpu());
  EvalResult r = (*p)->eval(dev);
  EXPECT_EQ(r.error, "actual cost limit exceeded");
}

TEST(DraEnv, ProgramCacheSharesPrograms) {
  ProgramCache cache;
  auto a = cache.get("device.driver == 'x'");
  auto b = cache.get("device.driver == 'x'");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->get(), b->get());
  auto bad = cache.get("device.nope");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), Code::kInvalid);
}

TEST(DraEnv, InvalidVersionAttributeFailsEvaluation) {
  api::Device d;
  d.attributes["v"].version = "not-a-version";
  DeviceBinding dev("x.com", d);
  auto p = compile("true");
  ASSERT_TRUE(p.has_value());
  EvalResult r = (*p)->eval(dev);
  EXPECT_EQ(r.error, "attribute v: parse semantic version: not-a-version");
}

}  // namespace
}  // namespace draplane::cel

namespace draplane::cel {
namespace {

// Static estimates Kubernetes computes for the same selectors
// (dynamic-resource-allocation/cel compile_test.go expectCost).
TEST(DraEnv, CostEstimatesMatchKubernetes) {
  struct C {
    const char* expr;
    uint64_t want;
  };
  const C cases[] = {
      {"device.attributes[\"no-such-domain\"].noSuchAttr.isGreaterThan(quantity(\"0\"))", 6},
      {"device.attributes[\"no-such-domain\"][\"noSuchAttr\"].isGreaterThan(quantity(\"0\"))", 6},
      {"\"no-such-domain\" in device.attributes", 3},
      {"device.driver == \"\"", 2},
      {"device.driver == \"dra.example.com\"", 4},
      {"device.attributes[\"dra.example.com\"].name", 4},
      {"device.attributes[\"dra.example.com\"][\"name\"]", 4},
      {"cel.bind(dra, device.attributes[\"dra.example.com\"], dra.name)", 15},
      {"device.attributes[\"dra.example.com\"].name > 0", 5},
      {"device.attributes[\"dra.example.com\"].name == \"fish\"", 5},
      {"device.attributes[\"dra.example.com\"].name.isGreaterThan(semver(\"0.0.1\"))", 6},
      {"device.attributes[\"dra.example.com\"].name.isGreaterThan(semver(\"v0.0.1\", true)) && "
       "isSemver(\"v1.0.0\", true)",
       7},
      {"device.capacity[\"dra.example.com\"].name.isGreaterThan(quantity(\"1Ki\"))", 6},
      {"\"name\" in device.capacity[\"dra.example.com\"] && "
       "device.capacity[\"dra.example.com\"].name.isGreaterThan(quantity(\"1Ki\"))",
       10},
      {"!(\"name\" in device.capacity[\"dra.example.com\"]) || "
       "device.capacity[\"dra.example.com\"].name.isGreaterThan(quantity(\"1Ki\"))",
       11},
      {"device.capacity[\"dra.example.com\"].quantity.isGreaterThan(quantity(\"1Ki\")) &&\n"
       "device.attributes[\"dra.example.com\"].bool &&\n"
       "device.attributes[\"dra.example.com\"].int > 0 &&\n"
       "device.attributes[\"dra.example.com\"].string == \"fish\" &&\n"
       "device.attributes[\"dra.example.com\"].version.isGreaterThan(semver(\"0.0.1\")) &&\n"
       "device.capacity[\"dra.example.com\"][\"quantity\"].isGreaterThan(quantity(\"1Ki\")) &&\n"
       "device.attributes[\"dra.example.com\"][\"bool\"] &&\n"
       "device.attributes[\"dra.example.com\"][\"int\"] > 0 &&\n"
       "device.attributes[\"dra.example.com\"][\"string\"] == \"fish\" &&\n"
       "device.attributes[\"dra.example.com\"][\"version\"].isGreaterThan(semver(\"0.0.1\"))",
       52},
      {"device.attributes[\"dra.example.com\"].a && device.attributes[\"dra.example.com\"].b && "
       "device.attributes[\"dra.example.com\"].c",
       12},
      {"device.attributes.exists_one(x, x == \"dra.example.com\")", 164},
      {"device.attributes[\"dra.example.com\"].exists_one(x, x == \"services\")", 133},
      {"device.attributes[\"dra.example.com\"].services.split(\"example\").size() >= 2", 19},
      {"device.attributes[\"dra.example.com\"].services.matches(\"[^a]?sym\")", 18},
      {"device.capacity.exists_one(x, x == \"dra.example.com\")", 164},
      {"device.capacity[\"dra.example.com\"].exists_one(x, x == \"memory\")", 133},
      {"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, [1, 2, 3, 4, 5, 6, 7, 8, "
       "9, 10].all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z3, [1, 2, 3, "
       "4, 5, 6, 7, 8, 9, 10].all(z4, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z5, int('1'.find('[0-9]*')) < "
       "100)))))))",
       85555551},
      {"device.allowMultipleAllocations == true", 3},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.expr);
    auto p = compile(c.expr);
    ASSERT_TRUE(p.has_value()) << p.error().message();
    EXPECT_EQ((*p)->estimated_cost(), c.want);
  }
}

}  // namespace
}  // namespace draplane::cel
