// PKI for the HTTPS endpoint: on first start, a self-signed CA (EC P-256, 10
// years) and a serving certificate signed by it, valid for localhost, 127.0.0.1
// and the advertise address, written as PEM files into <data-dir>/pki/. Later
// starts reuse the files, so kubeconfigs stay valid across restarts.
//
// Thread-safety: free functions; call once at startup.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace draplane::server {

struct PkiFiles {
  std::string ca_cert;      // path of ca.crt
  std::string server_cert;  // path of server.crt
  std::string server_key;   // path of server.key
  std::string ca_pem;       // contents of ca.crt
};

// Creates (if missing) and returns the PKI under `dir`. `hosts` are extra IPs or
// DNS names for the serving certificate. kUnavailable when files cannot be
// written; kInternal when OpenSSL fails.
Result<PkiFiles> ensure_pki(const std::string& dir, const std::vector<std::string>& hosts);

// Cryptographically random bytes as lowercase hex (2*n characters).
std::string random_hex(size_t n);

}  // namespace draplane::server
