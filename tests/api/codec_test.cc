// Codec: round trips over manifests that populate every field, strict errors
// with exact paths, streams and Lists, YAML scalar resolution, exact encodings.
#include "api/codec.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "codec_testdata.h"

namespace draplane::api {
namespace {

std::vector<Object> decode_all_ok(const std::string& text) {
  std::vector<Object> out;
  for (DecodedDocument& doc : decode_stream(text)) {
    EXPECT_TRUE(doc.object.has_value()) << "document " << doc.index << ": "
                                        << doc.object.error().message();
    if (doc.object.has_value()) out.push_back(std::move(doc.object).value());
  }
  return out;
}

TEST(CodecTest, RoundTripEveryField) {
  for (const char* file : {"full_claim.yaml", "full_slice.yaml", "full_misc.yaml"}) {
    SCOPED_TRACE(file);
    std::vector<Object> objects = decode_all_ok(read_testdata(file));
    ASSERT_FALSE(objects.empty());
    for (const Object& obj : objects) {
      SCOPED_TRACE(std::string(kind_of(obj)));
      for (const std::string& text : {to_json(obj), to_json(obj, true), to_yaml(obj)}) {
        Result<Object> back = decode_object(text);
        ASSERT_TRUE(back.has_value()) << back.error().message() << "\n" << text;
        EXPECT_TRUE(*back == obj) << text;
        // Encoding is deterministic: encode(decode(encode(x))) == encode(x).
        EXPECT_EQ(to_json(*back), to_json(obj));
      }
    }
    // The stream forms round-trip too.
    std::vector<Object> again = decode_all_ok(to_yaml_stream(objects));
    EXPECT_TRUE(again == objects);
    std::vector<Object> again_json = decode_all_ok(to_json_list(objects));
    EXPECT_TRUE(again_json == objects);
  }
}

TEST(CodecTest, DecodedValues) {
  std::vector<Object> claim = decode_all_ok(read_testdata("full_claim.yaml"));
  ASSERT_EQ(claim.size(), 1u);
  const ResourceClaim& c = std::get<ResourceClaim>(claim[0]);
  EXPECT_EQ(c.typeMeta.apiVersion, "resource.k8s.io/v1");
  EXPECT_EQ(c.typeMeta.kind, "ResourceClaim");
  EXPECT_EQ(c.metadata.namespace_, "team-a");
  EXPECT_EQ(c.metadata.generation, 3);
  EXPECT_EQ(c.metadata.labels.at("tier"), "1");
  EXPECT_EQ(c.metadata.annotations.at("note"), "yes");
  EXPECT_EQ(c.metadata.managedFields.text, R"([{"manager":"kubectl","operation":"Apply"}])");
  EXPECT_EQ(c.metadata.ownerReferences[0].blockOwnerDeletion, false);
  const ExactDeviceRequest& ex = *c.spec.devices.requests[0].exactly;
  EXPECT_EQ(ex.count, 2);
  EXPECT_EQ(ex.adminAccess, false);
  EXPECT_EQ(ex.tolerations[0].tolerationSeconds, 300);
  EXPECT_EQ(ex.capacity->requests.at("memory").to_string(), "10Gi");
  EXPECT_EQ(c.spec.devices.requests[1].firstAvailable[1].allocationMode, "All");
  EXPECT_EQ(c.spec.devices.requests[1].firstAvailable[0].capacity->requests.at("cores").to_string(),
            "4");
  EXPECT_EQ(c.spec.devices.constraints[0].matchAttribute, "gpu.example.com/nvlinkDomain");
  EXPECT_EQ(c.spec.devices.config[0].opaque->parameters.text,
            R"({"apiVersion":"gpu.example.com/v1","kind":"GpuConfig","sharing":{"replicas":4,"strategy":"TimeSlicing"}})");
  EXPECT_EQ(c.status.devices[0].data.text, R"({"health":"ok","temps":[40,41.5]})");
  EXPECT_EQ(c.status.devices[0].networkData->hardwareAddress, "00:11:22:33:44:55");
  EXPECT_EQ(c.status.allocation->allocationTimestamp, "2025-01-02T03:05:00Z");
  EXPECT_EQ(c.status.allocation->devices.results[0].consumedCapacity.at("memory").to_string(),
            "10Gi");
  EXPECT_EQ(c.status.reservedFor[0].resource, "pods");

  std::vector<Object> misc = decode_all_ok(read_testdata("full_misc.yaml"));
  ASSERT_EQ(misc.size(), 5u);
  const Pod& pod = std::get<Pod>(misc[2]);
  EXPECT_EQ(pod.spec.containers[0].extra.text,
            R"({"ports":[{"containerPort":8000}],"readinessProbe":{"httpGet":{"path":"/health","port":8000}}})");
  EXPECT_EQ(pod.spec.extra.text, R"({"volumes":[{"emptyDir":{},"name":"cache"}]})");
  EXPECT_EQ(pod.spec.affinity->extra.text,
            R"({"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[]}})");
  EXPECT_EQ(pod.status.extra.text, R"({"qosClass":"Burstable"})");
  EXPECT_EQ(pod.spec.containers[0].resources.limits.at("nvidia.com/gpu").to_string(), "1");
  EXPECT_EQ(pod.spec.containers[0].env[1].valueFrom.text, R"({"fieldRef":{"fieldPath":"status.podIP"}})");
  EXPECT_EQ(pod.spec.priority, 1000);
  EXPECT_EQ(pod.spec.nodeSelector.at("gpu"), "true");
  const Node& node = std::get<Node>(misc[3]);
  EXPECT_TRUE(node.spec.unschedulable);
  EXPECT_EQ(node.spec.extra.text, R"({"podCIDR":"10.1.0.0/24"})");
  EXPECT_EQ(node.status.extra.text, R"({"phase":"Running"})");
  EXPECT_EQ(node.status.allocatable.at("cpu").to_string(), "63500m");
  const Namespace& ns = std::get<Namespace>(misc[4]);
  EXPECT_EQ(ns.specFinalizers, std::vector<std::string>{"kubernetes"});
  EXPECT_EQ(ns.phase, "Active");

