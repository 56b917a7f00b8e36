// neardup's internal 64-bit hash ("fast64"): a multiply-fold design (64x64->128-bit products folded by
// xor). Short keys (the common shingle, <= 16 bytes) cost two or three loads and two multiplications.
// Its exact definition is part of the file formats and of the shingle API, so it is specified in
// docs/FORMAT.md and re-implemented by the reference in test/reference/ (which the tests compare with).
// Not a cryptographic hash.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace neardup {
namespace fast64 {

constexpr uint64_t kP0 = 0x9e3779b97f4a7c15ull;  // 2^64 / golden ratio
constexpr uint64_t kP1 = 0xd6e8feb86659fd93ull;
constexpr uint64_t kP2 = 0xc2b2ae3d27d4eb4full;
constexpr uint64_t kP3 = 0x165667b19e3779f9ull;

inline uint64_t Fold(uint64_t a, uint64_t b) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  // One MUL. (With the __uint128_t form below, GCC 12 often sends both halves through a stack slot in
  // larger loops: a store and a reload per fold, measured 10-20 % of MinHash signing.)
  uint64_t lo, hi;
  __asm__("mulq %3" : "=a"(lo), "=d"(hi) : "%a"(a), "rm"(b) : "cc");
  return lo ^ hi;
#else
  __uint128_t r = static_cast<__uint128_t>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
#endif
}

inline uint64_t R64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}
inline uint64_t R32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap32(v);
#endif
  return v;
}

// Seed preparation; callers hashing many keys with one seed may call it once and use HashPrepared.
inline uint64_t PrepareSeed(uint64_t seed) { return Fold(seed ^ kP0, kP1) ^ seed; }

// Keys of at most 8 bytes: v = the key's bytes as a little-endian integer (zero-extended).
inline uint64_t HashSmall(uint64_t v, size_t len, uint64_t s) {
  return Fold(Fold(v ^ s ^ kP0, kP1 ^ len) ^ kP2, kP3);
}

// Loads the len (<= 8) bytes at p as a little-endian integer. `readable_end` bounds what may be read:
// when 8 bytes fit before it, one unaligned load and a mask; otherwise a byte copy.
inline uint64_t LoadSmall(const uint8_t* p, size_t len, const uint8_t* readable_end) {
  uint64_t v = 0;
  if (p + 8 <= readable_end) {
    v = R64(p);
    if (len < 8) v &= (uint64_t(1) << (8 * len)) - 1;
  } else {
    for (size_t i = 0; i < len; i++) v |= uint64_t(p[i]) << (8 * i);
  }
  return v;
}

inline uint64_t HashPrepared(const void* key, size_t len, uint64_t s) {
  const uint8_t* p = static_cast<const uint8_t*>(key);
  if (len <= 8) return HashSmall(LoadSmall(p, len, p + len), len, s);
  uint64_t a, b;
  if (len <= 16) {
    a = R64(p);
    b = R64(p + len - 8);
  } else {
    size_t i = len;
    if (i > 48) {
      uint64_t s1 = s, s2 = s;
      do {
        s = Fold(R64(p) ^ kP1, R64(p + 8) ^ s);
        s1 = Fold(R64(p + 16) ^ kP2, R64(p + 24) ^ s1);
        s2 = Fold(R64(p + 32) ^ kP3, R64(p + 40) ^ s2);
        p += 48;
        i -= 48;
      } while (i > 48);
      s ^= s1 ^ s2;
    }
    while (i > 16) {
      s = Fold(R64(p) ^ kP1, R64(p + 8) ^ s);
      p += 16;
      i -= 16;
    }
    a = R64(p + i - 16);
    b = R64(p + i - 8);
  }
  a ^= kP1;
  b ^= s;
  __uint128_t r = static_cast<__uint128_t>(a) * b;
  a = static_cast<uint64_t>(r);
  b = static_cast<uint64_t>(r >> 64);
  return Fold(a ^ kP0 ^ len, b ^ kP1);
}

inline uint64_t Hash(const void* key, size_t len, uint64_t seed = 0) {
  return HashPrepared(key, len, PrepareSeed(seed));
}

// A strong 64-bit finaliser (bijective), for combining integers.
inline uint64_t Mix64(uint64_t x) {
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ull;
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ull;
  x ^= x >> 32;
  return x;
}

}  // namespace fast64
}  // namespace neardup
