// core/v1 ConfigMap, Secret, ServiceAccount, Service and PersistentVolumeClaim:
// validation (create and update) with upstream's paths and messages, defaults
// (a Secret's stringData merged into data) and a decode of a manifest.
#include <gtest/gtest.h>

#include "api/codec.h"
#include "api/defaults.h"
#include "api/validation.h"
#include "field_error_lines.h"

namespace draplane::api {
namespace {

ConfigMap config_map() {
  ConfigMap c;
  c.metadata.name = "settings";
  c.metadata.namespace_ = "default";
  c.data = {{"app.conf", "x=1"}};
  c.binaryData = {{"blob", "aGk="}};
  return c;
}

TEST(ValidateConfigMap, Keys) {
  EXPECT_EQ(lines(validate_config_map(config_map())), Lines{});
  ConfigMap c = config_map();
  c.data["bad key"] = "";
  c.data[".."] = "";
  c.data["blob"] = "";
  c.binaryData["x"] = "not base64!";
  EXPECT_EQ(lines(validate_config_map(c)),
            (Lines{"data[..]: Invalid value: \"..\": must not be '..'",
                   "data[bad key]: Invalid value: \"bad key\": a valid config key must consist of alphanumeric "
                   "characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for "
                   "validation is '[-._a-zA-Z0-9]+')",
                   "data[blob]: Invalid value: \"blob\": duplicate of key present in binaryData",
                   "binaryData[x]: Invalid value: illegal base64 data at input byte 3"}));
}

TEST(ValidateConfigMap, ImmutableOnceSet) {
  ConfigMap old = config_map();
  old.immutable = true;
  old.metadata.resourceVersion = "5";
  ConfigMap next = old;
  EXPECT_EQ(lines(validate_config_map_update(next, old)), Lines{});
  next.immutable = false;
  next.data["app.conf"] = "x=2";
  EXPECT_EQ(lines(validate_config_map_update(next, old)),
            (Lines{"immutable: Forbidden: field is immutable when `immutable` is set",
                   "data: Forbidden: field is immutable when `immutable` is set"}));
  // Not immutable: data changes.
  old.immutable.reset();
  EXPECT_EQ(lines(validate_config_map_update(next, old)), Lines{});
}

Secret secret() {
  Secret s;
  s.metadata.name = "creds";
  s.metadata.namespace_ = "default";
  s.data = {{"token", "c2VjcmV0"}};
  return s;
}

TEST(Secret, StringDataMergedIntoDataByDefaulting) {
  Object o = secret();
  std::get<Secret>(o).stringData = {{"user", "admin"}, {"token", "new"}};
  apply_defaults(o);
  const Secret& s = std::get<Secret>(o);
  EXPECT_EQ(s.type, "Opaque");
  EXPECT_TRUE(s.stringData.empty());
  EXPECT_EQ(s.data, (std::map<std::string, std::string>{{"token", "bmV3"}, {"user", "YWRtaW4="}}));
}

TEST(ValidateSecret, TypeKeysAndImmutability) {
  Secret s = secret();
  s.type = "kubernetes.io/tls";
  EXPECT_EQ(lines(validate_secret(s)), (Lines{"data[tls.crt]: Required value", "data[tls.key]: Required value"}));
  s.type = "kubernetes.io/service-account-token";
  EXPECT_EQ(lines(validate_secret(s)),
            (Lines{"metadata.annotations[kubernetes.io/service-account.name]: Required value"}));

  Secret old = secret();
  old.type = "Opaque";
  old.immutable = true;
  old.metadata.resourceVersion = "3";
  Secret next = old;
  next.type = "kubernetes.io/basic-auth";
  next.data["username"] = "YQ==";
  EXPECT_EQ(lines(validate_secret_update(next, old)),
            (Lines{"type: Invalid value: \"kubernetes.io/basic-auth\": field is immutable",
                   "data: Forbidden: field is immutable when `immutable` is set"}));
}

Service service() {
  Service s;
  s.metadata.name = "web";
  s.metadata.namespace_ = "default";
  s.spec.selector = {{"app", "web"}};
  s.spec.ports = {ServicePort{"", "", std::nullopt, 80, RawJson{}, 0}};
  return s;
}

TEST(Service, DefaultsAndValidation) {
  Object o = service();
  apply_defaults(o);
  const Service& d = std::get<Service>(o);
  EXPECT_EQ(d.spec.type, "ClusterIP");
  EXPECT_EQ(d.spec.sessionAffinity, "None");
  EXPECT_EQ(d.spec.ports[0].protocol, "TCP");
  EXPECT_EQ(d.spec.ports[0].targetPort.text, "80");
  EXPECT_EQ(lines(validate_service(d)), Lines{});

  Service s = d;
  s.metadata.name = "1web";
  s.spec.type = "Mesh";
  s.spec.ports.push_back(ServicePort{"b", "HTTP", std::nullopt, 70000, RawJson{"8080"}, 0});
  EXPECT_EQ(lines(validate_service(s)),
            (Lines{"metadata.name: Invalid value: \"1web\": a DNS-1035 label must consist of lower case "
                   "alphanumeric characters or '-', start with an alphabetic character, and end with an "
                   "alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
                   "'[a-z]([-a-z0-9]*[a-z0-9])?')",
                   "spec.type: Unsupported value: \"Mesh\": supported values: \"ClusterIP\", \"ExternalName\", "
                   "\"LoadBalancer\", \"NodePort\"",
                   "spec.ports[0].name: Required value",
                   "spec.ports[1].port: Invalid value: 70000: must be between 1 and 65535, inclusive",
                   "spec.ports[1].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", "
                   "\"UDP\""}));

  Service headless = d;
  headless.spec.ports.clear();
  EXPECT_EQ(lines(validate_service(headless)), Lines{"spec.ports: Required value"});
  headless.spec.clusterIP = "None";
  EXPECT_EQ(lines(validate_service(headless)), Lines{});
}

TEST(PersistentVolumeClaim, DefaultsValidationAndUpdate) {
  PersistentVolumeClaim c;
  c.metadata.name = "data";
  c.metadata.namespace_ = "default";
  EXPECT_EQ(lines(validate_persistent_volume_claim(c)),
            (Lines{"spec.accessModes: Required value: at least 1 access mode is required",
                   "spec.resources[storage]: Required value"}));
  c.spec.accessModes = {"ReadWriteOnce"};
  c.spec.resources.requests.emplace("storage", Quantity::parse("1Gi").value());
  Object o = c;
  apply_defaults(o);
  const auto& d = std::get<PersistentVolumeClaim>(o);
  EXPECT_EQ(d.spec.volumeMode, "Filesystem");
  EXPECT_EQ(d.status.phase, "Pending");
  EXPECT_EQ(lines(validate_persistent_volume_claim(d)), Lines{});

  PersistentVolumeClaim old = d;
  old.metadata.resourceVersion = "1";
  PersistentVolumeClaim next = old;
  next.spec.resources.requests.insert_or_assign("storage", Quantity::parse("2Gi").value());
  EXPECT_EQ(lines(validate_persistent_volume_claim_update(next, old)), Lines{});
  next.spec.accessModes = {"ReadWriteMany"};
  EXPECT_EQ(lines(validate_persistent_volume_claim_update(next, old)),
            (Lines{"spec: Forbidden: spec is immutable after creation except resources.requests and "
                   "volumeAttributesClassName for bound claims"}));
}

TEST(ConfigKinds, DecodeKeepsUnmodelledServiceFields) {
  std::vector<DecodedDocument> docs = decode_stream(R"(apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: http}]
  externalIPs: [10.0.0.9]
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: runner, namespace: default}
automountServiceAccountToken: false
)");
  ASSERT_EQ(docs.size(), 2u);
  ASSERT_TRUE(docs[0].object.has_value()) << docs[0].object.error().message();
  ASSERT_TRUE(docs[1].object.has_value()) << docs[1].object.error().message();
  const Service& s = std::get<Service>(*docs[0].object);
  EXPECT_EQ(s.spec.ports[0].targetPort.text, "\"http\"");
  EXPECT_EQ(s.spec.extra.text, R"({"externalIPs":["10.0.0.9"]})");
  EXPECT_EQ(std::get<ServiceAccount>(*docs[1].object).automountServiceAccountToken, false);
}

}  // namespace
}  // namespace draplane::api
