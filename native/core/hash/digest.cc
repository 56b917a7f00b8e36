#define OPENSSL_SUPPRESS_DEPRECATED 1
#include "hash/digest.h"

#include <openssl/md5.h>
#include <openssl/sha.h>

namespace neardup {

// The low-level SHA_CTX/MD5_CTX calls, not the one-shot SHA1()/MD5(): in OpenSSL 3 the one-shot functions
// go through EVP and fetch the algorithm on every call (about 400 ns for a short shingle, against 65 ns).
void Sha1(const void* data, size_t len, uint8_t out[20]) {
  SHA_CTX c;
  SHA1_Init(&c);
  SHA1_Update(&c, data, len);
  SHA1_Final(out, &c);
}

void Md5(const void* data, size_t len, uint8_t out[16]) {
  MD5_CTX c;
  MD5_Init(&c);
  MD5_Update(&c, data, len);
  MD5_Final(out, &c);
}

uint32_t Sha1Le32(const void* data, size_t len) {
  uint8_t d[20];
  Sha1(data, len, d);
  return uint32_t(d[0]) | (uint32_t(d[1]) << 8) | (uint32_t(d[2]) << 16) | (uint32_t(d[3]) << 24);
}

uint64_t Md5Be64(const void* data, size_t len) {
  uint8_t d[16];
  Md5(data, len, d);
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = (v << 8) | d[i];
  return v;
}

}  // namespace neardup
