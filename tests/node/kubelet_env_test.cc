#include "node/kubelet_env.h"

#include <gtest/gtest.h>

#include "api/codec.h"

namespace draplane::node {
namespace {

api::Pod pod_with(const std::string& container_json) {
  auto pod = api::decode_as<api::Pod>(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns",
    "uid":"u1","labels":{"app":"a"},"annotations":{"batch.kubernetes.io/job-completion-index":"3"}},
    "spec":{"nodeName":"n1","hostname":"h-3","containers":[)" + container_json + R"(]},"status":{"podIP":"10.0.0.5"}})");
  EXPECT_TRUE(pod.has_value()) << (pod.has_value() ? "" : pod.error().to_string());
  return pod.has_value() ? *pod : api::Pod{};
}

EnvSources sources() {
  EnvSources s;
  s.config_map = [](const std::string& name) -> Result<std::optional<api::ConfigMap>> {
    if (name != "cfg") return std::optional<api::ConfigMap>();
    api::ConfigMap cm;
    cm.data = {{"MODE", "fast"}, {"LEVEL", "3"}};
    return std::optional<api::ConfigMap>(cm);
  };
  s.secret = [](const std::string& name) -> Result<std::optional<api::Secret>> {
    if (name != "sec") return std::optional<api::Secret>();
    api::Secret sec;
    sec.data = {{"TOKEN", "czNjcjN0"}};  // "s3cr3t"
    return std::optional<api::Secret>(sec);
  };
  return s;
}

TEST(KubeletEnv, ResolvesEnvFromValueFromAndFieldRefs) {
  api::Pod pod = pod_with(R"({"name":"c","image":"busybox",
    "envFrom":[{"configMapRef":{"name":"cfg"},"prefix":"CFG_"},{"secretRef":{"name":"sec"}}],
    "env":[{"name":"LEVEL","value":"plain"},
           {"name":"MODE","valueFrom":{"configMapKeyRef":{"name":"cfg","key":"MODE"}}},
           {"name":"PASS","valueFrom":{"secretKeyRef":{"name":"sec","key":"TOKEN"}}},
           {"name":"IDX","valueFrom":{"fieldRef":{"fieldPath":"metadata.annotations['batch.kubernetes.io/job-completion-index']"}}},
           {"name":"APP","valueFrom":{"fieldRef":{"fieldPath":"metadata.labels['app']"}}},
           {"name":"NODE","valueFrom":{"fieldRef":{"fieldPath":"spec.nodeName"}}},
           {"name":"NAME","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}},
           {"name":"NS","valueFrom":{"fieldRef":{"fieldPath":"metadata.namespace"}}},
           {"name":"IP","valueFrom":{"fieldRef":{"fieldPath":"status.podIP"}}},
           {"name":"OPT","valueFrom":{"configMapKeyRef":{"name":"missing","key":"x","optional":true}}},
           {"name":"CFG_MODE","value":"override"}]})");
  auto env = resolve_container_env(pod, pod.spec.containers[0], sources());
  ASSERT_TRUE(env.has_value()) << env.error().to_string();
  EXPECT_EQ(*env, (std::vector<std::string>{"CFG_LEVEL=3", "CFG_MODE=override", "TOKEN=s3cr3t", "LEVEL=plain",
                                            "MODE=fast", "PASS=s3cr3t", "IDX=3", "APP=a", "NODE=n1", "NAME=p",
                                            "NS=ns", "IP=10.0.0.5"}));
  EXPECT_EQ(pod_hostname(pod), "h-3");
}

TEST(KubeletEnv, MissingRequiredReferenceIsACreateContainerConfigError) {
  struct Case {
    std::string container;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {R"({"name":"c","env":[{"name":"X","valueFrom":{"configMapKeyRef":{"name":"nope","key":"k"}}}]})",
            "configmap \"nope\" not found"},
           {R"({"name":"c","env":[{"name":"X","valueFrom":{"configMapKeyRef":{"name":"cfg","key":"k"}}}]})",
            "couldn't find key k in ConfigMap ns/cfg"},
           {R"({"name":"c","env":[{"name":"X","valueFrom":{"secretKeyRef":{"name":"sec","key":"k"}}}]})",
            "couldn't find key k in Secret ns/sec"},
           {R"({"name":"c","envFrom":[{"secretRef":{"name":"other"}}]})", "secret \"other\" not found"},
       }) {
    api::Pod pod = pod_with(c.container);
    auto env = resolve_container_env(pod, pod.spec.containers[0], sources());
    ASSERT_FALSE(env.has_value()) << c.container;
    EXPECT_EQ(env.error().code(), Code::kFailedPrecondition);
    EXPECT_EQ(env.error().message(), c.message);
  }
  api::Pod pod = pod_with(R"({"name":"c","envFrom":[{"secretRef":{"name":"other","optional":true}}],
    "env":[{"name":"X","valueFrom":{"secretKeyRef":{"name":"sec","key":"k","optional":true}}}]})");
  auto env = resolve_container_env(pod, pod.spec.containers[0], sources());
  ASSERT_TRUE(env.has_value());
  EXPECT_TRUE(env->empty());
}

}  // namespace
}  // namespace draplane::node
