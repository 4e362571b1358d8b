// Object UIDs and generateName suffixes, as the API server makes them.
//
// Neither is a secret (Kubernetes uses them as identities, not credentials), so
// they come from a per-thread generator seeded once from OpenSSL's RNG instead
// of a RAND_bytes call per object: the DRBG's locking and reseed checks were 2%
// of a create under load. Tokens and keys keep using random_hex (pki.h).
//
// Thread-safety: safe from any thread (the generator state is thread-local).
#pragma once

#include <string>

namespace draplane::server {

// A random RFC 4122 version 4 UUID, lowercase, 8-4-4-4-12.
std::string new_object_uid();

// Five characters from Kubernetes' utilrand alphabet (no vowels, no 0/1/3).
std::string new_name_suffix();

}  // namespace draplane::server
