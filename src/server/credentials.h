// Bearer tokens and the generated kubeconfig.
//
// <data-dir>/tokens.csv holds one token per line in kube-apiserver's static token
// file format (token,user,uid,"groups"): the admin token (group system:masters)
// and one token per node agent (user system:node:<name>, group system:nodes).
// Tokens are created on first start and kept; a node named later gets a new line.
// <data-dir>/kubeconfig has the cluster (server URL + CA), one user per token and
// one context per user; the current context is the admin's.
//
// Thread-safety: TokenTable is immutable after loading; free functions are for startup.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/result.h"
#include "server/api_server.h"

namespace draplane::server {

class TokenTable {
 public:
  // The identity of `token`, or nullptr.
  const Identity* find(const std::string& token) const;
  const std::string& admin_token() const { return admin_token_; }
  const std::map<std::string, Identity>& all() const { return tokens_; }

  // Loads <dir>/tokens.csv, adding an admin token and tokens for `nodes` that
  // are missing, and writes the file back (mode 0600).
  static Result<TokenTable> ensure(const std::string& dir, const std::vector<std::string>& nodes);
  // The same for a token file named explicitly (kube-apiserver's --token-auth-file).
  static Result<TokenTable> ensure_file(const std::string& path, const std::vector<std::string>& nodes);

 private:
  std::map<std::string, Identity> tokens_;
  std::string admin_token_;
};

// Writes <dir>/kubeconfig for `server_url` (https://host:port); returns its path.
Result<std::string> write_kubeconfig(const std::string& dir, const std::string& server_url, const std::string& ca_pem,
                                     const TokenTable& tokens);

}  // namespace draplane::server