  std::vector<Object> slice = decode_all_ok(read_testdata("full_slice.yaml"));
  const ResourceSlice& s = std::get<ResourceSlice>(slice[0]);
  EXPECT_EQ(s.spec.devices[0].attributes.at("index").int_, 0);
  EXPECT_EQ(s.spec.devices[0].attributes.at("driverVersion").version, "550.54.15");
  EXPECT_EQ(s.spec.devices[0].capacity.at("memory").requestPolicy->validValues.size(), 2u);
  EXPECT_EQ(s.spec.perDeviceNodeSelection, false);
  EXPECT_EQ(s.spec.devices[2].allNodes, true);
}

struct ErrorCase {
  const char* name;
  const char* input;
  const char* want;
};

TEST(CodecTest, StrictErrors) {
  const ErrorCase cases[] = {
      {"unknown field",
       "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\n"
       "spec:\n  devices:\n    requests:\n    - name: gpu\n      exactly:\n"
       "        deviceClassName: gpu\n        cout: 2\n",
       "strict decoding error: unknown field \"spec.devices.requests[0].exactly.cout\""},
      {"several unknown fields",
       "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c, nmae: x}\n"
       "spec: {selector: []}\n",
       "strict decoding error: unknown field \"metadata.nmae\", unknown field \"spec.selector\""},
      {"unknown field in map value",
       "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
       "spec: {driver: d, pool: {name: p}, devices: [{name: g, capacity: {mem: {valu: 1}}}]}\n",
       "strict decoding error: unknown field \"spec.devices[0].capacity.mem.valu\""},
      {"pod top level is strict",
       "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspex: {}\n",
       "strict decoding error: unknown field \"spex\""},
      {"duplicate field in JSON",
       R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"a","name":"b"}})",
       "strict decoding error: duplicate field \"metadata.name\""},
      {"duplicate key in YAML",
       "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: a\n  name: b\n",
       "error converting YAML to JSON: yaml: unmarshal errors:\n  line 5: key \"name\" already set "
       "in map"},
      {"string for integer",
       "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\n"
       "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: g, count: two}}]}}\n",
       "spec.devices.requests[0].exactly.count: expected integer, got string \"two\""},
      {"fraction for integer",
       "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\n"
       "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: g, count: 1.5}}]}}\n",
       "spec.devices.requests[0].exactly.count: expected integer, got number 1.5"},
      {"JSON number for string", "{\"apiVersion\": \"resource.k8s.io/v1\", \"kind\": \"DeviceClass\", \"metadata\": {\"name\": 5}}",
       "metadata.name: expected string, got number 5"},
      {"YAML list for string", "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: [a]}\n",
       "metadata.name: expected string, got array"},
      {"quoted bool is a string",
       "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\n"
       "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: g, adminAccess: "
       "\"true\"}}]}}\n",
       "spec.devices.requests[0].exactly.adminAccess: expected boolean, got string \"true\""},
      {"array for map",
       "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: a, labels: [x]}\n",
       "metadata.labels: expected object, got array"},
      {"bad quantity",
       "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
       "spec: {driver: d, pool: {name: p}, devices: [{name: g, capacity: {mem: {value: 1Q}}}]}\n",
       "spec.devices[0].capacity.mem.value: quantities must match the regular expression "
       "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
      {"quantity of wrong type",
       "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
       "spec: {driver: d, pool: {name: p}, devices: [{name: g, capacity: {mem: {value: true}}}]}\n",
       "spec.devices[0].capacity.mem.value: expected quantity (string or number), got boolean true"},
      {"missing kind", "apiVersion: v1\nmetadata: {name: a}\n",
       "Object 'Kind' is missing in '{\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"a\"}}'"},
      {"missing apiVersion", "kind: Pod\nmetadata: {name: a}\n",
       "Object 'apiVersion' is missing in '{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"}}'"},
      {"core kind with wrong version", "apiVersion: apps/v1\nkind: Pod\nmetadata: {name: a}\n",
       "no kind \"Pod\" is registered for version \"apps/v1\": use apiVersion v1"},
      {"unknown resource kind",
       "apiVersion: resource.k8s.io/v1\nkind: Workload\nmetadata: {name: a}\n",
       "no kind \"Workload\" is registered for version \"resource.k8s.io/v1\""},
      {"not an object", "- a\n- b\n", "expected an object, got array"},
      {"yaml syntax", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: [a\n",
       "error converting YAML to JSON: yaml: line 5: end of sequence flow not found"},
      {"json syntax", "{\"kind\": \"Pod\",}",
       "invalid JSON at line 1, column 16: Missing a name for object member."},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<DecodedDocument> docs = decode_stream(c.input);
    ASSERT_FALSE(docs.empty());
    const DecodedDocument& d = docs.back();
    ASSERT_FALSE(d.object.has_value());
    EXPECT_EQ(d.object.error().message(), c.want);
    EXPECT_EQ(d.object.error().code(), Code::kBadRequest);
  }
}

