#include "server/pki.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "common/hex.h"

namespace draplane::server {
namespace {

template <typename T, void (*F)(T*)>
struct Deleter {
  void operator()(T* p) const { F(p); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using CertPtr = std::unique_ptr<X509, Deleter<X509, X509_free>>;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status write_file(const std::string& path, const std::string& data, bool secret) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status(Code::kUnavailable, "cannot write " + path);
  out << data;
  out.close();
  if (!out) return Status(Code::kUnavailable, "cannot write " + path);
  if (secret) ::chmod(path.c_str(), 0600);
  return Status();
}

std::string pem_of_key(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

std::string pem_of_cert(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

bool add_ext(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return false;
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  return true;
}

CertPtr make_cert(EVP_PKEY* key, const std::string& cn, X509* issuer, EVP_PKEY* issuer_key, bool ca,
                  const std::string& san) {
  CertPtr cert(X509_new());
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof serial);
  serial[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 10L * 365 * 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509* iss = issuer ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(iss));
  if (ca) {
    add_ext(cert.get(), iss, NID_basic_constraints, "critical,CA:TRUE");
    add_ext(cert.get(), iss, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature");
    add_ext(cert.get(), iss, NID_subject_key_identifier, "hash");
  } else {
    add_ext(cert.get(), iss, NID_basic_constraints, "critical,CA:FALSE");
    add_ext(cert.get(), iss, NID_key_usage, "critical,digitalSignature,keyEncipherment");
    add_ext(cert.get(), iss, NID_ext_key_usage, "serverAuth");
    add_ext(cert.get(), iss, NID_subject_alt_name, san);
  }
  if (X509_sign(cert.get(), issuer_key ? issuer_key : key, EVP_sha256()) == 0) return nullptr;
  return cert;
}

bool is_ip(const std::string& h) {
  return !h.empty() && (h.find_first_not_of("0123456789.") == std::string::npos || h.find(':') != std::string::npos);
}

}  // namespace

std::string random_hex(size_t n) {
  std::string bytes(n, '\0');
  RAND_bytes(reinterpret_cast<unsigned char*>(bytes.data()), static_cast<int>(n));
  return common::hex_encode(bytes);
}

Result<PkiFiles> ensure_pki(const std::string& dir, const std::vector<std::string>& hosts) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status(Code::kUnavailable, "cannot create " + dir + ": " + ec.message());
  PkiFiles f{dir + "/ca.crt", dir + "/server.crt", dir + "/server.key", ""};
  if (std::filesystem::exists(f.ca_cert) && std::filesystem::exists(f.server_cert) &&
      std::filesystem::exists(f.server_key)) {
    f.ca_pem = read_file(f.ca_cert);
    return f;
  }
  KeyPtr ca_key(EVP_EC_gen("P-256"));
  KeyPtr srv_key(EVP_EC_gen("P-256"));
  if (!ca_key || !srv_key) return Status(Code::kInternal, "openssl: key generation failed");
  CertPtr ca = make_cert(ca_key.get(), "draplane-ca", nullptr, nullptr, true, "");
  std::string san = "DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,IP:127.0.0.1";
  for (const auto& h : hosts) {
    if (h.empty() || h == "127.0.0.1" || h == "localhost") continue;
    san += (is_ip(h) ? ",IP:" : ",DNS:") + h;
  }
  if (!ca) return Status(Code::kInternal, "openssl: CA certificate failed");
  CertPtr srv = make_cert(srv_key.get(), "draplane-apiserver", ca.get(), ca_key.get(), false, san);
  if (!srv) return Status(Code::kInternal, "openssl: serving certificate failed");
  f.ca_pem = pem_of_cert(ca.get());
  for (auto [path, data, secret] : {std::tuple{f.ca_cert, f.ca_pem, false},
                                    std::tuple{dir + "/ca.key", pem_of_key(ca_key.get()), true},
                                    std::tuple{f.server_key, pem_of_key(srv_key.get()), true},
                                    std::tuple{f.server_cert, pem_of_cert(srv.get()), false}}) {
    if (Status st = write_file(path, data, secret); !st.ok()) return st;
  }
  return f;
}

}  // namespace draplane::server
