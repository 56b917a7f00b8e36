// SHA-1 and MD5 from OpenSSL (the copy inside Node for the addon; the system libcrypto for the standalone
// core build). Used by the compatibility profiles: datasketch (SHA-1) and seomoz simhash (MD5).
#pragma once
#include <cstddef>
#include <cstdint>

namespace neardup {

void Sha1(const void* data, size_t len, uint8_t out[20]);
void Md5(const void* data, size_t len, uint8_t out[16]);

// First 4 bytes of SHA-1 read as little-endian u32 (datasketch's sha1_hash32).
uint32_t Sha1Le32(const void* data, size_t len);
// First 8 bytes of MD5 read as big-endian u64 (seomoz simhash's unsigned_hash).
uint64_t Md5Be64(const void* data, size_t len);

}  // namespace neardup
