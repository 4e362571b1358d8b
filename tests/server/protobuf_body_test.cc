// Kubernetes protobuf request bodies: the envelope, a Namespace as client-go's
// generated code writes it (empty proto2 strings included), and the errors.
#include "server/protobuf_body.h"

#include <gtest/gtest.h>

#include "server/protobuf_wire.h"

namespace draplane::server {
namespace {

using pb::Writer;

Writer entry(const std::string& k, const std::string& v) { return std::move(Writer().bytes(1, k).bytes(2, v)); }

// The envelope around `raw` (an object's encoding) of apiVersion/kind.
std::string envelope(const std::string& api_version, const std::string& kind, const std::string& raw,
                     const std::string& encoding = "") {
  Writer unknown;
  unknown.message(1, std::move(Writer().bytes(1, api_version).bytes(2, kind)))
      .bytes(2, raw)
      .bytes(3, encoding)
      .bytes(4, "");
  return std::string("k8s\0", 4) + unknown.data();
}

// ObjectMeta as gogo-protobuf writes it: every proto2 scalar, empty or not.
Writer meta(const std::string& name) {
  Writer m;
  m.bytes(1, name).bytes(2, "").bytes(3, "").bytes(4, "").bytes(5, "").bytes(6, "").varint(7, 0);
  m.bytes(8, "");  // zero creationTimestamp: an empty Time
  return m;
}

TEST(ProtobufBody, NamespaceAsKubectlSendsIt) {
  Writer m = meta("foo");
  m.message(11, entry("team", "ml")).message(11, entry("tier", "gold")).message(12, entry("note", "x"));
  m.bytes(14, "example.com/keep");
  Writer ns;
  ns.message(1, m).message(2, Writer()).message(3, std::move(Writer().bytes(1, "")));
  auto body = decode_protobuf_body(envelope("v1", "Namespace", ns.data()));
  ASSERT_TRUE(body.has_value()) << body.error().message();
  EXPECT_TRUE(body->supported);
  EXPECT_EQ(body->kind, "Namespace");
  EXPECT_EQ(body->json,
            R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"foo","labels":{"team":"ml","tier":"gold"},)"
            R"("annotations":{"note":"x"},"finalizers":["example.com/keep"]}})");
}

TEST(ProtobufBody, MoreMetadataAndSpec) {
  Writer m;
  m.bytes(2, "gen-").bytes(6, "42").varint(7, 3);
  m.message(8, std::move(Writer().varint(1, 1767225600).varint(2, 0)));
  Writer ref;
  ref.bytes(1, "ConfigMap").bytes(3, "owner").bytes(4, "u-1").bytes(5, "v1").boolean(6, true);
  m.message(13, ref);
  Writer ns;
  ns.message(1, m).message(2, std::move(Writer().bytes(1, "kubernetes"))).message(3, std::move(Writer().bytes(1, "Active")));
  auto body = decode_protobuf_body(envelope("v1", "Namespace", ns.data()));
  ASSERT_TRUE(body.has_value()) << body.error().message();
  EXPECT_EQ(body->json,
            R"({"apiVersion":"v1","kind":"Namespace","metadata":{"generateName":"gen-","resourceVersion":"42",)"
            R"("generation":3,"creationTimestamp":"2026-01-01T00:00:00Z","ownerReferences":[{"kind":"ConfigMap",)"
            R"("name":"owner","uid":"u-1","apiVersion":"v1","controller":true}]},"spec":{"finalizers":["kubernetes"]},)"
            R"("status":{"phase":"Active"}})");
}

TEST(ProtobufBody, OtherKindsAreReadOnlyAsFarAsTheEnvelope) {
  auto body = decode_protobuf_body(envelope("scheduling.k8s.io/v1", "PriorityClass", "\x0a\x00"));
  ASSERT_TRUE(body.has_value()) << body.error().message();
  EXPECT_FALSE(body->supported);
  EXPECT_EQ(body->api_version, "scheduling.k8s.io/v1");
  EXPECT_EQ(body->kind, "PriorityClass");
  EXPECT_TRUE(body->json.empty());
}

TEST(ProtobufBody, Errors) {
  Writer bad_meta = meta("x");
  bad_meta.bytes(16, "?");
  Writer typed_wrong;
  typed_wrong.message(1, std::move(Writer().varint(1, 5)));  // metadata.name as a varint
  struct Case {
    const char* name;
    std::string body;
    const char* want;
  };
  const Case cases[] = {
      {"no magic", "{\"kind\":\"Namespace\"}",
       "protobuf: the body does not start with the Kubernetes protobuf magic \"k8s\\x00\""},
      {"truncated envelope", std::string("k8s\0\x0a\x05", 6),
       "protobuf: envelope: protobuf: field 1 at byte 0 is 5 bytes long but only 0 remain"},
      {"no kind", envelope("v1", "", ""), "protobuf: the envelope has no typeMeta.kind"},
      {"encoding", envelope("v1", "Namespace", "", "gzip"), "protobuf: contentEncoding \"gzip\" is not supported"},
      {"unread metadata field", envelope("v1", "Namespace", std::move(Writer().message(1, bad_meta)).data()),
       "protobuf: metadata field 16 is not read by draplane; send the object as JSON"},
      {"wrong wire type", envelope("v1", "Namespace", typed_wrong.data()),
       "protobuf: metadata.name (field 1) has the wrong wire type"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto body = decode_protobuf_body(c.body);
    ASSERT_FALSE(body.has_value());
    EXPECT_EQ(body.error().code(), Code::kBadRequest);
    EXPECT_EQ(body.error().message(), c.want);
  }
}

}  // namespace
}  // namespace draplane::server
