#include "client/kubeconfig.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace draplane::client {
namespace {

constexpr const char* kConfig = R"(apiVersion: v1
kind: Config
clusters:
- name: c1
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: aGVsbG8=
- name: c2
  cluster:
    server: http://localhost:8080
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: secret-token
contexts:
- name: one
  context: {cluster: c1, user: admin, namespace: team-a}
- name: two
  context: {cluster: c2, user: admin}
current-context: one
)";

TEST(Kubeconfig, CurrentContext) {
  auto cfg = parse_kubeconfig(kConfig);
  ASSERT_TRUE(cfg.has_value()) << cfg.error().message();
  EXPECT_EQ(cfg->server, "https://127.0.0.1:6443");
  EXPECT_EQ(cfg->ca_pem, "hello");
  EXPECT_EQ(cfg->token, "secret-token");
  EXPECT_EQ(cfg->namespace_, "team-a");
  EXPECT_FALSE(cfg->insecure_skip_tls_verify);
}

TEST(Kubeconfig, NamedContext) {
  auto cfg = parse_kubeconfig(kConfig, "two");
  ASSERT_TRUE(cfg.has_value());
  EXPECT_EQ(cfg->server, "http://localhost:8080");
  EXPECT_TRUE(cfg->insecure_skip_tls_verify);
  EXPECT_EQ(cfg->ca_pem, "");
}

TEST(Kubeconfig, Errors) {
  struct Case {
    const char* yaml;
    const char* context;
    const char* want;
  } cases[] = {
      {kConfig, "three", "kubeconfig: context \"three\" not found"},
      {"current-context: x\ncontexts: []\n", "", "kubeconfig: context \"x\" not found"},
      {"kind: Config\n", "", "kubeconfig: no current-context and no context given"},
      {"- a\n", "", "kubeconfig: not a YAML mapping"},
      {"current-context: a\ncontexts: [{name: a, context: {cluster: nope}}]\n", "",
       "kubeconfig: cluster \"nope\" not found"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.want);
    auto cfg = parse_kubeconfig(c.yaml, c.context);
    ASSERT_FALSE(cfg.has_value());
    EXPECT_EQ(cfg.error().code(), Code::kInvalid);
    EXPECT_EQ(cfg.error().message(), c.want);
  }
}

TEST(Kubeconfig, RenderRoundTrip) {
  KubeConfig in;
  in.server = "https://10.0.0.1:6443";
  in.ca_pem = "-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n";
  in.token = "t0k";
  auto text = render_kubeconfig("draplane", in);
  auto out = parse_kubeconfig(text);
  ASSERT_TRUE(out.has_value()) << out.error().message() << "\n" << text;
  EXPECT_EQ(out->server, in.server);
  EXPECT_EQ(out->ca_pem, in.ca_pem);
  EXPECT_EQ(out->token, in.token);
}

TEST(Kubeconfig, MissingFile) {
  auto cfg = load_kubeconfig("/nonexistent/kubeconfig");
  ASSERT_FALSE(cfg.has_value());
  EXPECT_EQ(cfg.error().code(), Code::kNotFound);
}

// rest.InClusterConfig: the service's address from the environment, the
// service account's token (trailing newline dropped) and CA from its files.
TEST(Kubeconfig, InCluster) {
  const std::string root = ::testing::TempDir() + "/incluster-" + std::to_string(::getpid());
  const std::string dir = root + "/var/run/secrets/kubernetes.io/serviceaccount";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/token") << "tok-123\n";
  std::ofstream(dir + "/ca.crt") << "PEM";
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  EXPECT_EQ(in_cluster_config(root).error().code(), Code::kNotFound);
  ::setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  auto c = in_cluster_config(root);
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->server, "https://[fd00::1]:443");
  EXPECT_EQ(c->token, "tok-123");
  EXPECT_EQ(c->token_file, dir + "/token") << "read again as the kubelet rotates it";
  EXPECT_EQ(c->ca_pem, "PEM");
  ::setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
  EXPECT_EQ(in_cluster_config(root)->server, "https://10.0.0.1:443");
  std::filesystem::remove(dir + "/token");
  EXPECT_EQ(in_cluster_config(root).error().message(), "cannot read " + dir + "/token");
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  ::unsetenv("KUBERNETES_SERVICE_PORT");
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace draplane::client