// A plain YAML scalar that YAML 1.1 resolves to a number or bool is read as the
// text written where the field is a string (sigs.k8s.io/yaml converts to the
// target type too; draplane keeps the source text, see docs/compat.md).
TEST(CodecTest, PlainScalarsInStringFields) {
  auto c = decode_as<DeviceClass>("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: 5}\n");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->metadata.name, "5");
  auto s = decode_as<ResourceSlice>(
      "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
      "spec: {driver: d, pool: {name: p}, devices: [{name: g, attributes: {type: {string: Y}, v: {string: 1.10}}}]}\n");
  ASSERT_TRUE(s.has_value()) << s.error().message();
  EXPECT_EQ(*s->spec.devices[0].attributes.at("type").string_, "Y");
  EXPECT_EQ(*s->spec.devices[0].attributes.at("v").string_, "1.10");
  // A number where a number belongs is still a number.
  auto n = decode_as<ResourceClaim>(
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\n"
      "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: x, count: 2}}]}}\n");
  ASSERT_TRUE(n.has_value()) << n.error().message();
  EXPECT_EQ(n->spec.devices.requests[0].exactly->count, std::optional<int64_t>(2));
}

TEST(CodecTest, StreamsAndLists) {
  const std::string text =
      "---\n"
      "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: a}\n"
      "---\n"
      "# only a comment\n"
      "---\n"
      "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: b}\nspec: {bad: 1}\n"
      "---\n"
      "apiVersion: v1\nkind: List\nitems:\n"
      "- {apiVersion: v1, kind: Namespace, metadata: {name: c}}\n"
      "- {apiVersion: v1, kind: Node, metadata: {name: d}}\n"
      "---\n"
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimList\nmetadata: {}\nitems:\n"
      "- {apiVersion: resource.k8s.io/v1, kind: ResourceClaim, metadata: {name: e}}\n";
  std::vector<DecodedDocument> docs = decode_stream(text);
  ASSERT_EQ(docs.size(), 5u);
  const char* kinds[] = {"DeviceClass", "DeviceClass", "Namespace", "Node", "ResourceClaim"};
  const char* names[] = {"a", "b", "c", "d", "e"};
  for (int i = 0; i < 5; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(docs[i].index, i);
    EXPECT_EQ(docs[i].kind, kinds[i]);
    EXPECT_EQ(docs[i].name, names[i]);
    EXPECT_EQ(docs[i].object.has_value(), i != 1);
  }
  EXPECT_EQ(docs[1].object.error().message(), "strict decoding error: unknown field \"spec.bad\"");

  // A syntax error ends the stream but keeps what came before.
  std::vector<DecodedDocument> broken = decode_stream(
      "apiVersion: v1\nkind: Namespace\nmetadata: {name: ok}\n---\nkind: [\n");
  ASSERT_EQ(broken.size(), 2u);
  EXPECT_TRUE(broken[0].object.has_value());
  EXPECT_FALSE(broken[1].object.has_value());
  EXPECT_EQ(broken[1].index, 1);

  // JSON: concatenated objects and a top-level array.
  std::vector<DecodedDocument> json = decode_stream(
      R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x"}}
         {"apiVersion":"v1","kind":"Namespace","metadata":{"name":"y"}})");
  ASSERT_EQ(json.size(), 2u);
  EXPECT_EQ(json[1].name, "y");
  std::vector<DecodedDocument> arr = decode_stream(
      R"([{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x"}}])");
  ASSERT_EQ(arr.size(), 1u);
  EXPECT_TRUE(arr[0].object.has_value());

  EXPECT_FALSE(decode_object(text).has_value());
  EXPECT_EQ(decode_object(text).error().message(), "expected exactly one object, found 5");
  Result<Node> wrong = decode_as<Node>("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{}}");
  ASSERT_FALSE(wrong.has_value());
  EXPECT_EQ(wrong.error().message(), "expected kind Node, got Namespace");
  EXPECT_TRUE(decode_as<Namespace>("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\"}").has_value());
}

