#include "server/object_ids.h"

#include <openssl/rand.h>

#include <cstdint>
#include <random>

namespace draplane::server {
namespace {

std::mt19937_64& generator() {
  thread_local std::mt19937_64 gen = [] {
    uint32_t seed[8] = {};
    if (RAND_bytes(reinterpret_cast<unsigned char*>(seed), sizeof(seed)) != 1) {
      std::random_device rd;  // OpenSSL without entropy: the OS source directly
      for (uint32_t& s : seed) s = rd();
    }
    std::seed_seq seq(std::begin(seed), std::end(seed));
    return std::mt19937_64(seq);
  }();
  return gen;
}

}  // namespace

std::string new_object_uid() {
  static const char* kHex = "0123456789abcdef";
  uint64_t hi = generator()();
  uint64_t lo = generator()();
  hi = (hi & ~uint64_t{0xF000}) | uint64_t{0x4000};                  // version 4
  lo = (lo & ~(uint64_t{3} << 62)) | (uint64_t{2} << 62);            // variant 10xx
  std::string out(36, '-');
  size_t pos = 0;
  auto put = [&](uint64_t v, int nibbles) {
    for (int i = nibbles - 1; i >= 0; --i) {
      if (pos == 8 || pos == 13 || pos == 18 || pos == 23) ++pos;
      out[pos++] = kHex[(v >> (4 * i)) & 15];
    }
  };
  put(hi, 16);
  put(lo, 16);
  return out;
}

std::string new_name_suffix() {
  static const char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";  // as k8s utilrand.String
  std::uniform_int_distribution<int> pick(0, 26);
  std::string out(5, ' ');
  for (char& c : out) c = kAlphabet[pick(generator())];
  return out;
}

}  // namespace draplane::server
