#include "hash/murmur3.h"

#include <cstring>

namespace neardup {
namespace {

inline uint32_t Rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }
inline uint64_t Rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

inline uint32_t Load32(const uint8_t* p) {
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
}
inline uint64_t Load64(const uint8_t* p) {
  return uint64_t(Load32(p)) | (uint64_t(Load32(p + 4)) << 32);
}

inline uint32_t Fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}
inline uint64_t Fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return k;
}

constexpr uint32_t kC1 = 0xcc9e2d51u;
constexpr uint32_t kC2 = 0x1b873593u;

inline uint32_t MixK32(uint32_t k) {
  k *= kC1;
  k = Rotl32(k, 15);
  return k * kC2;
}

inline uint32_t TailK32(const uint8_t* tail, size_t rem) {
  uint32_t k = 0;
  switch (rem) {
    case 3: k ^= uint32_t(tail[2]) << 16; [[fallthrough]];
    case 2: k ^= uint32_t(tail[1]) << 8; [[fallthrough]];
    case 1: k ^= tail[0]; return MixK32(k);
    default: return 0;
  }
}

}  // namespace

uint32_t Murmur3_x86_32(const void* key, size_t len, uint32_t seed) {
  const uint8_t* p = static_cast<const uint8_t*>(key);
  const size_t nblocks = len / 4;
  uint32_t h = seed;
  for (size_t i = 0; i < nblocks; i++) {
    h ^= MixK32(Load32(p + 4 * i));
    h = Rotl32(h, 13);
    h = h * 5 + 0xe6546b64u;
  }
  h ^= TailK32(p + 4 * nblocks, len & 3);
  h ^= static_cast<uint32_t>(len);
  return Fmix32(h);
}

void Murmur3_x64_128(const void* key, size_t len, uint32_t seed, uint64_t out[2]) {
  const uint8_t* p = static_cast<const uint8_t*>(key);
  const size_t nblocks = len / 16;
  uint64_t h1 = seed, h2 = seed;
  const uint64_t c1 = 0x87c37b91114253d5ull, c2 = 0x4cf5ad432745937full;
  for (size_t i = 0; i < nblocks; i++) {
    uint64_t k1 = Load64(p + 16 * i), k2 = Load64(p + 16 * i + 8);
    k1 *= c1; k1 = Rotl64(k1, 31); k1 *= c2; h1 ^= k1;
    h1 = Rotl64(h1, 27); h1 += h2; h1 = h1 * 5 + 0x52dce729;
    k2 *= c2; k2 = Rotl64(k2, 33); k2 *= c1; h2 ^= k2;
    h2 = Rotl64(h2, 31); h2 += h1; h2 = h2 * 5 + 0x38495ab5;
  }
  const uint8_t* tail = p + 16 * nblocks;
  const size_t rem = len & 15;
  uint64_t k1 = 0, k2 = 0;
  for (size_t i = rem; i > 8; i--) k2 ^= uint64_t(tail[i - 1]) << (8 * (i - 9));
  if (rem > 8) { k2 *= c2; k2 = Rotl64(k2, 33); k2 *= c1; h2 ^= k2; }
  for (size_t i = rem < 8 ? rem : 8; i > 0; i--) k1 ^= uint64_t(tail[i - 1]) << (8 * (i - 1));
  if (rem > 0) { k1 *= c1; k1 = Rotl64(k1, 31); k1 *= c2; h1 ^= k1; }
  h1 ^= len; h2 ^= len;
  h1 += h2; h2 += h1;
  h1 = Fmix64(h1); h2 = Fmix64(h2);
  h1 += h2; h2 += h1;
  out[0] = h1;
  out[1] = h2;
}

}  // namespace neardup
