#include "server/credentials.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "common/base64.h"
#include "server/pki.h"

namespace draplane::server {
namespace {

Status write_secret(const std::string& path, const std::string& data) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return Status(Code::kUnavailable, "cannot write " + tmp);
    out << data;
    if (!out) return Status(Code::kUnavailable, "cannot write " + tmp);
  }
  ::chmod(tmp.c_str(), 0600);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return Status(Code::kUnavailable, "cannot rename " + tmp);
  return Status();
}

}  // namespace

const Identity* TokenTable::find(const std::string& token) const {
  auto it = tokens_.find(token);
  return it == tokens_.end() ? nullptr : &it->second;
}

Result<TokenTable> TokenTable::ensure(const std::string& dir, const std::vector<std::string>& nodes) {
  return ensure_file(dir + "/tokens.csv", nodes);
}

Result<TokenTable> TokenTable::ensure_file(const std::string& path, const std::vector<std::string>& nodes) {
  TokenTable t;
  std::ifstream in(path);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::stringstream ss(line);
    std::string token, user;
    std::getline(ss, token, ',');
    std::getline(ss, user, ',');
    if (token.empty() || user.empty()) continue;
    Identity id;
    id.user = user;
    id.admin = line.find("system:masters") != std::string::npos;
    if (user.rfind("system:node:", 0) == 0) id.node = user.substr(12);
    if (id.admin && t.admin_token_.empty()) t.admin_token_ = token;
    t.tokens_[token] = id;
    lines.push_back(line);
  }
  bool changed = false;
  if (t.admin_token_.empty()) {
    t.admin_token_ = random_hex(24);
    t.tokens_[t.admin_token_] = Identity{"admin", true, ""};
    lines.push_back(t.admin_token_ + ",admin,admin,\"system:masters\"");
    changed = true;
  }
  for (const auto& n : nodes) {
    bool have = false;
    for (const auto& [tok, id] : t.tokens_) have = have || id.node == n;
    if (have) continue;
    std::string tok = random_hex(24);
    std::string user = "system:node:" + n;
    t.tokens_[tok] = Identity{user, false, n};
    lines.push_back(tok + "," + user + "," + user + ",\"system:nodes\"");
    changed = true;
  }
  if (changed) {
    std::string out;
    for (const auto& l : lines) out += l + "\n";
    if (Status st = write_secret(path, out); !st.ok()) return st;
  }
  return t;
}

Result<std::string> write_kubeconfig(const std::string& dir, const std::string& server_url, const std::string& ca_pem,
                                     const TokenTable& tokens) {
  std::string users, contexts;
  auto add = [&](const std::string& name, const std::string& token) {
    users += "- name: " + name + "\n  user:\n    token: " + token + "\n";
    contexts += "- name: " + name + "\n  context:\n    cluster: draplane\n    user: " + name + "\n";
  };
  add("admin", tokens.admin_token());
  for (const auto& [tok, id] : tokens.all()) {
    if (!id.node.empty()) add("node-" + id.node, tok);
  }
  std::string cfg = "apiVersion: v1\nkind: Config\nclusters:\n- name: draplane\n  cluster:\n    server: " + server_url +
                    "\n    certificate-authority-data: " + common::base64_encode(ca_pem) + "\nusers:\n" + users + "contexts:\n" +
                    contexts + "current-context: admin\npreferences: {}\n";
  std::string path = dir + "/kubeconfig";
  if (Status st = write_secret(path, cfg); !st.ok()) return st;
  return path;
}

}  // namespace draplane::server
