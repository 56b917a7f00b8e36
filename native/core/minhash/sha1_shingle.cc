#include "minhash/sha1_shingle.h"

#include <cstring>

#include "hash/digest.h"
#include "util/cpu.h"

#if NEARDUP_X86_DISPATCH
#include <immintrin.h>
#endif

namespace neardup {
namespace minhash {

#if NEARDUP_X86_DISPATCH
namespace {

// Pads a key of at most 55 bytes into one 64-byte block (message, 0x80, zeros, bit length big-endian).
inline void Pad(const std::string_view& k, uint8_t* block) {
  std::memset(block, 0, 64);
  std::memcpy(block, k.data(), k.size());
  block[k.size()] = 0x80;
  const uint64_t bits = static_cast<uint64_t>(k.size()) * 8;
  block[62] = static_cast<uint8_t>(bits >> 8);
  block[63] = static_cast<uint8_t>(bits);
}

#define ND_SHA_TARGET __attribute__((target("sha,sse4.1,ssse3")))

// One SHA-1 compression of the initial state over two independent blocks; returns the first state word
// (h0) of each digest. Round group g covers rounds 4g..4g+3; the message schedule runs 3 groups ahead.
ND_SHA_TARGET inline void Compress2(const uint8_t* b0, const uint8_t* b1, uint32_t* h0a, uint32_t* h0b) {
  const __m128i mask = _mm_set_epi64x(0x0001020304050607LL, 0x08090a0b0c0d0e0fLL);
  const __m128i abcd_init = _mm_set_epi32(0x67452301, static_cast<int>(0xEFCDAB89), static_cast<int>(0x98BADCFE), 0x10325476);
  const __m128i e_init = _mm_set_epi32(static_cast<int>(0xC3D2E1F0), 0, 0, 0);
  __m128i A[2] = {abcd_init, abcd_init};
  __m128i E[2][2] = {{e_init, e_init}, {e_init, e_init}};
  __m128i M[2][4];
  const uint8_t* blocks[2] = {b0, b1};
  for (int s = 0; s < 2; s++)
    for (int j = 0; j < 4; j++)
      M[s][j] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blocks[s] + 16 * j)), mask);

#define ND_GROUP(g, F)                                                                              \
  for (int s = 0; s < 2; s++) {                                                                     \
    __m128i& cur = E[s][(g) & 1];                                                                   \
    if ((g) == 0)                                                                                   \
      cur = _mm_add_epi32(cur, M[s][0]);                                                            \
    else                                                                                            \
      cur = _mm_sha1nexte_epu32(cur, M[s][(g) & 3]);                                                \
    E[s][((g) + 1) & 1] = A[s];                                                                     \
    if ((g) >= 3 && (g) <= 18) M[s][((g) + 1) & 3] = _mm_sha1msg2_epu32(M[s][((g) + 1) & 3], M[s][(g) & 3]); \
    A[s] = _mm_sha1rnds4_epu32(A[s], cur, F);                                                       \
    if ((g) >= 1 && (g) <= 16) M[s][((g) + 3) & 3] = _mm_sha1msg1_epu32(M[s][((g) + 3) & 3], M[s][(g) & 3]); \
    if ((g) >= 2 && (g) <= 17) M[s][((g) + 2) & 3] = _mm_xor_si128(M[s][((g) + 2) & 3], M[s][(g) & 3]); \
  }
  ND_GROUP(0, 0) ND_GROUP(1, 0) ND_GROUP(2, 0) ND_GROUP(3, 0) ND_GROUP(4, 0)
  ND_GROUP(5, 1) ND_GROUP(6, 1) ND_GROUP(7, 1) ND_GROUP(8, 1) ND_GROUP(9, 1)
  ND_GROUP(10, 2) ND_GROUP(11, 2) ND_GROUP(12, 2) ND_GROUP(13, 2) ND_GROUP(14, 2)
  ND_GROUP(15, 3) ND_GROUP(16, 3) ND_GROUP(17, 3) ND_GROUP(18, 3) ND_GROUP(19, 3)
#undef ND_GROUP
  // h0 = A + initial A: lane 3 of the ABCD register.
  *h0a = static_cast<uint32_t>(_mm_extract_epi32(A[0], 3)) + 0x67452301u;
  *h0b = static_cast<uint32_t>(_mm_extract_epi32(A[1], 3)) + 0x67452301u;
}

ND_SHA_TARGET void ManyShaNi(const std::string_view* keys, size_t n, uint32_t* out) {
  alignas(64) uint8_t blk[2][64];
  size_t pending = 0, slot[2] = {0, 0};
  for (size_t i = 0; i < n; i++) {
    if (keys[i].size() > 55) {
      out[i] = Sha1Le32(keys[i].data(), keys[i].size());
      continue;
    }
    Pad(keys[i], blk[pending]);
    slot[pending++] = i;
    if (pending == 2) {
      uint32_t a, b;
      Compress2(blk[0], blk[1], &a, &b);
      out[slot[0]] = __builtin_bswap32(a);
      out[slot[1]] = __builtin_bswap32(b);
      pending = 0;
    }
  }
  if (pending == 1) {
    uint32_t a, b;
    Compress2(blk[0], blk[0], &a, &b);
    out[slot[0]] = __builtin_bswap32(a);
  }
}

#undef ND_SHA_TARGET

}  // namespace
#endif

bool HasShaNi() {
#if NEARDUP_X86_DISPATCH
  static const bool has = Cpu().avx2 && __builtin_cpu_supports("sha");
  return has;
#else
  return false;
#endif
}

void Sha1Le32Many(const std::string_view* keys, size_t n, uint32_t* out) {
#if NEARDUP_X86_DISPATCH
  if (HasShaNi()) return ManyShaNi(keys, n, out);
#endif
  for (size_t i = 0; i < n; i++) out[i] = Sha1Le32(keys[i].data(), keys[i].size());
}

}  // namespace minhash
}  // namespace neardup