TEST(CodecTest, YamlScalarResolution) {
  struct Case {
    const char* value;  // YAML scalar for a Quantity field (capacity value)
    const char* want;   // Quantity string after decoding
  };
  // YAML numbers go through float64 like sigs.k8s.io/yaml; strings parse as written.
  const Case cases[] = {
      {"1e3", "1k"},      {"\"1e3\"", "1e3"}, {"1.5", "1500m"}, {"100m", "100m"},
      {"0x10", "16"},     {"010", "8"},       {"1_000", "1k"},  {"40Gi", "40Gi"},
      {"'0.5'", "500m"},  {"12E", "12E"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.value);
    std::string text = "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
                       "spec: {driver: d, pool: {name: p}, devices: [{name: g, capacity: {m: {value: " +
                       std::string(c.value) + "}}}]}\n";
    Result<ResourceSlice> s = decode_as<ResourceSlice>(text);
    ASSERT_TRUE(s.has_value()) << s.error().message();
    EXPECT_EQ(s->spec.devices[0].capacity.at("m").value.to_string(), c.want);
  }
  // JSON numbers keep their spelling.
  Result<ResourceSlice> j = decode_as<ResourceSlice>(
      R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","spec":{"devices":[{"name":"g","capacity":{"m":{"value":1e3}}}]}})");
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ(j->spec.devices[0].capacity.at("m").value.to_string(), "1e3");

  // YAML 1.1 booleans and nulls.
  Result<ResourceClaim> c = decode_as<ResourceClaim>(
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, labels: {a: 'on'}}\n"
      "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: g, adminAccess: yes, "
      "count: ~}}]}}\n");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->spec.devices.requests[0].exactly->adminAccess, true);
  EXPECT_EQ(c->spec.devices.requests[0].exactly->count, std::nullopt);
  EXPECT_EQ(c->metadata.labels.at("a"), "on");
}

