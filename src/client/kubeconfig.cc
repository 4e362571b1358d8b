#include "client/kubeconfig.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "common/base64.h"

namespace draplane::client {
namespace {

// Folded YAML may leave spaces in the data: they are skipped as line breaks are.
Result<std::string> base64_decode(std::string_view in, std::string_view what) {
  std::string clean;
  for (char c : in) {
    if (c != ' ') clean.push_back(c);
  }
  auto out = common::base64_decode(clean);
  if (!out.has_value()) return invalid_error("kubeconfig: " + std::string(what) + " is not valid base64");
  return out;
}

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string resolve(std::string_view base_dir, const std::string& path) {
  if (path.empty() || path[0] == '/' || base_dir.empty()) return path;
  return std::string(base_dir) + "/" + path;
}

// Finds entries[i] with .name == name and returns entries[i][field] (a map).
std::optional<YAML::Node> find_named(const YAML::Node& list, const std::string& name, const char* field) {
  if (!list || !list.IsSequence()) return std::nullopt;
  for (const auto& item : list) {
    if (item.IsMap() && item["name"] && item["name"].IsScalar() && item["name"].as<std::string>() == name &&
        item[field] && item[field].IsMap()) {
      return item[field];
    }
  }
  return std::nullopt;
}

std::string str(const YAML::Node& n, const char* key) {
  if (!n || !n[key] || !n[key].IsScalar()) return "";
  return n[key].as<std::string>();
}

Result<std::string> data_or_file(const YAML::Node& n, const char* data_key, const char* file_key,
                                 std::string_view base_dir) {
  std::string data = str(n, data_key);
  if (!data.empty()) return base64_decode(data, data_key);
  std::string file = str(n, file_key);
  if (!file.empty()) return read_file(resolve(base_dir, file));
  return std::string();
}

}  // namespace

Result<KubeConfig> parse_kubeconfig(std::string_view yaml, std::string_view context,
                                    std::string_view base_dir) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return invalid_error(std::string("kubeconfig: ") + e.what());
  }
  if (!root.IsMap()) return invalid_error("kubeconfig: not a YAML mapping");
  std::string ctx_name = context.empty() ? str(root, "current-context") : std::string(context);
  if (ctx_name.empty()) return invalid_error("kubeconfig: no current-context and no context given");
  auto found_ctx = find_named(root["contexts"], ctx_name, "context");
  if (!found_ctx) return invalid_error("kubeconfig: context \"" + ctx_name + "\" not found");
  const YAML::Node& ctx = *found_ctx;
  KubeConfig cfg;
  cfg.namespace_ = str(ctx, "namespace");
  std::string cluster_name = str(ctx, "cluster");
  auto found_cluster = find_named(root["clusters"], cluster_name, "cluster");
  if (!found_cluster) return invalid_error("kubeconfig: cluster \"" + cluster_name + "\" not found");
  const YAML::Node& cluster = *found_cluster;
  cfg.server = str(cluster, "server");
  if (cfg.server.empty()) return invalid_error("kubeconfig: cluster \"" + cluster_name + "\" has no server");
  cfg.insecure_skip_tls_verify = str(cluster, "insecure-skip-tls-verify") == "true";
  ASSIGN_OR_RETURN(cfg.ca_pem, data_or_file(cluster, "certificate-authority-data", "certificate-authority", base_dir));
  std::string user_name = str(ctx, "user");
  if (!user_name.empty()) {
    auto found_user = find_named(root["users"], user_name, "user");
    if (!found_user) return invalid_error("kubeconfig: user \"" + user_name + "\" not found");
    const YAML::Node& user = *found_user;
    cfg.token = str(user, "token");
    if (cfg.token.empty() && !str(user, "tokenFile").empty()) {
      cfg.token_file = resolve(base_dir, str(user, "tokenFile"));
      ASSIGN_OR_RETURN(std::string t, read_file(cfg.token_file));
      while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
      cfg.token = t;
    }
    ASSIGN_OR_RETURN(cfg.client_cert_pem, data_or_file(user, "client-certificate-data", "client-certificate", base_dir));
    ASSIGN_OR_RETURN(cfg.client_key_pem, data_or_file(user, "client-key-data", "client-key", base_dir));
  }
  return cfg;
}

Result<KubeConfig> in_cluster_config(std::string_view root) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || port == nullptr || *host == 0 || *port == 0) {
    return not_found_error(
        "in-cluster configuration: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined "
        "(not running in a pod? use --kubeconfig)");
  }
  const std::string dir = std::string(root) + "/var/run/secrets/kubernetes.io/serviceaccount";
  KubeConfig c;
  std::string h = host;
  if (h.find(':') != std::string::npos) h = "[" + h + "]";
  c.server = "https://" + h + ":" + port;
  c.token_file = dir + "/token";
  ASSIGN_OR_RETURN(c.token, read_file(c.token_file));
  while (!c.token.empty() && (c.token.back() == '\n' || c.token.back() == '\r')) c.token.pop_back();
  ASSIGN_OR_RETURN(c.ca_pem, read_file(dir + "/ca.crt"));
  auto ns = read_file(dir + "/namespace");
  if (ns.has_value()) c.namespace_ = *ns;
  return c;
}

Result<KubeConfig> load_kubeconfig(const std::string& path, std::string_view context) {
  ASSIGN_OR_RETURN(std::string text, read_file(path));
  std::string dir;
  auto slash = path.rfind('/');
  if (slash != std::string::npos) dir = path.substr(0, slash);
  return parse_kubeconfig(text, context, dir);
}

std::string render_kubeconfig(std::string_view name, const KubeConfig& c) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << "v1";
  out << YAML::Key << "kind" << YAML::Value << "Config";
  out << YAML::Key << "clusters" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << std::string(name);
  out << YAML::Key << "cluster" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "server" << YAML::Value << c.server;
  if (!c.ca_pem.empty()) out << YAML::Key << "certificate-authority-data" << YAML::Value << common::base64_encode(c.ca_pem);
  if (c.insecure_skip_tls_verify) out << YAML::Key << "insecure-skip-tls-verify" << YAML::Value << true;
  out << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  out << YAML::Key << "users" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << std::string(name);
  out << YAML::Key << "user" << YAML::Value << YAML::BeginMap;
  if (!c.token.empty()) out << YAML::Key << "token" << YAML::Value << c.token;
  if (!c.client_cert_pem.empty()) out << YAML::Key << "client-certificate-data" << YAML::Value << common::base64_encode(c.client_cert_pem);
  if (!c.client_key_pem.empty()) out << YAML::Key << "client-key-data" << YAML::Value << common::base64_encode(c.client_key_pem);
  out << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  out << YAML::Key << "contexts" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << std::string(name);
  out << YAML::Key << "context" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "cluster" << YAML::Value << std::string(name);
  out << YAML::Key << "user" << YAML::Value << std::string(name);
  if (!c.namespace_.empty()) out << YAML::Key << "namespace" << YAML::Value << c.namespace_;
  out << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  out << YAML::Key << "current-context" << YAML::Value << std::string(name);
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace draplane::client
