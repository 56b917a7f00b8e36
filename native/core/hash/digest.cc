#define OPENSSL_SUPPRESS_DEPRECATED 1
#include "hash/digest.h"

#include <openssl/md5.h>
#include <openssl/sha.h>

namespace neardup {

void Sha1(const void* data, size_t len, uint8_t out[20]) {
  SHA1(static_cast<const unsigned char*>(data), len, out);
}

void Md5(const void* data, size_t len, uint8_t out[16]) {
  MD5(static_cast<const unsigned char*>(data), len, out);
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
