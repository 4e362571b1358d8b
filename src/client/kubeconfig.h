// Kubeconfig: where a Kubernetes API server is and how to authenticate to it.
//
// Reads the subset of the kubeconfig format (clientcmd v1) that draplane's
// components and kubectl share: clusters[].cluster{server, certificate-authority,
// certificate-authority-data, insecure-skip-tls-verify}, users[].user{token,
// tokenFile, client-certificate(-data), client-key(-data)}, contexts[], and
// current-context. Plain values; no shared state.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace draplane::client {

struct KubeConfig {
  std::string server;              // https://127.0.0.1:6443
  std::string ca_pem;              // PEM of the CA that signs the server's certificate
  bool insecure_skip_tls_verify = false;
  std::string token;               // bearer token
  // Where `token` was read from (kubeconfig tokenFile, the in-cluster service
  // account token): the client reads it again at most once a minute, as
  // client-go does, since the kubelet rotates projected tokens (hourly).
  std::string token_file;
  std::string client_cert_pem;     // client certificate auth (optional)
  std::string client_key_pem;
  std::string namespace_;          // context namespace, "" = default
};

// Parses kubeconfig YAML. `context` "" selects current-context. Relative file
// references (certificate-authority, tokenFile, ...) resolve against `base_dir`.
// Errors (kInvalid) name the missing or malformed entry, e.g.
// "kubeconfig: context \"foo\" not found".
Result<KubeConfig> parse_kubeconfig(std::string_view yaml, std::string_view context = "",
                                    std::string_view base_dir = "");

// Reads and parses a kubeconfig file (kNotFound when the file does not exist).
Result<KubeConfig> load_kubeconfig(const std::string& path, std::string_view context = "");

// The configuration of a process running in a pod, as client-go's
// rest.InClusterConfig: server https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT
// (an IPv6 host in brackets), the service account's token and ca.crt under
// <root>/var/run/secrets/kubernetes.io/serviceaccount (`root` "" in production).
// Errors: kNotFound when the environment or the token is missing.
Result<KubeConfig> in_cluster_config(std::string_view root = "");

// Renders a kubeconfig with one cluster, user and context named `name`.
std::string render_kubeconfig(std::string_view name, const KubeConfig& config);

}  // namespace draplane::client