TEST(CodecTest, ExactEncoding) {
  Result<ResourceClaim> c = decode_as<ResourceClaim>(
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
      "metadata: {name: c, namespace: ns, labels: {tier: '1', b: x}, creationTimestamp: "
      "'2025-01-02T03:04:05Z'}\n"
      "spec:\n  devices:\n    requests:\n    - name: gpu\n      exactly:\n"
      "        deviceClassName: gpu\n        count: 2\n        selectors:\n"
      "        - cel: {expression: 'device.driver == \"a\" && true'}\n");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(to_json(*c),
            R"({"kind":"ResourceClaim","apiVersion":"resource.k8s.io/v1","metadata":{"name":"c",)"
            R"("namespace":"ns","creationTimestamp":"2025-01-02T03:04:05Z","labels":{"b":"x","tier":"1"}},)"
            R"("spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu",)"
            R"("selectors":[{"cel":{"expression":"device.driver == \"a\" \u0026\u0026 true"}}],)"
            R"("count":2}}]}},"status":{}})");
  EXPECT_EQ(to_yaml(*c),
            "apiVersion: resource.k8s.io/v1\n"
            "kind: ResourceClaim\n"
            "metadata:\n"
            "  creationTimestamp: \"2025-01-02T03:04:05Z\"\n"
            "  labels:\n"
            "    b: x\n"
            "    tier: \"1\"\n"
            "  name: c\n"
            "  namespace: ns\n"
            "spec:\n"
            "  devices:\n"
            "    requests:\n"
            "    - exactly:\n"
            "        count: 2\n"
            "        deviceClassName: gpu\n"
            "        selectors:\n"
            "        - cel:\n"
            "            expression: device.driver == \"a\" && true\n"
            "      name: gpu\n"
            "status: {}\n");
  EXPECT_EQ(to_json(Object(Namespace{})), R"({"kind":"Namespace","apiVersion":"v1","metadata":{},"spec":{},"status":{}})");
  EXPECT_EQ(to_json(Object(Namespace{}), true),
            "{\n    \"kind\": \"Namespace\",\n    \"apiVersion\": \"v1\",\n    \"metadata\": {},\n"
            "    \"spec\": {},\n    \"status\": {}\n}");
}

TEST(CodecTest, YamlQuoting) {
  ResourceClaim c;
  c.metadata.name = "q";
  c.metadata.annotations = {{"empty", ""},        {"num", "10"},        {"bool", "yes"},
                            {"colon", "a: b"},    {"hash", "a #b"},     {"dash", "- x"},
                            {"flag", "--port=1"}, {"multi", "l1\nl2\n"}, {"quote", "'q'"},
                            {"null", "null"},     {"float", "1.5"},     {"star", "*x"}};
  EXPECT_EQ(to_yaml(c),
            "apiVersion: resource.k8s.io/v1\n"
            "kind: ResourceClaim\n"
            "metadata:\n"
            "  annotations:\n"
            "    bool: \"yes\"\n"
            "    colon: 'a: b'\n"
            "    dash: '- x'\n"
            "    empty: \"\"\n"
            "    flag: --port=1\n"
            "    float: \"1.5\"\n"
            "    hash: 'a #b'\n"
            "    multi: |\n"
            "      l1\n"
            "      l2\n"
            "    \"null\": \"null\"\n"
            "    num: \"10\"\n"
            "    quote: '''q'''\n"
            "    star: '*x'\n"
            "  name: q\n"
            "spec:\n"
            "  devices: {}\n"
            "status: {}\n");
  Result<ResourceClaim> back = decode_as<ResourceClaim>(to_yaml(c));
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_EQ(back->metadata.annotations, c.metadata.annotations);
}

// The JSON reader's fast paths (plain ASCII, in-place unescaping, lazy field
// paths, the duplicate-key index of big maps) give what the general ones give.
TEST(CodecTest, JsonReaderPaths) {
  // Namespace "a" as JSON, `rest` following the name's first letter.
  auto ns_json = [](const std::string& rest) {
    return R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a)" + rest;
  };
  // Non-ASCII text is validated and kept; invalid UTF-8 reads as U+FFFD, as Go reads it.
  Result<Namespace> ns = decode_as<Namespace>(ns_json("\",\"labels\":{\"k\":\"\xc3\xbc\\u00e9\xe2\x9c\x93\"}}}"));
  ASSERT_TRUE(ns.has_value()) << ns.error().message();
  EXPECT_EQ(ns->metadata.labels.at("k"), "\xc3\xbc\xc3\xa9\xe2\x9c\x93");
  Result<Namespace> bad = decode_as<Namespace>(ns_json("\xff\"}}"));
  ASSERT_TRUE(bad.has_value()) << bad.error().message();
  EXPECT_EQ(bad->metadata.name, "a\xEF\xBF\xBD");

  // Error positions count the text as sent, not as unescaped while reading it.
  Result<Namespace> syntax = decode_as<Namespace>(ns_json("\\nb\\nc\"},\n\"x\": }"));
  ASSERT_FALSE(syntax.has_value());
  EXPECT_EQ(syntax.error().message(), "invalid JSON at line 2, column 6: Invalid value.");

  // A duplicate key is found in small objects and in maps past the linear scan.
  std::string labels;
  for (int i = 0; i < 40; ++i) labels += "\"k" + std::to_string(i) + "\":\"v\",";
  Result<Namespace> dup = decode_as<Namespace>(ns_json("\",\"labels\":{" + labels + "\"k7\":\"again\"}}}"));
  ASSERT_FALSE(dup.has_value());
  EXPECT_EQ(dup.error().message(), "strict decoding error: duplicate field \"metadata.labels.k7\"");
  Result<Namespace> many = decode_as<Namespace>(ns_json("\",\"labels\":{" + labels.substr(0, labels.size() - 1) + "}}}"));
  ASSERT_TRUE(many.has_value()) << many.error().message();
  EXPECT_EQ(many->metadata.labels.size(), 40u);

  // Paths through arrays and maps, spelled out only for the message.
  Result<ResourceSlice> slice = decode_as<ResourceSlice>(
      R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"s"},)"
      R"("spec":{"driver":"d","pool":{"name":"p"},"devices":[{"name":"a"},)"
      R"({"name":"b","attributes":{"gpu.example.com/model":{"string":7}}}]}})");
  ASSERT_FALSE(slice.has_value());
  EXPECT_EQ(slice.error().message(),
            "spec.devices[1].attributes.gpu.example.com/model.string: expected string, got number 7");

  // Unmodelled members of core kinds are kept as canonical JSON: keys sorted at
  // every level, Go's HTML-safe escapes, nothing else rewritten.
  Result<Pod> pod = decode_as<Pod>(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c",)"
      R"("zeta":1,"alpha":{"y":"<a&b>\"q\"\\","x":"\u2028 \u0001 \u00e9"},"image":"busybox"}]}})");
  ASSERT_TRUE(pod.has_value()) << pod.error().message();
  ASSERT_EQ(pod->spec.containers.size(), 1u);
  EXPECT_EQ(pod->spec.containers[0].image, "busybox");
  EXPECT_EQ(pod->spec.containers[0].extra.text,
            "{\"alpha\":{\"x\":\"\\u2028 \\u0001 \xc3\xa9\",\"y\":\"\\u003ca\\u0026b\\u003e\\\"q\\\"\\\\\"},"
            "\"zeta\":1}");
}

TEST(CodecTest, AnchorsAndHostileInput) {
  // Aliases expand to copies of the anchored node.
  Result<DeviceClass> c = decode_as<DeviceClass>(
      "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\n"
      "metadata: {name: a, labels: &l {x: yz}, annotations: *l}\n");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->metadata.annotations.at("x"), "yz");
  // None of these may crash; each yields an error or a value.
  const std::string inputs[] = {
      "", "---\n---\n", "{", "[[[[[[[[", "\xff\xfe: \xff", "key: .inf", "? [a]\n: b\n",
      "apiVersion: v1\nkind: Namespace\nmetadata: {name: \"\\x00\"}\n",
      std::string(2000, '[') + std::string(2000, ']'),
      "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nspec: {devices: [{name: g, "
      "capacity: {m: {value: 1e999999999999}}}]}\n",
  };
  for (const std::string& in : inputs) {
    std::vector<DecodedDocument> docs = decode_stream(in);
    for (const DecodedDocument& d : docs) {
      if (d.object.has_value()) {
        EXPECT_FALSE(std::string(kind_of(*d.object)).empty());
      }
    }
  }
  EXPECT_TRUE(decode_stream("").empty());
  EXPECT_TRUE(decode_stream("---\n---\n").empty());
}

}  // namespace
}  // namespace draplane::api
